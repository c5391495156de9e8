/**
 * Config of the `mattermost` channel: replies posted through a Mattermost
 * server's REST API (API v4) with a bot's or a user's access token.
 */
import { MATTERMOST, Type, type Static } from 'hook-intake/plugin';

export const MattermostConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('mattermost')),
    url: Type.String({ minLength: 1, description: 'the server, e.g. https://chat.example.com (without /api/v4)' }),
    token: Type.String({ minLength: 1, description: "a bot account's access token or a personal access token; use ${ENV} or {file}" }),
    timeoutMs: Type.Integer({ default: 10_000, minimum: 1, maximum: 600_000 }),
    textChunkLimit: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: MATTERMOST.limit,
        description: `split replies into posts of at most this many characters (at most ${MATTERMOST.limit})`,
      }),
    ),
  },
  { additionalProperties: false },
);

export type MattermostConfigValue = Static<typeof MattermostConfig>;
