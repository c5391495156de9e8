/**
 * One HTTP request of a chat channel, with its deadline and the service's
 * shutdown signal, and what a failure to get an answer means for a retry:
 *
 * - the connection was never made (refused, unknown host, TLS refused): the
 *   service cannot have seen the message, so it is retried as usual;
 * - the deadline passed, or the connection broke once the request may have
 *   been written: the service may have posted it, so the error is
 *   `ambiguous` (retried at most once);
 * - the caller's signal (shutdown) aborted it: its reason is thrown as it is.
 *
 * A redirect is refused (the base URL is wrong, and following it would hand
 * the token on); an answer of any other status is returned, for the channel
 * to say what it means.
 */
import { ChannelError, PluginConfigError } from './define.ts';
import { networkReason, redact } from './http.ts';

/** Error codes of failures before any byte of the request left: retrying cannot post twice. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function neverSent(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  if (typeof code !== 'string') return false;
  // certificate and TLS handshake refusals happen before the request is written
  return NOT_SENT.has(code) || code.startsWith('ERR_TLS_') || code.includes('CERT');
}

export interface SendRequestOptions {
  /** Aborted at shutdown; its reason is rethrown untouched. */
  signal: AbortSignal;
  timeoutMs: number;
  /** How the target is named in errors: scheme, host and path, never a token. */
  shown: string;
  /** Texts that must not appear in an error (tokens, the message). */
  hidden: readonly (string | undefined)[];
}

export async function sendRequest(fetchFn: typeof fetch, url: string, init: RequestInit, opts: SendRequestOptions): Promise<Response> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signals = [opts.signal, timeout];
  if (init.signal) signals.push(init.signal);
  let res: Response;
  try {
    res = await fetchFn(url, { ...init, signal: AbortSignal.any(signals), redirect: 'manual' });
  } catch (err) {
    if (opts.signal.aborted) throw opts.signal.reason;
    if (timeout.aborted) {
      throw new ChannelError(`no answer from ${opts.shown} within ${opts.timeoutMs} ms; the message may have been posted`, { retryable: true, ambiguous: true });
    }
    const reason = redact(networkReason(err), opts.hidden);
    if (neverSent(err)) throw new ChannelError(`POST ${opts.shown} failed: ${reason}`, { retryable: true });
    throw new ChannelError(`POST ${opts.shown} failed after sending: ${reason}; the message may have been posted`, { retryable: true, ambiguous: true });
  }
  if (res.status >= 300 && res.status < 400) {
    // following it would hand the token to wherever it points; the base URL is wrong
    await res.body?.cancel().catch(() => undefined);
    throw new ChannelError(`${opts.shown} answered HTTP ${res.status} (a redirect, not followed): check the configured base URL`, { retryable: false });
  }
  return res;
}

/** `scheme://host/path` of a URL, for errors: no query, no credentials. */
export function shownUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/**
 * Checks a configured base URL (`key` names it in the error) and returns it
 * without a trailing slash.
 */
export function baseUrl(raw: string, key: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new PluginConfigError(key, `"${raw}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new PluginConfigError(key, 'must be an http:// or https:// URL');
  if (u.username || u.password || u.search || u.hash) throw new PluginConfigError(key, 'must be a plain base URL, without credentials, query or fragment');
  return raw.replace(/\/+$/, '');
}
