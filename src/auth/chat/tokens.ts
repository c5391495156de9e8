/**
 * Shared-secret tokens (Telegram's secret token, Mattermost's token, Meta's
 * verify token) compared in constant time. Only SHA-256 digests of the
 * configured tokens are kept; a presented value is digested the same way, so
 * every comparison is over 32 bytes whatever the lengths, and every configured
 * token is compared (no early exit tells which one matched).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** Longest token value read from a request; longer ones are refused unread. */
export const MAX_TOKEN_CHARS = 1024;

export type TokenDigests = readonly Buffer[];

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** One token, or several during a rotation. */
export function tokenDigests(tokens: string | readonly string[]): TokenDigests {
  return (typeof tokens === 'string' ? [tokens] : tokens).map(digest);
}

/** The index of the configured token `value` equals, or -1. */
export function matchToken(digests: TokenDigests, value: string): number {
  const d = digest(value);
  let matched = -1;
  for (let i = 0; i < digests.length; i++) if (timingSafeEqual(digests[i]!, d) && matched < 0) matched = i;
  return matched;
}

/** The list form of a `secret` option, for messages that name `secret[1]`. */
export const secretList = (s: string | readonly string[]): readonly string[] => (typeof s === 'string' ? [s] : s);

/** Wraps a verdict function so that a hostile request (a header object that throws) fails closed instead of throwing. */
export function failClosed<A extends unknown[], R>(fn: (...args: A) => R, failure: R): (...args: A) => R {
  return (...args) => {
    try {
      return fn(...args);
    } catch {
      return failure;
    }
  };
}

const REDACTED = '[redacted]';

/**
 * The body with its `token` field's value replaced wherever it is spelled as a form (percent-encoded,
 * `+` for spaces) or JSON (escaped) spells it. A body in which it is not found spelled so is not kept
 * at all (empty): the token may be in it some other way.
 */
export function bodyWithoutToken(body: Uint8Array, payload: unknown): Uint8Array {
  const token = typeof payload === 'object' && payload !== null ? (payload as { token?: unknown }).token : undefined;
  if (typeof token !== 'string' || token === '') return body;
  return bodyWithout(body, [token]);
}

/**
 * The body with each of `values` replaced by `[redacted]` wherever a form or JSON spells it; empty when
 * one of them is not found spelled so (it may be in the body some other way).
 */
export function bodyWithout(body: Uint8Array, values: readonly string[]): Uint8Array {
  let text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  for (const value of values) {
    let found = false;
    for (const s of new Set([
      value,
      encodeURIComponent(value),
      encodeURIComponent(value).replace(/%20/g, '+'),
      JSON.stringify(value).slice(1, -1),
    ])) {
      if (!text.includes(s)) continue;
      found = true;
      text = text.split(s).join(REDACTED);
    }
    if (!found) return new Uint8Array(0);
  }
  return new Uint8Array(Buffer.from(text, 'utf8'));
}
