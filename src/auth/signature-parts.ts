/**
 * Small, total helpers for signature verification: reading a header,
 * decoding a MAC from hex or base64, and comparing MACs in constant time (one key after
 * another, every candidate, no early exit).
 * None of them throws on hostile input; a value that does not have the exact
 * expected shape is simply "not a candidate".
 */
import { createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';

/** Request headers as Node and Koa hand them over (`IncomingHttpHeaders` fits). */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

/** HMAC-SHA256 output size; every candidate MAC is decoded to exactly this many bytes or dropped. */
export const MAC_BYTES = 32 as const;

/** Longest signature-bearing header we parse; real ones are well under 1 KiB. */
export const MAX_HEADER_CHARS = 8192;

/** HTTP header field names are RFC 9110 tokens. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The value of header `name` (lower case), case-insensitively. Repeated headers
 * are joined with ", " as Node does for unknown headers, so a duplicated
 * signature header turns into a value the scheme parsers refuse or ignore.
 */
export function headerValue(headers: HeaderBag, name: string): string | undefined {
  let v = Object.hasOwn(headers, name) ? headers[name] : undefined;
  if (v === undefined) {
    // Node lower-cases names already; this only serves callers with hand-built objects.
    for (const key of Object.keys(headers)) {
      if (key.length === name.length && key.toLowerCase() === name) {
        v = headers[key];
        break;
      }
    }
  }
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : v.join(', ');
  return s.trim();
}

/** The MAC sizes the schemes use: HMAC-SHA256 (32 bytes) and HMAC-SHA1 (20 bytes). */
export type MacBytes = 32 | 20;

const HEX_MAC: Record<MacBytes, RegExp> = { 32: /^[0-9a-fA-F]{64}$/, 20: /^[0-9a-fA-F]{40}$/ };
// n bytes in base64 are ceil(4n/3) significant characters plus one "=" of padding (for 32 and 20
// bytes alike); the URL-safe alphabet is accepted too, padding optional.
const B64_MAC: Record<MacBytes, RegExp> = { 32: /^[A-Za-z0-9+/]{43}=?$/, 20: /^[A-Za-z0-9+/]{27}=?$/ };
const B64URL_MAC: Record<MacBytes, RegExp> = { 32: /^[A-Za-z0-9_-]{43}=?$/, 20: /^[A-Za-z0-9_-]{27}=?$/ };

/** A hex-encoded MAC, or undefined when `s` is not exactly `2 × bytes` hex digits. */
export function macFromHex(s: string, bytes: MacBytes = MAC_BYTES): Buffer | undefined {
  return HEX_MAC[bytes].test(s) ? Buffer.from(s, 'hex') : undefined;
}

/** A base64 (standard or URL-safe) MAC, or undefined when `s` does not encode exactly `bytes` bytes. */
export function macFromBase64(s: string, bytes: MacBytes = MAC_BYTES): Buffer | undefined {
  if (B64_MAC[bytes].test(s)) return Buffer.from(s, 'base64');
  if (B64URL_MAC[bytes].test(s)) return Buffer.from(s, 'base64url');
  return undefined;
}

/**
 * Constant-time equality of a computed MAC and a candidate. Candidates are
 * decoded to 32 bytes before they get here; a wrong length still runs the full
 * comparison (against a zero buffer) so the time taken never depends on where
 * or whether the inputs differ.
 */
export function macEquals(expected: Buffer, candidate: Buffer): boolean {
  const sameLength = candidate.length === expected.length;
  const other = sameLength ? candidate : Buffer.alloc(expected.length);
  return timingSafeEqual(expected, other) && sameLength;
}

/**
 * The index of the first key whose HMAC of the concatenated `parts` equals a candidate, or -1. Every
 * key and every candidate is compared, so the time taken does not tell which one matched.
 */
export function matchingKey(
  keys: readonly KeyObject[],
  digest: 'sha1' | 'sha256',
  parts: readonly Uint8Array[],
  candidates: readonly Buffer[],
): number {
  let matched = -1;
  for (let i = 0; i < keys.length; i++) {
    const hmac = createHmac(digest, keys[i]!);
    for (const part of parts) hmac.update(part);
    const mac = hmac.digest();
    for (const candidate of candidates) if (macEquals(mac, candidate) && matched < 0) matched = i;
  }
  return matched;
}
