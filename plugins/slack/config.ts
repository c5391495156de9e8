/**
 * Config of the `slack` channel: replies posted by a Slack app's bot user
 * through the Web API.
 */
import { SLACK, Type, type Static } from 'hook-intake/plugin';

export const SlackConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('slack')),
    botToken: Type.String({ minLength: 1, description: "the app's bot token, xoxb-… (OAuth & Permissions); use ${ENV} or {file}" }),
    apiBaseUrl: Type.String({
      minLength: 1,
      default: 'https://slack.com/api/',
      description: 'base URL of the Web API; method names are appended',
    }),
    timeoutMs: Type.Integer({ default: 10_000, minimum: 1, maximum: 600_000 }),
    textChunkLimit: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: SLACK.limit,
        description: `split replies into messages of at most this many characters (at most ${SLACK.limit})`,
      }),
    ),
  },
  { additionalProperties: false },
);

export type SlackConfigValue = Static<typeof SlackConfig>;
