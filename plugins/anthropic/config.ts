/**
 * Config of the `anthropic` provider: the Messages API through the official SDK (docs/providers/anthropic.md).
 */
import { Type, type Static } from 'hook-intake/plugin';

export const DEFAULT_BASE_URL = 'https://api.anthropic.com';
/** Room for a long reply to a webhook, well inside every current model's output limit. */
export const DEFAULT_MAX_TOKENS = 4096;

export const AnthropicConfig = Type.Object(
  {
    type: Type.Literal('anthropic'),
    apiKey: Type.String({ minLength: 1, description: 'the API key; write it as ${ANTHROPIC_API_KEY} or {file: …}, not literally' }),
    baseUrl: Type.String({
      minLength: 1,
      default: DEFAULT_BASE_URL,
      description: 'the API origin, without /v1: the SDK adds /v1/messages',
    }),
    models: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Type.String({ minLength: 1 }), {
        description: 'alias (the part after `provider/`) → model name sent',
      }),
    ),
    maxTokens: Type.Integer({ minimum: 1, default: DEFAULT_MAX_TOKENS, description: 'sent as max_tokens: the longest reply, in tokens' }),
    maxRetries: Type.Integer({
      minimum: 0,
      maximum: 10,
      default: 2,
      description: 'retries of a rate limit (429), an overload (529), a 5xx or a network error, as the SDK makes them',
    }),
    systemPrompt: Type.Optional(
      Type.String({ minLength: 1, description: "sent as `system` when the run's agent has no instructions of its own" }),
    ),
  },
  { additionalProperties: false },
);

export type AnthropicConfigValue = Static<typeof AnthropicConfig>;
