/**
 * Config of the `openai` provider: any OpenAI-compatible chat-completions
 * endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter…).
 */
import { Type, type Static } from 'hook-intake/plugin';

const strict = { additionalProperties: false } as const;
const Effort = Type.Union([Type.String({ minLength: 1 }), Type.Null()]);

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export const OpenAIConfig = Type.Object(
  {
    type: Type.Literal('openai'),
    baseUrl: Type.String({ minLength: 1, default: DEFAULT_BASE_URL, description: 'the URL that `/chat/completions` is appended to' }),
    apiKey: Type.Optional(
      Type.String({ minLength: 1, description: 'the key itself; use ${ENV} or {file} rather than writing it in the file' }),
    ),
    apiKeyEnv: Type.Optional(
      Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'name of the environment variable holding the key' }),
    ),
    models: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Type.String({ minLength: 1 }), {
        description: 'alias (the part after `provider/`) → model name sent',
      }),
    ),
    reasoningEffort: Type.Boolean({ default: false, description: 'send `thinking` as `reasoning_effort`' }),
    reasoningEffortMap: Type.Optional(
      Type.Object(
        {
          off: Type.Optional(Effort),
          minimal: Type.Optional(Effort),
          low: Type.Optional(Effort),
          medium: Type.Optional(Effort),
          high: Type.Optional(Effort),
          xhigh: Type.Optional(Effort),
        },
        { ...strict, description: 'thinking level → reasoning_effort value; null leaves the field out' },
      ),
    ),
    systemPrompt: Type.Optional(Type.String({ minLength: 1, description: 'sent as the first message of every request' })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String(), { propertyNames: { pattern: HEADER_NAME } })),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'extra request fields: temperature, max_tokens, …' })),
    maxResponseBytes: Type.Integer({ default: 10 * 1024 * 1024, minimum: 1024 }),
  },
  strict,
);

export type OpenAIConfigValue = Static<typeof OpenAIConfig>;

/** Thinking level → `reasoning_effort`; OpenAI's own names, `off` being `none`. */
export const DEFAULT_EFFORTS: Readonly<Record<string, string | null>> = {
  off: 'none',
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
};

/** Request fields the provider sets itself; `params` may not override them. */
export const RESERVED_PARAMS = ['model', 'messages', 'stream', 'reasoning_effort'];
