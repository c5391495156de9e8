/**
 * The five provider signature schemes (SECURITY.md, "What a signature secret grants"). Each one says which header
 * carries the signature, how a configured secret becomes HMAC key bytes, and
 * how to read a request into the bytes signed ahead of the body plus the
 * candidate MACs. The HMAC itself and the comparison live in signatures.ts, so
 * every scheme shares one constant-time path.
 *
 * All five are HMAC-SHA256:
 *
 * | type                | signature header            | signed bytes                     | MAC encoding                     |
 * |---------------------|-----------------------------|----------------------------------|----------------------------------|
 * | `github`            | `X-Hub-Signature-256`       | body                             | `sha256=<hex>`                   |
 * | `stripe`            | `Stripe-Signature`          | `<t>.` + body                    | `t=<t>,v1=<hex>[,v1=<hex>…]`     |
 * | `slack`             | `X-Slack-Signature`         | `v0:<ts>:` + body                | `v0=<hex>`                       |
 * | `standard-webhooks` | `webhook-signature`         | `<webhook-id>.<ts>.` + body      | `v1,<base64>[ v1,<base64>…]`     |
 * | `hmac-sha256`       | `X-Signature` (configurable)| body                             | `sha256=<hex>`, hex, or base64   |
 */
import { decodeBase64Strict } from '../plugin-api/base64.ts';
import { headerValue, macFromBase64, macFromHex, type HeaderBag } from './signature-parts.ts';

/** The HMAC `verify.type` values (auth/verifiers.ts registers one verifier for each). */
export type SignatureType = 'github' | 'stripe' | 'slack' | 'standard-webhooks' | 'hmac-sha256';

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
  /** Candidate MACs, each exactly 32 bytes. */
  candidates: Buffer[];
  /** The signed Unix time in seconds, for schemes that have one. */
  timestamp?: number;
}

export interface Scheme {
  /** Default name of the header carrying the signature (lower case). */
  header: string;
  /** True when the scheme signs a timestamp, so `toleranceSeconds` applies. */
  timestamped: boolean;
  /** Key bytes for one configured secret, or why the secret cannot be used. */
  key(secret: string): Buffer | string;
  /** Reads the signature header value (already present) and any other headers the scheme signs. */
  read(signature: string, headers: HeaderBag): SignedParts | SignatureFailure;
}

/** Cap on candidate signatures in one header: rotation needs two or three, not hundreds. */
export const MAX_CANDIDATES = 16;

const MAX_ID_CHARS = 256;
const TIMESTAMP = /^[0-9]{1,12}$/;
const utf8Key = (secret: string): Buffer => Buffer.from(secret, 'utf8');

type Timestamp = { text: string; seconds: number };

/** A timestamp as sent (its exact text is what was signed) and its value in seconds. */
function timestampFrom(raw: string | undefined): Timestamp | 'missing timestamp' | 'malformed timestamp' {
  if (raw === undefined || raw === '') return 'missing timestamp';
  if (!TIMESTAMP.test(raw)) return 'malformed timestamp';
  return { text: raw, seconds: Number(raw) };
}

const github: Scheme = {
  header: 'x-hub-signature-256',
  timestamped: false,
  key: utf8Key,
  read(signature) {
    const m = /^sha256=(.*)$/i.exec(signature);
    const mac = m ? macFromHex(m[1]!) : undefined;
    return mac ? { prefix: '', candidates: [mac] } : 'malformed signature header';
  },
};

const stripe: Scheme = {
  header: 'stripe-signature',
  timestamped: true,
  // Stripe signs with the whole `whsec_…` string as the key, prefix included.
  key: utf8Key,
  read(signature) {
    let t: string | undefined;
    let tCount = 0;
    const candidates: Buffer[] = [];
    for (const element of signature.split(',')) {
      const eq = element.indexOf('=');
      if (eq < 0) continue;
      const k = element.slice(0, eq).trim();
      const v = element.slice(eq + 1).trim();
      if (k === 't') {
        t = v;
        tCount++;
      } else if (k === 'v1') {
        const mac = macFromHex(v);
        if (mac) candidates.push(mac);
      }
      // v0 (test-mode HMAC-SHA1 in older deliveries) and unknown schemes are ignored, as Stripe's libraries do.
    }
    if (tCount > 1) return 'malformed signature header';
    if (candidates.length === 0 || candidates.length > MAX_CANDIDATES) return 'malformed signature header';
    const ts = timestampFrom(t);
    if (typeof ts === 'string') return ts;
    return { prefix: `${ts.text}.`, candidates, timestamp: ts.seconds };
  },
};

const slack: Scheme = {
  header: 'x-slack-signature',
  timestamped: true,
  key: utf8Key,
  read(signature, headers) {
    const m = /^v0=(.*)$/.exec(signature);
    const mac = m ? macFromHex(m[1]!) : undefined;
    if (!mac) return 'malformed signature header';
    const ts = timestampFrom(headerValue(headers, 'x-slack-request-timestamp'));
    if (typeof ts === 'string') return ts;
    return { prefix: `v0:${ts.text}:`, candidates: [mac], timestamp: ts.seconds };
  },
};

const standardWebhooks: Scheme = {
  header: 'webhook-signature',
  timestamped: true,
  key(secret) {
    // Secrets are base64, usually shown with a `whsec_` prefix; both forms are accepted.
    const bytes = decodeBase64Strict(secret.startsWith('whsec_') ? secret.slice(6) : secret);
    return bytes ?? 'is not a Standard Webhooks secret (expected whsec_ followed by base64)';
  },
  read(signature, headers) {
    const candidates: Buffer[] = [];
    for (const token of signature.split(' ')) {
      if (!token.startsWith('v1,')) continue; // other versions (v1a is asymmetric) are not ours to check
      const mac = macFromBase64(token.slice(3));
      if (mac) candidates.push(mac);
    }
    if (candidates.length === 0 || candidates.length > MAX_CANDIDATES) return 'malformed signature header';
    const id = headerValue(headers, 'webhook-id');
    if (!id) return 'missing message id';
    if (id.length > MAX_ID_CHARS) return 'malformed signature header';
    const ts = timestampFrom(headerValue(headers, 'webhook-timestamp'));
    if (typeof ts === 'string') return ts;
    return { prefix: `${id}.${ts.text}.`, candidates, timestamp: ts.seconds };
  },
};

const hmacSha256: Scheme = {
  header: 'x-signature',
  timestamped: false,
  key: utf8Key,
  read(signature) {
    const value = /^sha256=/i.test(signature) ? signature.slice(7) : signature;
    // 64 hex digits are also valid base64 characters, so hex is tried first; a
    // 32-byte base64 value is 43 or 44 characters and can never be mistaken for it.
    const mac = macFromHex(value) ?? macFromBase64(value);
    return mac ? { prefix: '', candidates: [mac] } : 'malformed signature header';
  },
};

export const SCHEMES: Readonly<Record<SignatureType, Scheme>> = {
  github,
  stripe,
  slack,
  'standard-webhooks': standardWebhooks,
  'hmac-sha256': hmacSha256,
};
