/**
 * `verify: {type: "meta", secret, verifyToken?}` for WhatsApp Cloud API and
 * Messenger webhooks:
 *
 * - `POST`: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`
 *   keyed by the app secret (the same scheme as GitHub's, so the same code);
 * - `GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`: Meta's
 *   subscription handshake, answered with the challenge as `text/plain` when
 *   the verify token matches, `403` otherwise.
 */
import { Type } from '@sinclair/typebox';
import type { HandshakeOutcome, HandshakeRequest, VerifierFactory, VerifyOutcome } from '../../plugins/define.ts';
import { compileVerifier } from '../signatures.ts';
import { failClosed, MAX_TOKEN_CHARS, matchToken, tokenDigests } from './tokens.ts';

const Secret = Type.String({ minLength: 1, description: 'the app secret' });
const Options = Type.Object(
  {
    secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]),
    verifyToken: Type.Optional(Type.String({ minLength: 1, description: 'the verify token entered with the callback URL' })),
  },
  { additionalProperties: false },
);

/** Meta's challenges are numbers; anything printable up to this length is echoed. */
const CHALLENGE = /^[\x21-\x7e]{1,512}$/;

export const metaVerifier: VerifierFactory<{ secret: string | string[]; verifyToken?: string }> = {
  configSchema: Options,
  create(options) {
    const check = compileVerifier({ type: 'github', secret: options.secret });
    const verifyToken = options.verifyToken === undefined ? undefined : tokenDigests(options.verifyToken);
    const handshake = (req: HandshakeRequest): HandshakeOutcome => {
      if (!verifyToken) return { ok: false, reason: 'no verifyToken is configured' };
      const q = req.query;
      if (q['hub.mode'] !== 'subscribe') return { ok: false, reason: 'not a subscription handshake' };
      const token = q['hub.verify_token'];
      if (!token || token.length > MAX_TOKEN_CHARS || matchToken(verifyToken, token) < 0)
        return { ok: false, reason: 'verify token does not match' };
      const challenge = q['hub.challenge'];
      if (!challenge || !CHALLENGE.test(challenge)) return { ok: false, reason: 'missing or malformed challenge' };
      return { ok: true, answer: { status: 200, text: challenge } };
    };
    return {
      verify: (req): VerifyOutcome => check(req.headers, req.rawBody, req.receivedAt),
      handshake: failClosed(handshake, { ok: false, reason: 'verifier error' }),
    };
  },
};
