/**
 * Signing an event the Standard Webhooks way (docs/callbacks.md, "Signing"): the HMAC-SHA256 of
 * `<id>.<timestamp>.<body>`, keyed with the secret's bytes, sent as `v1,<base64>`.
 */
import { createHmac } from 'node:crypto';
import { decodeBase64Strict } from '../plugin-api/base64.ts';

/** Standard Webhooks asks for secrets of 24 to 64 bytes. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

/** The key of a secret written `whsec_<base64>` (the prefix may be left out), or what is wrong with it. */
export function callbackKey(secret: string): Buffer | string {
  const bytes = decodeBase64Strict(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  if (!bytes)
    return 'is not a Standard Webhooks secret: expected whsec_ followed by base64 (make one with: echo "whsec_$(openssl rand -base64 32)")';
  if (bytes.length < MIN_KEY_BYTES || bytes.length > MAX_KEY_BYTES)
    return `must hold ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes once decoded, not ${bytes.length}`;
  return bytes;
}

/** The three Standard Webhooks headers of one attempt at sending `body` as message `id` at `seconds`. */
export function signatureHeaders(key: Buffer, id: string, seconds: number, body: string): Record<string, string> {
  const timestamp = String(seconds);
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` };
}
