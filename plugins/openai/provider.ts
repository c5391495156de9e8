/**
 * The `openai` agent provider: one non-streaming chat-completions request per
 * run. The run's deadline arrives as the AbortSignal, which cancels the
 * request and the reading of the answer alike. Error messages carry the
 * status and the endpoint's own reason, shortened, never the key.
 */
import {
  errorDetail,
  networkReason,
  PluginConfigError,
  readCapped,
  redact,
  shorten,
  type AgentProvider,
  type AgentRequest,
  type AgentUsage,
  type PluginContext,
} from 'hook-intake/plugin';
import { DEFAULT_EFFORTS, RESERVED_PARAMS, type OpenAIConfigValue } from './config.ts';

const ERROR_BODY_BYTES = 64 * 1024;
const DETAIL_CHARS = 300;

interface ChatCompletion {
  choices?: { message?: { content?: unknown; refusal?: unknown } }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/**
 * The answer's `usage`, when it has both counts: `prompt_tokens` (cached ones included) as input,
 * `completion_tokens` (reasoning ones included) as output. A server that reports none gives none.
 */
function usageOf(body: ChatCompletion): AgentUsage | undefined {
  const u = body.usage;
  if (!u || !isCount(u.prompt_tokens) || !isCount(u.completion_tokens)) return undefined;
  return { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens };
}

/**
 * The request URL (`/chat/completions` appended to the path; a query such as
 * Azure's `api-version` is kept) and the form shown in errors, without
 * credentials or query.
 */
function endpointOf(baseUrl: string): { url: string; shown: string } {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new PluginConfigError('baseUrl', `"${baseUrl}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new PluginConfigError('baseUrl', 'must be an http:// or https:// URL');
  u.hash = '';
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/chat/completions`;
  return { url: u.href, shown: `${u.origin}${u.pathname}` };
}

function resolveKey(config: OpenAIConfigValue, ctx: PluginContext): string | undefined {
  if (config.apiKey !== undefined && config.apiKeyEnv !== undefined)
    throw new PluginConfigError('apiKey', 'set either apiKey or apiKeyEnv, not both');
  if (config.apiKeyEnv !== undefined) {
    const v = ctx.env[config.apiKeyEnv];
    if (!v) throw new PluginConfigError('apiKeyEnv', `environment variable ${config.apiKeyEnv} is not set`);
    return v;
  }
  return config.apiKey;
}

/** Text of the first choice: a string, or the text parts of a content array (some servers answer that way). */
function replyText(body: ChatCompletion): string {
  const msg = body.choices?.[0]?.message;
  if (!msg) throw new Error('malformed reply: no choices[0].message');
  const c = msg.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    const parts = c.filter((p): p is { text: string } => typeof (p as { text?: unknown })?.text === 'string');
    if (parts.length) return parts.map((p) => p.text).join('');
  }
  if (typeof msg.refusal === 'string' && msg.refusal) throw new Error(`the model refused: ${shorten(msg.refusal, DETAIL_CHARS)}`);
  throw new Error('malformed reply: choices[0].message.content is not text');
}

export function createOpenAIProvider(config: OpenAIConfigValue, ctx: PluginContext): AgentProvider {
  const endpoint = endpointOf(config.baseUrl);
  const key = resolveKey(config, ctx);
  for (const p of Object.keys(config.params ?? {}))
    if (RESERVED_PARAMS.includes(p)) throw new PluginConfigError(`params.${p}`, 'is set by the provider and cannot be overridden');
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  for (const [k, v] of Object.entries(config.headers ?? {})) headers[k.toLowerCase()] = v;
  // anything that may be a credential is scrubbed from error texts, in case an endpoint echoes it
  const secrets = [key, ...Object.values(config.headers ?? {}).filter((v) => v.length >= 8)];
  const efforts = { ...DEFAULT_EFFORTS, ...config.reasoningEffortMap };
  const fail = (message: string) => new Error(redact(message, secrets));

  return {
    async run(req: AgentRequest) {
      const model = config.models?.[req.model] ?? req.model;
      // the agent's instructions, else the provider's own system prompt (docs/agents.md)
      const system = req.instructions ?? config.systemPrompt;
      const messages = system ? [{ role: 'system' as const, content: system }, ...req.messages] : req.messages;
      const body: Record<string, unknown> = { ...config.params, model, messages, stream: false };
      if (config.reasoningEffort && req.thinking) {
        const effort = Object.hasOwn(efforts, req.thinking) ? efforts[req.thinking as keyof typeof efforts] : req.thinking;
        if (effort) body.reasoning_effort = effort;
      }
      const started = ctx.clock();
      let res: Response;
      try {
        res = await ctx.fetch(endpoint.url, { method: 'POST', headers, body: JSON.stringify(body), signal: req.signal });
      } catch (err) {
        if (req.signal.aborted) throw req.signal.reason;
        throw fail(`request to ${endpoint.shown} failed: ${networkReason(err)}`);
      }
      try {
        if (!res.ok) {
          const { text } = await readCapped(res, ERROR_BODY_BYTES);
          const detail = shorten(redact(errorDetail(text), secrets), DETAIL_CHARS);
          ctx.logger.warn({ status: res.status, model, ms: ctx.clock() - started }, 'chat completion refused');
          throw fail(`HTTP ${res.status} from ${endpoint.shown}${detail ? `: ${detail}` : ''}`);
        }
        const { text, truncated } = await readCapped(res, config.maxResponseBytes);
        if (truncated) throw fail(`reply from ${endpoint.shown} is larger than maxResponseBytes (${config.maxResponseBytes})`);
        let parsed: ChatCompletion;
        try {
          parsed = JSON.parse(text) as ChatCompletion;
        } catch {
          throw fail(`malformed reply from ${endpoint.shown}: not JSON`);
        }
        const reply = replyText(parsed);
        ctx.logger.debug({ status: res.status, model, ms: ctx.clock() - started }, 'chat completion');
        const usage = usageOf(parsed);
        return usage ? { text: reply, usage } : { text: reply };
      } catch (err) {
        if (req.signal.aborted) throw req.signal.reason;
        throw err;
      }
    },
  };
}
