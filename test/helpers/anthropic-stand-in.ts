/**
 * A stand-in for the Anthropic Messages API (`POST /v1/messages`, API version 2023-06-01) over real
 * HTTP. Each request is checked against the API's published shape (test/fixtures/specs/anthropic/SOURCE.md
 * says which pages and what each check is): a request that breaks it is refused `400
 * invalid_request_error`, as the API refuses it, and what was wrong is kept in `problems`. The answers
 * are scripted as data, one per request: a reply with its usage, or an error as the API sends it (its
 * status, body and `retry-after`).
 */
import type { ServerResponse } from 'node:http';
import { json, startStub, type Recorded } from './http-stub.ts';

export const API_VERSION = '2023-06-01';

/** The Messages API's error types and the status each comes with (the API's errors page). */
const ERROR_STATUS = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
} as const;
export type ErrorType = keyof typeof ERROR_STATUS;

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type Answer =
  | { reply: string; usage?: Partial<Usage>; stopReason?: string; content?: unknown[] }
  | { error: ErrorType; message?: string; retryAfter?: string }
  /** No answer: the request waits until the client gives up on it. */
  | { hang: true };

/** The request body fields of Messages `create` (the SDK's `MessageCreateParams`, made from the API's own description). */
const BODY_FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'thinking',
  'tool_choice',
  'tools',
  'top_k',
  'top_p',
  'service_tier',
  'container',
  'cache_control',
  'output_config',
  'inference_geo',
  'speed',
  'diagnostics',
]);

const isText = (b: unknown): boolean => {
  const block = b as Record<string, unknown> | null;
  return block?.type === 'text' && typeof block.text === 'string' && block.text.trim() !== '';
};

function contentProblems(where: string, content: unknown): string[] {
  if (typeof content === 'string') return content.trim() ? [] : [`${where}: text content must be non-empty`];
  if (!Array.isArray(content) || !content.length) return [`${where}: must be a string or a non-empty list of content blocks`];
  return content.flatMap((b, i) => (isText(b) ? [] : [`${where}.${i}: a text block with non-empty text is expected`]));
}

/** What is wrong with `req` as a Messages `create` request with `key`; [] when nothing. Never quotes a header's value. */
export function messagesRequestProblems(req: Recorded, key: string): string[] {
  const out: string[] = [];
  if (req.method !== 'POST' || req.url !== '/v1/messages') out.push(`no such operation: ${req.method} ${req.url}`);
  if (req.headers['x-api-key'] !== key) out.push('x-api-key: missing or not the key');
  if (req.headers['anthropic-version'] !== API_VERSION) out.push(`anthropic-version: must be ${API_VERSION}`);
  if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) out.push('content-type: must be application/json');
  const body = req.json as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [...out, 'body: must be a JSON object'];
  for (const k of Object.keys(body)) if (!BODY_FIELDS.has(k)) out.push(`${k}: Extra inputs are not permitted`);
  if (typeof body.model !== 'string' || !body.model) out.push('model: a model name is required');
  if (!Number.isSafeInteger(body.max_tokens) || (body.max_tokens as number) < 1) out.push('max_tokens: a positive integer is required');
  if (body.stream !== undefined && body.stream !== false) out.push('stream: this stand-in answers whole messages only');
  if (body.system !== undefined) out.push(...contentProblems('system', body.system));
  const messages = body.messages;
  if (!Array.isArray(messages) || !messages.length) return [...out, 'messages: a non-empty list is required'];
  messages.forEach((m: Record<string, unknown>, i) => {
    const extra = Object.keys(m ?? {}).filter((k) => k !== 'role' && k !== 'content');
    if (extra.length) out.push(`messages.${i}: unexpected ${extra.join(', ')}`);
    if (m?.role !== 'user' && m?.role !== 'assistant') out.push(`messages.${i}.role: must be user or assistant`);
    out.push(...contentProblems(`messages.${i}.content`, m?.content));
  });
  return out;
}

let ids = 0;
const id = (prefix: string) => `${prefix}_01${String(++ids).padStart(22, '0')}`;

function sendError(res: ServerResponse, type: ErrorType, message: string, headers: Record<string, string> = {}): void {
  json(
    res,
    ERROR_STATUS[type],
    { type: 'error', error: { type, message }, request_id: id('req') },
    { 'request-id': id('req'), ...headers },
  );
}

function sendMessage(res: ServerResponse, model: unknown, a: Extract<Answer, { reply: string }>): void {
  const usage = { input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 12, ...a.usage };
  json(
    res,
    200,
    {
      id: id('msg'),
      type: 'message',
      role: 'assistant',
      model,
      content: a.content ?? [{ type: 'text', text: a.reply }],
      stop_reason: a.stopReason ?? 'end_turn',
      stop_sequence: null,
      usage: { ...usage, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard' },
    },
    { 'request-id': id('req') },
  );
}

export interface AnthropicStandIn {
  /** The base URL to configure: the origin, without /v1. */
  url: string;
  requests: Recorded[];
  /** What was wrong with each request, in order ([] for one that matched the API's shape). */
  problems: string[][];
  /** The answers to the next requests, in order; once they are used up, `respond`'s (a reply of `ok` without it). */
  script(...answers: Answer[]): void;
  close(): Promise<void>;
}

/** `respond` answers a request no scripted answer is left for (one chosen by what the request says). */
export async function startAnthropicStandIn(
  key: string,
  respond: (req: Recorded) => Answer = () => ({ reply: 'ok' }),
): Promise<AnthropicStandIn> {
  let queue: Answer[] = [];
  const problems: string[][] = [];
  const stub = await startStub((req, res) => {
    const wrong = messagesRequestProblems(req, key);
    problems.push(wrong);
    if (wrong.length) return sendError(res, 'invalid_request_error', wrong.join('; '));
    const a = queue.shift() ?? respond(req);
    if ('hang' in a) return;
    if ('error' in a)
      return sendError(res, a.error, a.message ?? a.error, a.retryAfter === undefined ? {} : { 'retry-after': a.retryAfter });
    sendMessage(res, req.json.model, a);
  });
  return {
    url: stub.url,
    requests: stub.requests,
    problems,
    script: (...answers) => {
      queue = answers;
    },
    close: () => stub.close(),
  };
}
