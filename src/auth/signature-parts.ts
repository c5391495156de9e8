/**
 * Small, total helpers for signature verification: reading a header,
 * decoding a MAC from hex or base64, and comparing MACs in constant time.
 * None of them throws on hostile input; a value that does not have the exact
 * expected shape is simply "not a candidate".
 */
import { timingSafeEqual } from 'node:crypto';

/** Request headers as Node and Koa hand them over (`IncomingHttpHeaders` fits). */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

/** HMAC-SHA256 output size; every candidate MAC is decoded to exactly this many bytes or dropped. */
export const MAC_BYTES = 32;

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

const HEX_MAC = /^[0-9a-fA-F]{64}$/;
// 32 bytes in base64 are 43 significant characters plus one "=" of padding;
// the URL-safe alphabet is accepted too, padding optional.
const B64_MAC = /^[A-Za-z0-9+/]{43}=?$/;
const B64URL_MAC = /^[A-Za-z0-9_-]{43}=?$/;

/** A hex-encoded MAC, or undefined when `s` is not exactly 64 hex digits. */
export function macFromHex(s: string): Buffer | undefined {
  return HEX_MAC.test(s) ? Buffer.from(s, 'hex') : undefined;
}

/** A base64 (standard or URL-safe) MAC, or undefined when `s` does not encode exactly 32 bytes. */
export function macFromBase64(s: string): Buffer | undefined {
  if (B64_MAC.test(s)) return Buffer.from(s, 'base64');
  if (B64URL_MAC.test(s)) return Buffer.from(s, 'base64url');
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
