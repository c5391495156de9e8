/**
 * Helpers for plugins that talk HTTP (agent providers and chat channels):
 * reading an answer without trusting its size, turning an error answer into a
 * short readable reason, Retry-After, and the retry rules every channel shares.
 */
import { ChannelError } from '../plugins/define.ts';

/** Collapses whitespace and truncates to `max` characters. */
export function shorten(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Replaces every occurrence of each secret (API keys, tokens) with `[redacted]`. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * Reads a response body as UTF-8, at most `maxBytes`; the rest is discarded
 * (the connection is cancelled), so a huge or endless answer cannot exhaust memory.
 */
export async function readCapped(res: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: '', truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { text: Buffer.concat(chunks, size).toString('utf8'), truncated };
}

/**
 * The human part of an error answer: `error.message` (OpenAI and most JSON
 * APIs), `error` when it is a string, `message`, `detail` or `description`,
 * else the raw text.
 */
export function errorDetail(body: string): string {
  try {
    const j = JSON.parse(body) as Record<string, unknown>;
    if (j && typeof j === 'object') {
      const e = j.error;
      if (e && typeof e === 'object' && typeof (e as Record<string, unknown>).message === 'string')
        return (e as { message: string }).message;
      for (const k of ['error', 'message', 'detail', 'description'] as const) if (typeof j[k] === 'string') return j[k] as string;
    }
  } catch {
    // not JSON: the text itself is the best description there is
  }
  return body;
}

/**
 * Retry-After as milliseconds from `now`: delta-seconds (`120`) or an HTTP
 * date. Undefined when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  // an HTTP date names its month; bare numbers like "-5" are not dates here
  if (!/[A-Za-z]{3}/.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Statuses worth retrying: the receiver is overloaded, rate-limiting, or failed on its side. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/**
 * The `ChannelError` for a non-2xx answer: 408, 425, 429 and 5xx are
 * retryable (after Retry-After when given), other statuses are not.
 */
export function channelErrorForStatus(status: number, detail: string, retryAfter: string | null, now: number): ChannelError {
  const retryable = isRetryableStatus(status);
  const retryAfterMs = retryable ? parseRetryAfter(retryAfter, now) : undefined;
  return new ChannelError(`HTTP ${status}${detail ? `: ${detail}` : ''}`, {
    retryable,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/** A short reason for a failed `fetch` (connection refused, DNS, TLS, reset), from the error's cause. */
export function networkReason(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } } | undefined;
  const cause = e?.cause;
  if (cause?.code && cause.message) return cause.message.includes(cause.code) ? cause.message : `${cause.code}: ${cause.message}`;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return e?.message ?? String(err);
}
