/**
 * One HTTP request of a chat channel, with its deadline and the service's
 * shutdown signal, and what a failure to get an answer means for a retry:
 *
 * - The connection was never made (refused, unknown host, TLS refused): the
 *   service cannot have seen the message, so it is an ordinary retry.
 * - The deadline passed, or the connection broke once the request may have been
 *   written: the service may have posted the message, so the error is
 *   `ambiguous` (the outbox retries such a part at most once). A request that
 *   posts nothing (a token request, opening a DM) says `safeToRepeat` and is
 *   never ambiguous.
 * - Shutdown aborted it: the signal's reason is rethrown as it is.
 *
 * A redirect is refused: the base URL is wrong, and following it would hand the
 * token on. Any other answer is returned, for the channel to say what its status
 * means. Errors name the target by scheme, host and path only (never the query,
 * which may carry a password) and pass through `redact` for the given secrets.
 */
import { ChannelError, PluginConfigError } from '../plugins/define.ts';
import { errorDetail, networkReason, readCapped, redact, shorten } from './http.ts';

/** Error codes of failures before any byte of the request left: retrying cannot post twice. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

const ERROR_BODY_BYTES = 16 * 1024;
const DETAIL_CHARS = 300;

/** The first error code along the `cause` chain: fetch wraps the socket's error, which may wrap another. */
function causeCode(err: unknown): string | undefined {
  let e = err as { code?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (typeof e.code === 'string') return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

export function neverSent(err: unknown): boolean {
  const code = causeCode(err);
  if (code === undefined) return false;
  // certificate and TLS handshake refusals happen before the request is written
  return NOT_SENT.has(code) || code.startsWith('ERR_TLS_') || code.includes('CERT');
}

export interface PostOptions {
  /** Aborted at shutdown; its reason is rethrown untouched. */
  signal: AbortSignal;
  timeoutMs: number;
  /** Texts that must not appear in an error: tokens, passwords, the message. */
  hidden: readonly (string | undefined)[];
  /** True for requests that post nothing, so a broken connection is an ordinary retry. */
  safeToRepeat?: boolean;
  /** How errors name the target when its URL carries a secret (Telegram's token is in the path); else `shownUrl(url)`. */
  shown?: string;
}

/** `scheme://host/path` of a URL, for errors and logs: no query, no credentials. */
export function shownUrl(url: string | URL): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/** Sends `init` to `url` (its method, GET when none); returns any answer but a redirect. */
export async function request(fetchFn: typeof fetch, url: string | URL, init: RequestInit, opts: PostOptions): Promise<Response> {
  const shown = opts.shown ?? shownUrl(url);
  const method = init.method ?? 'GET';
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signals = [opts.signal, timeout];
  if (init.signal) signals.push(init.signal);
  let res: Response;
  try {
    res = await fetchFn(url, { ...init, signal: AbortSignal.any(signals), redirect: 'manual' });
  } catch (err) {
    if (opts.signal.aborted) throw opts.signal.reason;
    const ambiguous = !opts.safeToRepeat;
    if (timeout.aborted) {
      const tail = ambiguous ? '; the message may have been posted' : '';
      throw new ChannelError(`no answer from ${shown} within ${opts.timeoutMs} ms${tail}`, { retryable: true, ambiguous });
    }
    const reason = redact(networkReason(err), opts.hidden);
    if (neverSent(err)) throw new ChannelError(`${method} ${shown} failed: could not connect (${reason})`, { retryable: true });
    if (!ambiguous) throw new ChannelError(`${method} ${shown} failed: ${reason}`, { retryable: true });
    throw new ChannelError(`${method} ${shown} failed after sending: ${reason}; the message may have been posted`, {
      retryable: true,
      ambiguous: true,
    });
  }
  if (res.status >= 300 && res.status < 400) {
    await discard(res);
    throw new ChannelError(`${shown} answered HTTP ${res.status} (a redirect, not followed): check the configured base URL`, {
      retryable: false,
    });
  }
  return res;
}

/** POSTs `init` to `url`; returns any answer but a redirect (what its status means is the channel's to say). */
export function post(fetchFn: typeof fetch, url: string | URL, init: RequestInit, opts: PostOptions): Promise<Response> {
  return request(fetchFn, url, { ...init, method: 'POST' }, opts);
}

/**
 * An answer's body, read up to `maxBytes` (an error answer's cap unless given),
 * with secrets removed: its text and, when it is JSON, the parsed value.
 */
export async function readAnswer(
  res: Response,
  hidden: readonly (string | undefined)[],
  maxBytes = ERROR_BODY_BYTES,
): Promise<{ text: string; json: unknown }> {
  let text = '';
  try {
    text = redact((await readCapped(res, maxBytes)).text, hidden);
  } catch {
    // an unreadable body leaves the status to speak for itself
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { text, json };
}

/** A short, single-line reason from an error answer's text (its JSON `error.message`, `message`, … when it has one). */
export function detailOf(text: string): string {
  return shorten(errorDetail(text), DETAIL_CHARS);
}

/** Frees the connection of an answer whose body is not needed. */
export async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

/**
 * Checks a configured base URL (`key` names it in the error) and returns it
 * without a trailing slash. Credentials, a query or a fragment are refused:
 * they would end up in every request's URL and could surface in errors.
 */
export function baseUrl(raw: string, key: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new PluginConfigError(key, `"${raw}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new PluginConfigError(key, 'must be an http:// or https:// URL');
  if (u.username || u.password || u.search || u.hash)
    throw new PluginConfigError(key, 'must be a plain base URL, without credentials, query or fragment');
  return raw.replace(/\/+$/, '');
}

/** E.164: a plus, a country code not starting with 0, at most 15 digits in all. */
export const E164 = /^\+[1-9]\d{6,14}$/;
