/**
 * Config of the `discord` channel: replies posted by a bot to a channel
 * through Discord's HTTP API.
 */
import { DISCORD, Type, type Static } from 'hook-intake/plugin';

export const DiscordConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('discord')),
    botToken: Type.String({
      minLength: 1,
      description: "the bot's token (Developer Portal → the application → Bot); use ${ENV} or {file}",
    }),
    apiBaseUrl: Type.String({
      minLength: 1,
      default: 'https://discord.com/api/v10',
      description: 'base URL of the HTTP API, version included',
    }),
    timeoutMs: Type.Integer({ default: 10_000, minimum: 1, maximum: 600_000 }),
    textChunkLimit: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: DISCORD.limit,
        description: `split replies into messages of at most this many characters (at most ${DISCORD.limit})`,
      }),
    ),
  },
  { additionalProperties: false },
);

export type DiscordConfigValue = Static<typeof DiscordConfig>;
