/** Config of the `telegram` channel: a bot token and where the Bot API is. */
import { Type, type Static } from 'hook-intake/plugin';

export const TelegramConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('telegram')),
    botToken: Type.String({ minLength: 1, description: 'the token @BotFather gave the bot (123456:ABC…); use ${ENV} or {file}' }),
    apiBaseUrl: Type.String({ default: 'https://api.telegram.org', description: 'Bot API root, without /bot<token>' }),
    timeoutMs: Type.Integer({ default: 10_000, minimum: 1, maximum: 600_000, description: 'how long to wait for an answer' }),
    textChunkLimit: Type.Optional(
      Type.Integer({ minimum: 1, description: 'split replies into parts of at most this many UTF-16 units (at most 4096)' }),
    ),
  },
  { additionalProperties: false },
);

export type TelegramConfigValue = Static<typeof TelegramConfig>;
