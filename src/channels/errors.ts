/**
 * What chat channels share when a request fails without an answer: was the
 * message possibly delivered? A connection that was never made (refused, DNS,
 * TLS, connect timeout) sent nothing, so retrying is safe. A timeout or a
 * connection that broke after the request went out may have posted the
 * message: the delivery is ambiguous and retried at most once.
 */
import { ChannelError } from '../plugins/define.ts';
import { networkReason, redact } from '../plugins/http.ts';

/** Error codes of failures before the request could reach the service. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function causeCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown; error?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string') return e.code;
    // grammy's HttpError keeps the fetch error in `error`
    e = (e.cause ?? e.error) as typeof e;
  }
  return undefined;
}

/** The fetch error itself: grammy's HttpError wraps it in `error`. */
function innermost(err: unknown): unknown {
  const inner = (err as { error?: unknown } | undefined)?.error;
  return inner instanceof Error ? inner : err;
}

export interface FailedRequestOptions {
  /** The service's name, first in the reason ("Telegram"). */
  service: string;
  /** Our own timeout fired. */
  timedOut: boolean;
  timeoutMs: number;
  /** Tokens and texts that must not appear in the reason. */
  hidden: readonly (string | undefined)[];
}

/** The `ChannelError` for a request that got no answer. */
export function failedRequest(err: unknown, opts: FailedRequestOptions): ChannelError {
  if (opts.timedOut) {
    return new ChannelError(`${opts.service}: no answer within ${opts.timeoutMs} ms; the message may have been sent`, { retryable: true, ambiguous: true });
  }
  const code = causeCode(err);
  const reason = redact(networkReason(innermost(err)), opts.hidden);
  if (code && NOT_SENT.has(code)) return new ChannelError(`${opts.service}: could not connect (${reason})`, { retryable: true });
  return new ChannelError(`${opts.service}: the connection failed after the request was sent (${reason}); the message may have been sent`, {
    retryable: true,
    ambiguous: true,
  });
}
