/**
 * HMAC schemes that sign a timestamp with the body (docs/verifiers.md), so `toleranceSeconds`
 * (default 300) bounds how long a captured request can be replayed.
 *
 * | type                | signature header (+ timestamp header)                   | signed bytes        | encoding                       |
 * |---------------------|---------------------------------------------------------|---------------------|--------------------------------|
 * | `stripe`            | `Stripe-Signature`                                      | `<t>.` + body       | `t=<t>,v1=<hex>[,v1=<hex>…]`   |
 * | `calendly`          | `Calendly-Webhook-Signature`                            | `<t>.` + body       | `t=<t>,v1=<hex>`               |
 * | `paddle`            | `Paddle-Signature`                                      | `<ts>:` + body      | `ts=<ts>;h1=<hex>[;h1=<hex>…]` |
 * | `slack`             | `X-Slack-Signature` (+ `X-Slack-Request-Timestamp`)     | `v0:<ts>:` + body   | `v0=<hex>`                     |
 * | `zoom`              | `x-zm-signature` (+ `x-zm-request-timestamp`)           | `v0:<ts>:` + body   | `v0=<hex>`                     |
 * | `standard-webhooks` | `webhook-signature` (+ `webhook-id`, `webhook-timestamp`), or the same as `svix-*` | `<id>.<ts>.` + body | `v1,<base64>[ v1,<base64>…]`   |
 */
import { decodeBase64Strict } from '../../plugin-api/base64.ts';
import { headerValue, macFromBase64, macFromHex } from '../signature-parts.ts';
import { listedMacs, MAX_CANDIDATES, type Scheme, timestampFrom, utf8Key } from './scheme.ts';

const MAX_ID_CHARS = 256;
const hex = (s: string) => macFromHex(s);

/**
 * `<time>=<t><sep><mac>=<hex>…`, signed as `<t><joiner>` + body: Stripe's layout, which Calendly
 * copies and Paddle writes with `;` and `:`.
 */
function listedScheme(header: string, separator: string, timeKey: string, macKey: string, joiner: string): Scheme {
  return {
    header,
    timestamped: true,
    key: utf8Key,
    read(signature) {
      const listed = listedMacs(signature, separator, timeKey, macKey, hex);
      if (typeof listed === 'string') return listed;
      const ts = timestampFrom(listed.time);
      if (typeof ts === 'string') return ts;
      return { prefix: `${ts.text}${joiner}`, candidates: listed.candidates, timestamp: ts.seconds };
    },
  };
}

/** `v0=<hex>` over `v0:<ts>:` + body, the timestamp in its own header: Slack's layout, which Zoom copies. */
function v0Scheme(header: string, timestampHeader: string): Scheme {
  return {
    header,
    timestamped: true,
    key: utf8Key,
    read(signature, headers) {
      const mac = signature.startsWith('v0=') ? hex(signature.slice(3)) : undefined;
      if (!mac) return 'malformed signature header';
      const ts = timestampFrom(headerValue(headers, timestampHeader));
      if (typeof ts === 'string') return ts;
      return { prefix: `v0:${ts.text}:`, candidates: [mac], timestamp: ts.seconds };
    },
  };
}

// Stripe signs with the whole `whsec_…` string as the key, prefix included; v0 (test-mode
// HMAC-SHA1 in older deliveries) and unknown schemes are ignored, as Stripe's libraries do.
export const stripe = listedScheme('stripe-signature', ',', 't', 'v1', '.');
export const calendly = listedScheme('calendly-webhook-signature', ',', 't', 'v1', '.');
// Paddle Billing; the secret key (`pdl_ntfset_…`) is the key as written.
export const paddle = listedScheme('paddle-signature', ';', 'ts', 'h1', ':');

export const slack = v0Scheme('x-slack-signature', 'x-slack-request-timestamp');
export const zoom = v0Scheme('x-zm-signature', 'x-zm-request-timestamp');

// Svix, which Standard Webhooks grew from, sends the same three headers as svix-id, svix-timestamp and
// svix-signature (Clerk, Resend, …); a request carries one family or the other.
export const standardWebhooks: Scheme = {
  header: 'webhook-signature',
  alsoHeader: 'svix-signature',
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
    const family = headerValue(headers, 'webhook-id') ? 'webhook' : 'svix';
    const id = headerValue(headers, `${family}-id`);
    if (!id) return 'missing message id';
    if (id.length > MAX_ID_CHARS) return 'malformed signature header';
    const ts = timestampFrom(headerValue(headers, `${family}-timestamp`));
    if (typeof ts === 'string') return ts;
    return { prefix: `${id}.${ts.text}.`, candidates, timestamp: ts.seconds };
  },
};
