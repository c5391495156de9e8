/**
 * `verify: {type: "linear", secret, toleranceSeconds?}`: Linear's `Linear-Signature`, the hex
 * HMAC-SHA256 of the raw body keyed by the webhook's signing secret (a list while you rotate;
 * auth/schemes/body.ts). Linear signs no header timestamp; the body's `webhookTimestamp`
 * (milliseconds), covered by the signature, must be within `toleranceSeconds` (default 300) of the
 * service's clock, checked after the signature.
 */
import { Type } from '@sinclair/typebox';
import type { VerifierFactory, VerifyOutcome, VerifyRequest } from '../../plugins/define.ts';
import { failClosed } from '../chat/tokens.ts';
import { compileVerifier, DEFAULT_TOLERANCE_SECONDS } from '../signatures.ts';

const Secret = Type.String({ minLength: 1, description: "the webhook's signing secret" });
const Options = Type.Object(
  {
    secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]),
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

/** The body's `webhookTimestamp`, or why there is none to check. */
function timestampOf(payload: unknown): number | 'missing timestamp' | 'malformed timestamp' {
  const t = typeof payload === 'object' && payload !== null ? (payload as { webhookTimestamp?: unknown }).webhookTimestamp : undefined;
  if (t === undefined) return 'missing timestamp';
  return typeof t === 'number' && Number.isSafeInteger(t) && t >= 0 ? t : 'malformed timestamp';
}

export const linearVerifier: VerifierFactory<{ secret: string | string[]; toleranceSeconds?: number }> = {
  configSchema: Options,
  create(options) {
    const check = compileVerifier({ type: 'linear', secret: options.secret });
    const toleranceMs = (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) * 1000;
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const r = check(req.headers, req.rawBody, req.receivedAt);
      if (!r.ok) return r;
      const t = timestampOf(req.payload);
      if (typeof t === 'string') return { ok: false, reason: t };
      // written so that NaN (a broken clock) fails closed
      if (!(Math.abs(req.receivedAt - t) <= toleranceMs)) return { ok: false, reason: 'timestamp outside tolerance' };
      return r;
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }) };
  },
};
