/**
 * Config of the `slack` channel: replies posted by a Slack app's bot user
 * through the Web API.
 */
import { Type, type Static } from '@sinclair/typebox';

/**
 * Longest `text` per message: 4000 characters. Slack truncates at 40,000 but
 * keeps 4000 as the size a message should have (Slack's `chat.postMessage`
 * docs, "Truncating content").
 */
export const SLACK_TEXT_LIMIT = 4000;

export const SlackConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('slack')),
    botToken: Type.String({ minLength: 1, description: "the app's bot token, xoxb-… (OAuth & Permissions); use ${ENV} or {file}" }),
    apiBaseUrl: Type.String({ minLength: 1, default: 'https://slack.com/api/', description: 'base URL of the Web API; method names are appended' }),
    timeoutMs: Type.Integer({ default: 10_000, minimum: 1, maximum: 600_000 }),
    textChunkLimit: Type.Optional(
      Type.Integer({ minimum: 100, maximum: SLACK_TEXT_LIMIT, description: `split replies into messages of at most this many characters (at most ${SLACK_TEXT_LIMIT})` }),
    ),
  },
  { additionalProperties: false },
);

export type SlackConfigValue = Static<typeof SlackConfig>;
