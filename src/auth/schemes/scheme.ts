/**
 * What a provider HMAC scheme is made of (docs/verifiers.md): which header carries the signature, how
 * a configured secret becomes key bytes, and how a request is read into the bytes signed around the
 * body plus the candidate MACs. The HMAC itself and the constant-time comparison live in
 * signatures.ts, so every scheme shares one path.
 */
import type { HeaderBag } from '../signature-parts.ts';

/** Why a request failed verification. For logs only: never carries a secret, a signature or header content. */
export type SignatureFailure =
  | 'missing signature header'
  | 'malformed signature header'
  | 'missing timestamp'
  | 'malformed timestamp'
  | 'missing message id'
  | 'no signature matches'
  | 'timestamp outside tolerance'
  | 'verifier error';

/** What a scheme reads from a request before any MAC is computed. */
export interface SignedParts {
  /** Bytes signed ahead of the raw body (latin1 round-trips header bytes exactly). */
  prefix: string;
  /** Candidate MACs, each exactly the digest's size. */
  candidates: Buffer[];
  /** The signed Unix time in seconds, for schemes that have one. */
  timestamp?: number;
}

export interface Scheme {
  /** Default name of the header carrying the signature (lower case). */
  header: string;
  /** A second name the same signature is sent under by some senders, tried when `header` is absent and not overridden. */
  alsoHeader?: string;
  /** The HMAC's hash; SHA-256 unless the provider signs with SHA-1. */
  digest?: 'sha1';
  /** True when the scheme signs a timestamp, so `toleranceSeconds` applies. */
  timestamped: boolean;
  /** Key bytes for one configured secret, or why the secret cannot be used. */
  key(secret: string): Buffer | string;
  /** Reads the signature header value (already present) and any other headers the scheme signs. */
  read(signature: string, headers: HeaderBag): SignedParts | SignatureFailure;
}

/** Cap on candidate signatures in one header: rotation needs two or three, not hundreds. */
export const MAX_CANDIDATES = 16;

const TIMESTAMP = /^[0-9]{1,12}$/;

/** Secrets used as their UTF-8 bytes, exactly as written (most providers). */
export const utf8Key = (secret: string): Buffer => Buffer.from(secret, 'utf8');

export type Timestamp = { text: string; seconds: number };

/** A timestamp as sent (its exact text is what was signed) and its value in seconds. */
export function timestampFrom(raw: string | undefined): Timestamp | 'missing timestamp' | 'malformed timestamp' {
  if (raw === undefined || raw === '') return 'missing timestamp';
  if (!TIMESTAMP.test(raw)) return 'malformed timestamp';
  return { text: raw, seconds: Number(raw) };
}

/**
 * The `key=value` elements of a header like Stripe's `t=…,v1=…,v1=…` or Paddle's `ts=…;h1=…`: the
 * one value of `timeKey` (twice is malformed) and every value of `macKey` decoded by `decode`
 * (values that do not decode are ignored, as the providers' libraries do).
 */
export function listedMacs(
  signature: string,
  separator: string,
  timeKey: string,
  macKey: string,
  decode: (s: string) => Buffer | undefined,
): { time: string | undefined; candidates: Buffer[] } | 'malformed signature header' {
  let time: string | undefined;
  let times = 0;
  const candidates: Buffer[] = [];
  for (const element of signature.split(separator)) {
    const eq = element.indexOf('=');
    if (eq < 0) continue;
    const k = element.slice(0, eq).trim();
    const v = element.slice(eq + 1).trim();
    if (k === timeKey) {
      time = v;
      times++;
    } else if (k === macKey) {
      const mac = decode(v);
      if (mac) candidates.push(mac);
    }
  }
  if (times > 1 || candidates.length === 0 || candidates.length > MAX_CANDIDATES) return 'malformed signature header';
  return { time, candidates };
}
