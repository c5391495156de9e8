/**
 * Config of the `mattermost` channel: replies posted through a Mattermost
 * server's REST API (API v4) with a bot's or a user's access token.
 */
import { Type, type Static } from '@sinclair/typebox';

/**
 * Longest message per post: 4000 characters. Servers take up to 16,383
 * (`PostMessageMaxRunesV2`), but 4000 is what older servers and clients
 * handle well (Mattermost's own v1 limit).
 */
export const MATTERMOST_TEXT_LIMIT = 4000;

export const MattermostConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('mattermost')),
    url: Type.String({ minLength: 1, description: 'the server, e.g. https://chat.example.com (without /api/v4)' }),
    token: Type.String({ minLength: 1, description: "a bot account's access token or a personal access token; use ${ENV} or {file}" }),
    timeoutMs: Type.Integer({ default: 10_000, minimum: 1, maximum: 600_000 }),
    textChunkLimit: Type.Optional(
      Type.Integer({ minimum: 100, maximum: MATTERMOST_TEXT_LIMIT, description: `split replies into posts of at most this many characters (at most ${MATTERMOST_TEXT_LIMIT})` }),
    ),
  },
  { additionalProperties: false },
);

export type MattermostConfigValue = Static<typeof MattermostConfig>;
