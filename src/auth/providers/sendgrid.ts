/**
 * `verify: {type: "sendgrid", publicKey, toleranceSeconds?}`: SendGrid's Signed Event Webhook. The
 * signature in `X-Twilio-Email-Event-Webhook-Signature` is a base64 DER ECDSA P-256 signature with
 * SHA-256 over `X-Twilio-Email-Event-Webhook-Timestamp` followed by the raw body, checked with the
 * verification key SendGrid shows (base64 DER SubjectPublicKeyInfo; PEM is accepted too; a list
 * while you rotate). A timestamp more than `toleranceSeconds` (default 300) from the service's clock
 * is refused, after the signature is checked.
 */
import { createPublicKey, type KeyObject, verify as verifySignature } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { PluginConfigError, type VerifierFactory, type VerifyOutcome, type VerifyRequest } from '../../plugins/define.ts';
import { decodeBase64Strict } from '../../plugin-api/base64.ts';
import { failClosed } from '../chat/tokens.ts';
import { headerValue } from '../signature-parts.ts';
import { timestampFrom } from '../schemes/scheme.ts';
import { DEFAULT_TOLERANCE_SECONDS } from '../signatures.ts';

export const SENDGRID_SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const SENDGRID_TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

const Key = Type.String({ minLength: 1, description: 'the verification key SendGrid shows (base64)' });
const Options = Type.Object(
  {
    publicKey: Type.Union([Key, Type.Array(Key, { minItems: 1 })]),
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

/** A DER ECDSA P-256 signature is at most 72 bytes, 96 base64 characters. */
const MAX_SIGNATURE_CHARS = 128;

/** The KeyObject for one configured key; throws PluginConfigError naming it. */
function p256Key(text: string, path: string): KeyObject {
  let key: KeyObject | undefined;
  try {
    const trimmed = text.trim();
    if (trimmed.startsWith('-----BEGIN')) key = createPublicKey(trimmed);
    else {
      const der = decodeBase64Strict(trimmed);
      if (der) key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    }
  } catch {
    key = undefined;
  }
  if (!key) throw new PluginConfigError(path, 'is not a public key (expected the base64 verification key SendGrid shows)');
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new PluginConfigError(path, 'is not an ECDSA P-256 public key, which SendGrid signs with');
  return key;
}

/** Whether `signature` (DER) signs `data` under `key`; a signature that is not valid DER is simply not valid. */
function ecdsaValid(key: KeyObject, data: Buffer, signature: Buffer): boolean {
  try {
    return verifySignature('sha256', data, { key, dsaEncoding: 'der' }, signature);
  } catch {
    return false;
  }
}

export const sendgridVerifier: VerifierFactory<{ publicKey: string | string[]; toleranceSeconds?: number }> = {
  configSchema: Options,
  create(options) {
    const list = typeof options.publicKey === 'string' ? [options.publicKey] : options.publicKey;
    const keys = list.map((k, i) => p256Key(k, typeof options.publicKey === 'string' ? 'publicKey' : `publicKey[${i}]`));
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const value = headerValue(req.headers, SENDGRID_SIGNATURE_HEADER);
      if (!value) return { ok: false, reason: 'missing signature header' };
      const signature = value.length <= MAX_SIGNATURE_CHARS ? decodeBase64Strict(value) : undefined;
      if (!signature) return { ok: false, reason: 'malformed signature header' };
      const ts = timestampFrom(headerValue(req.headers, SENDGRID_TIMESTAMP_HEADER));
      if (typeof ts === 'string') return { ok: false, reason: ts };
      const signed = Buffer.concat([Buffer.from(ts.text, 'latin1'), req.rawBody]);
      let matched = -1;
      keys.forEach((key, i) => {
        if (ecdsaValid(key, signed, signature) && matched < 0) matched = i;
      });
      if (matched < 0) return { ok: false, reason: 'no signature matches' };
      const age = Math.floor(req.receivedAt / 1000) - ts.seconds;
      // written so that NaN (a broken clock) fails closed
      if (!(Math.abs(age) <= tolerance)) return { ok: false, reason: 'timestamp outside tolerance' };
      return { ok: true, secretIndex: matched };
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }) };
  },
};
