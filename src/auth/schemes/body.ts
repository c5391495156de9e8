/**
 * HMAC schemes that sign the raw body alone (docs/verifiers.md). They carry no signed timestamp, so
 * a captured request can be replayed; the provider's delivery id (an idempotency key) is what
 * recognises a repeat.
 *
 * | type          | signature header        | MAC                    | encoding                    |
 * |---------------|-------------------------|------------------------|-----------------------------|
 * | `github`      | `X-Hub-Signature-256`   | HMAC-SHA256            | `sha256=<hex>`              |
 * | `hmac-sha256` | `X-Signature`           | HMAC-SHA256            | `sha256=<hex>`, hex, base64 |
 * | `shopify`     | `X-Shopify-Hmac-Sha256` | HMAC-SHA256            | base64                      |
 * | `sentry`      | `Sentry-Hook-Signature` | HMAC-SHA256            | hex                         |
 * | `pagerduty`   | `X-PagerDuty-Signature` | HMAC-SHA256            | `v1=<hex>[,v1=<hex>…]`      |
 * | `jira`        | `X-Hub-Signature`       | HMAC-SHA256            | `sha256=<hex>`              |
 * | `typeform`    | `Typeform-Signature`    | HMAC-SHA256            | `sha256=<base64>`           |
 * | `intercom`    | `X-Hub-Signature`       | HMAC-SHA1              | `sha1=<hex>`                |
 * | `linear`      | `Linear-Signature`      | HMAC-SHA256            | hex (the body's `webhookTimestamp` is checked by auth/providers/linear.ts) |
 */
import { macFromBase64, macFromHex } from '../signature-parts.ts';
import { MAX_CANDIDATES, type Scheme, type SignedParts, utf8Key } from './scheme.ts';

/** One MAC of the body alone, or the failure when `mac` is undefined. */
const single = (mac: Buffer | undefined): SignedParts | 'malformed signature header' =>
  mac ? { prefix: '', candidates: [mac] } : 'malformed signature header';

/** A scheme signing the body with the secret's UTF-8 bytes; `decode` reads the header into the MAC. */
const bodyScheme = (header: string, decode: (signature: string) => Buffer | undefined, digest?: 'sha1'): Scheme => ({
  header,
  timestamped: false,
  key: utf8Key,
  read: (signature) => single(decode(signature)),
  ...(digest ? { digest } : {}),
});

/** The value after `prefix` (matched case-insensitively), decoded; undefined without the prefix. */
const after = (prefix: string, decode: (s: string) => Buffer | undefined) => (signature: string) =>
  signature.slice(0, prefix.length).toLowerCase() === prefix ? decode(signature.slice(prefix.length)) : undefined;

const hex = (s: string) => macFromHex(s);
const base64 = (s: string) => macFromBase64(s);

export const github = bodyScheme('x-hub-signature-256', after('sha256=', hex));

export const hmacSha256 = bodyScheme('x-signature', (signature) => {
  const value = /^sha256=/i.test(signature) ? signature.slice(7) : signature;
  // 64 hex digits are also valid base64 characters, so hex is tried first; a
  // 32-byte base64 value is 43 or 44 characters and can never be mistaken for it.
  return macFromHex(value) ?? macFromBase64(value);
});

export const shopify = bodyScheme('x-shopify-hmac-sha256', base64);

export const sentry = bodyScheme('sentry-hook-signature', hex);

/** Atlassian's admin webhooks with a secret: WebSub's `method=signature` form. */
export const jira = bodyScheme('x-hub-signature', after('sha256=', hex));

export const typeform = bodyScheme('typeform-signature', after('sha256=', base64));

export const intercom = bodyScheme(
  'x-hub-signature',
  after('sha1=', (s) => macFromHex(s, 20)),
  'sha1',
);

export const linear = bodyScheme('linear-signature', hex);

/** PagerDuty lists one `v1=<hex>` per signing secret while a secret rotates; other versions are ignored. */
export const pagerduty: Scheme = {
  header: 'x-pagerduty-signature',
  timestamped: false,
  key: utf8Key,
  read(signature) {
    const candidates: Buffer[] = [];
    for (const element of signature.split(',')) {
      const v = element.trim();
      const mac = v.startsWith('v1=') ? macFromHex(v.slice(3)) : undefined;
      if (mac) candidates.push(mac);
    }
    if (candidates.length === 0 || candidates.length > MAX_CANDIDATES) return 'malformed signature header';
    return { prefix: '', candidates };
  },
};
