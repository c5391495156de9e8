/**
 * `verify: {type: "discord", publicKey, toleranceSeconds?}`: Discord signs each
 * interaction with Ed25519 over `X-Signature-Timestamp` + the raw body, the
 * signature in `X-Signature-Ed25519` (hex), checked with the application's
 * public key (hex, from the Developer Portal). A PING (`{"type":1}`), which
 * Discord sends when the endpoint URL is saved, is answered `{"type":1}`
 * directly: nothing is stored. Discord also sends wrongly signed requests
 * then, to see that they are refused.
 */
import { createPublicKey, verify as ed25519Verify, type KeyObject } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { PluginConfigError, type VerifierFactory, type VerifyOutcome, type VerifyRequest } from '../../plugins/define.ts';
import { headerValue } from '../signature-parts.ts';
import { DEFAULT_TOLERANCE_SECONDS } from '../signatures.ts';
import { failClosed } from './tokens.ts';

export const DISCORD_SIGNATURE_HEADER = 'x-signature-ed25519';
export const DISCORD_TIMESTAMP_HEADER = 'x-signature-timestamp';

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the 32 raw key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PUBLIC_KEY = /^[0-9a-fA-F]{64}$/;
const SIGNATURE = /^[0-9a-fA-F]{128}$/;
const TIMESTAMP = /^[0-9]{1,12}$/;

const Options = Type.Object(
  {
    publicKey: Type.String({ minLength: 1, description: "the application's public key (64 hex digits)" }),
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

/** The KeyObject for a raw 32-byte Ed25519 public key given as hex. Throws PluginConfigError. */
export function ed25519PublicKey(hex: string): KeyObject {
  if (!PUBLIC_KEY.test(hex))
    throw new PluginConfigError('publicKey', 'must be 64 hex digits (the public key shown in the Discord Developer Portal)');
  try {
    return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
  } catch {
    throw new PluginConfigError('publicKey', 'is not a valid Ed25519 public key');
  }
}

const PONG: VerifyOutcome = { ok: true, answer: { status: 200, body: { type: 1 } } };

const isPing = (payload: unknown): boolean =>
  typeof payload === 'object' && payload !== null && !Array.isArray(payload) && (payload as { type?: unknown }).type === 1;

export const discordVerifier: VerifierFactory<{ publicKey: string; toleranceSeconds?: number }> = {
  configSchema: Options,
  create(options) {
    const key = ed25519PublicKey(options.publicKey);
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const sig = headerValue(req.headers, DISCORD_SIGNATURE_HEADER);
      const ts = headerValue(req.headers, DISCORD_TIMESTAMP_HEADER);
      if (!sig) return { ok: false, reason: 'missing signature header' };
      if (!SIGNATURE.test(sig)) return { ok: false, reason: 'malformed signature header' };
      if (!ts) return { ok: false, reason: 'missing timestamp' };
      if (!TIMESTAMP.test(ts)) return { ok: false, reason: 'malformed timestamp' };
      const signed = Buffer.concat([Buffer.from(ts, 'latin1'), req.rawBody]);
      if (!ed25519Verify(null, signed, key, Buffer.from(sig, 'hex'))) return { ok: false, reason: 'no signature matches' };
      // checked after the signature, so a stale but genuine request reads as a replay or clock skew, not a forgery
      const age = Math.floor(req.receivedAt / 1000) - Number(ts);
      if (!(Math.abs(age) <= tolerance)) return { ok: false, reason: 'timestamp outside tolerance' };
      return isPing(req.payload) ? PONG : { ok: true };
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }) };
  },
};
