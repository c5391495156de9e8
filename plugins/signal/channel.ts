/**
 * The `signal` channel: each part of a reply is one Signal message, sent
 * through signal-cli's HTTP daemon (`api: "jsonrpc"`, JSON-RPC 2.0 `send` on
 * `POST /api/v1/rpc`) or through signal-cli-rest-api (`api: "rest"`,
 * `POST /v2/send`). `to` is an E.164 number or `group:<group id>`.
 *
 * signal-cli answers every JSON-RPC call with HTTP 200; failures are error
 * objects, classified by code and by the per-recipient results signal-cli
 * attaches: a rate limit waits as long as Signal said, an unregistered or
 * untrusted recipient is final, a network or I/O failure on signal-cli's side
 * is retried. signal-cli-rest-api answers 201, 429 for a rate limit and 400
 * with signal-cli's text for everything else.
 */
import {
  baseUrl,
  ChannelError,
  chunkLimit,
  detailOf,
  discard,
  E164,
  isRetryableStatus,
  parseRetryAfter,
  post,
  readAnswer,
  renderParts,
  SIGNAL,
  toPlainText,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { SignalConfigValue } from './config.ts';

/** signal-cli's group ids are base64 (of 16 or 32 bytes). */
const GROUP = /^group:([A-Za-z0-9+/]+={0,2})$/;

function checkSignalTo(to: string): string | undefined {
  if (E164.test(to) || GROUP.test(to)) return undefined;
  return 'an E.164 phone number (+15551234567) or group:<group id>';
}

/** JSON-RPC error codes signal-cli uses (SignalJsonRpcCommandHandler, JsonRpcResponse). */
const USER_ERROR = -1;
const IO_ERROR = -3;
const RATE_LIMIT_ERROR = -5;
const INTERNAL_ERROR = -32603;

interface RecipientResult {
  type?: unknown;
  retryAfterSeconds?: unknown;
}

interface RpcError {
  code?: unknown;
  message?: unknown;
  data?: { response?: { results?: RecipientResult[] } } | null;
}

/** The longest wait Signal asked for among the recipients, in milliseconds. */
function rateLimitWait(results: RecipientResult[]): number | undefined {
  const seconds = results.map((r) => Number(r.retryAfterSeconds)).filter((s) => Number.isFinite(s) && s >= 0);
  return seconds.length > 0 ? Math.max(...seconds) * 1000 : undefined;
}

/** What a JSON-RPC error object means for a retry. */
function classifyRpcError(error: RpcError): ChannelError {
  const code = typeof error.code === 'number' ? error.code : NaN;
  const listed = error.data?.response?.results;
  const results = Array.isArray(listed) ? listed.filter((r): r is RecipientResult => typeof r === 'object' && r !== null) : [];
  const types = [...new Set(results.map((r) => String(r.type)).filter((t) => t !== 'SUCCESS'))];
  const text = typeof error.message === 'string' ? detailOf(error.message) : '';
  const reason = `signal-cli error ${Number.isNaN(code) ? '?' : code}${text ? `: ${text}` : ''}${types.length > 0 ? ` (${types.join(', ')})` : ''}`;
  if (code === RATE_LIMIT_ERROR || (types.length > 0 && types.every((t) => t === 'RATE_LIMIT_FAILURE'))) {
    const retryAfterMs = rateLimitWait(results);
    return new ChannelError(reason, { retryable: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  }
  if (code === IO_ERROR || code === INTERNAL_ERROR) return new ChannelError(reason, { retryable: true });
  if (code === USER_ERROR && types.length > 0 && types.every((t) => t === 'NETWORK_FAILURE'))
    return new ChannelError(reason, { retryable: true });
  // unregistered user, untrusted identity (-4), a rejected captcha (-6), a bad group id or request: sending again changes nothing
  return new ChannelError(reason, { retryable: false });
}

/**
 * What an HTTP error answer means: by its status, and for signal-cli-rest-api's
 * 400, by signal-cli's own error text, which it passes through.
 */
function classifyHttpError(status: number, error: string, retryAfter: string | null, now: number): ChannelError {
  const reason = `HTTP ${status}${error ? `: ${error}` : ''}`;
  if (status === 429 || /rate limit/i.test(error)) {
    const retryAfterMs = parseRetryAfter(retryAfter, now);
    return new ChannelError(reason, { retryable: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  }
  if (isRetryableStatus(status) || /network failure|timed out|timeout|IOException/i.test(error))
    return new ChannelError(reason, { retryable: true });
  return new ChannelError(reason, { retryable: false });
}

export function createSignalChannel(config: SignalConfigValue, ctx: PluginContext): Channel {
  const base = baseUrl(config.url, 'url');
  const limitBytes = chunkLimit(SIGNAL, config.textChunkLimit);

  async function sendRpc(msg: ChannelMessage, to: string): Promise<void> {
    const group = GROUP.exec(to)?.[1];
    const params = { account: config.account, ...(group ? { groupId: group } : { recipient: [to] }), message: msg.text };
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'send', params, id: `${msg.deliveryId}/${msg.part}` });
    const res = await post(
      ctx.fetch,
      `${base}/api/v1/rpc`,
      { headers: { 'content-type': 'application/json', accept: 'application/json' }, body },
      { signal: msg.signal, timeoutMs: config.timeoutMs, hidden: [msg.text] },
    );
    const { text, json } = await readAnswer(res, [msg.text]);
    if (res.status !== 200) throw classifyHttpError(res.status, detailOf(text), res.headers.get('retry-after'), ctx.clock());
    const answer = json as { result?: unknown; error?: RpcError } | undefined;
    if (answer && typeof answer === 'object' && answer.error && typeof answer.error === 'object') throw classifyRpcError(answer.error);
    if (answer && typeof answer === 'object' && 'result' in answer) return;
    // a 200 that is not JSON-RPC: something answered, and it may have sent the message
    throw new ChannelError(`${base}/api/v1/rpc answered 200 without a JSON-RPC result`, { retryable: true, ambiguous: true });
  }

  async function sendRest(msg: ChannelMessage, to: string): Promise<void> {
    const group = GROUP.exec(to)?.[1];
    // signal-cli-rest-api names a group "group." + the base64 of signal-cli's group id
    const recipient = group ? `group.${Buffer.from(group, 'utf8').toString('base64')}` : to;
    const body = JSON.stringify({ message: msg.text, number: config.account, recipients: [recipient] });
    const res = await post(
      ctx.fetch,
      `${base}/v2/send`,
      { headers: { 'content-type': 'application/json', accept: 'application/json' }, body },
      { signal: msg.signal, timeoutMs: config.timeoutMs, hidden: [msg.text] },
    );
    if (res.ok) return discard(res);
    const { text, json } = await readAnswer(res, [msg.text]);
    const error = (json as { error?: unknown } | undefined)?.error;
    throw classifyHttpError(
      res.status,
      typeof error === 'string' ? detailOf(error) : detailOf(text),
      res.headers.get('retry-after'),
      ctx.clock(),
    );
  }

  return {
    limits: { requiresTo: true },
    checkTo: checkSignalTo,
    // plain text: the REST API's default text mode and signal-cli's send show the text as written
    render: (markdown) => renderParts(markdown, { render: toPlainText, limit: limitBytes, measure: SIGNAL.measure }),
    async send(msg) {
      if (!msg.to) throw new ChannelError('no recipient to send to', { retryable: false });
      return config.api === 'rest' ? sendRest(msg, msg.to) : sendRpc(msg, msg.to);
    },
  };
}
