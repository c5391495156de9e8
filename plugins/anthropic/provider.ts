/**
 * The `anthropic` agent provider: one Messages API call per run through the official SDK, which retries
 * rate limits, overloads, 5xx answers and network errors itself (honouring `retry-after`). The run's
 * deadline arrives as the AbortSignal, which cancels the call and the SDK's waits between retries alike.
 * Error messages carry the status and the API's own reason, shortened, never the key; the log gets
 * statuses and timings only (docs/providers/anthropic.md).
 */
import type { Anthropic, ClientOptions } from '@anthropic-ai/sdk';
import {
  networkReason,
  PluginConfigError,
  redact,
  shorten,
  type AgentProvider,
  type AgentRequest,
  type AgentUsage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { AnthropicConfigValue } from './config.ts';
import { toMessages } from './messages.ts';

const DETAIL_CHARS = 300;

type Sdk = typeof import('@anthropic-ai/sdk');
let sdk: Promise<Sdk> | undefined;
/** The SDK, loaded at the first call: importing it costs a start about as much as every other plugin (docs/performance.md, "Start and idle memory"). */
const loadSdk = (): Promise<Sdk> => (sdk ??= import('@anthropic-ai/sdk'));

/** The API origin as the SDK takes it (no trailing slash); refuses a URL that already ends in /v1. */
function baseUrlOf(baseUrl: string): string {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new PluginConfigError('baseUrl', `"${baseUrl}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new PluginConfigError('baseUrl', 'must be an http:// or https:// URL');
  if (u.search || u.hash) throw new PluginConfigError('baseUrl', 'must have no query or fragment');
  const path = u.pathname.replace(/\/+$/, '');
  if (/\/v1$/.test(path)) throw new PluginConfigError('baseUrl', 'leave out /v1: the SDK adds /v1/messages');
  return `${u.origin}${path}`;
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/**
 * The answer's usage: every input token billed (`input_tokens`, plus the tokens written to and read from
 * the prompt cache, which the API counts apart) as input, `output_tokens` as output.
 */
export function usageOf(u: unknown): AgentUsage | undefined {
  const r = u as Record<string, unknown> | null | undefined;
  if (!r || !isCount(r.input_tokens) || !isCount(r.output_tokens)) return undefined;
  const cache =
    (isCount(r.cache_creation_input_tokens) ? r.cache_creation_input_tokens : 0) +
    (isCount(r.cache_read_input_tokens) ? r.cache_read_input_tokens : 0);
  return { inputTokens: r.input_tokens + cache, outputTokens: r.output_tokens };
}

/** The reply: the text blocks of the answer, joined (an answer may also hold thinking or other blocks). */
function replyText(m: Anthropic.Message): string {
  if (!Array.isArray(m.content)) throw new Error('malformed reply: content is not a list');
  const texts = m.content.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : []));
  if (!texts.length && m.stop_reason === 'refusal') throw new Error('the model refused to answer');
  return texts.join('');
}

export function createAnthropicProvider(config: AnthropicConfigValue, ctx: PluginContext): AgentProvider {
  const baseURL = baseUrlOf(config.baseUrl);
  const endpoint = `${baseURL}/v1/messages`;
  const secrets = [config.apiKey];

  /** Each request the SDK makes (a retry is one more), logged with its status and time, never its content. */
  const loggedFetch: typeof fetch = async (input, init) => {
    const started = ctx.clock();
    const retry = Number(new Headers(init?.headers).get('x-stainless-retry-count') ?? 0);
    try {
      const res = await ctx.fetch(input, init);
      const line = { status: res.status, retry, ms: ctx.clock() - started };
      if (res.ok) ctx.logger.debug(line, 'messages request');
      else ctx.logger.warn(line, 'messages request refused');
      return res;
    } catch (err) {
      if (!init?.signal?.aborted)
        ctx.logger.warn({ retry, ms: ctx.clock() - started, reason: networkReason(err) }, 'messages request failed');
      throw err;
    }
  };
  const options: ClientOptions = {
    apiKey: config.apiKey,
    // never a token or a base URL from the environment: the config says what is used
    authToken: null,
    webhookKey: null,
    baseURL,
    maxRetries: config.maxRetries,
    fetch: loggedFetch,
    // the SDK's own log lines would bypass the service's log; the lines above replace them
    logLevel: 'off',
    // spans without prompts or replies, whatever the environment says
    openTelemetry: { traces: { contentMode: 'metadata_only' } },
  };
  let client: Promise<Anthropic> | undefined;
  const clientOf = () => (client ??= loadSdk().then((m) => new m.Anthropic(options)));

  const fail = ({ APIConnectionError, APIError }: Sdk, err: unknown): Error => {
    if (err instanceof APIError && err.status !== undefined) {
      const body = err.error as { error?: { type?: unknown; message?: unknown } } | undefined;
      const parts = [body?.error?.type, body?.error?.message].filter((p): p is string => typeof p === 'string' && p !== '');
      const detail = parts.length ? parts.join(': ') : err.message.replace(/^\d+\s*/, '');
      const shown = shorten(redact(detail, secrets), DETAIL_CHARS);
      return new Error(`HTTP ${err.status} from ${endpoint}${shown ? `: ${shown}` : ''}`);
    }
    const reason = err instanceof APIConnectionError ? networkReason(err.cause ?? err) : err instanceof Error ? err.message : String(err);
    return new Error(`request to ${endpoint} failed: ${shorten(redact(reason, secrets), DETAIL_CHARS)}`);
  };

  return {
    async run(req: AgentRequest) {
      const model = config.models?.[req.model] ?? req.model;
      // the agent's instructions, else the provider's own system prompt (docs/agents.md)
      const { system, messages } = toMessages(req.messages, [req.instructions ?? config.systemPrompt]);
      if (!messages.length) throw new Error('nothing to send: the run has no user message with text');
      const started = ctx.clock();
      let answer: Anthropic.Message;
      try {
        answer = await (await clientOf()).messages.create(
          { model, max_tokens: config.maxTokens, messages, ...(system === undefined ? {} : { system }) },
          // the run's deadline bounds each attempt too, so the SDK never needs its own estimate of one
          { signal: req.signal, timeout: req.timeoutMs },
        );
      } catch (err) {
        if (req.signal.aborted) throw req.signal.reason;
        throw fail(await loadSdk(), err);
      }
      ctx.logger.debug({ model, ms: ctx.clock() - started, stopReason: answer.stop_reason }, 'message');
      const text = replyText(answer);
      const usage = usageOf(answer.usage);
      return usage ? { text, usage } : { text };
    },
  };
}
