/**
 * `verify: {type: "zoom", secret, toleranceSeconds?}`: Zoom's `x-zm-signature`, `v0=` + the hex
 * HMAC-SHA256 of `v0:<x-zm-request-timestamp>:` + the raw body, keyed by the app's secret token (a
 * list while you rotate; auth/schemes/timestamped.ts). Zoom confirms the endpoint URL (when it is
 * saved, and every 72 hours) with a signed `{"event":"endpoint.url_validation","payload":
 * {"plainToken":…}}`; once its signature verifies it is answered `200 {plainToken, encryptedToken}`,
 * `encryptedToken` being the hex HMAC-SHA256 of `plainToken` under the secret that matched, and
 * nothing is stored. An unsigned validation request is refused like any other: answering it would
 * hand anyone an HMAC of their choosing under the secret.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { VerifierFactory, VerifyOutcome, VerifyRequest } from '../../plugins/define.ts';
import { failClosed } from '../chat/tokens.ts';
import { compileVerifier } from '../signatures.ts';

const Secret = Type.String({ minLength: 1, description: "the app's secret token" });
const Options = Type.Object(
  {
    secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]),
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

const MAX_PLAIN_TOKEN_CHARS = 512;

/** The `plainToken` of a URL validation request, or undefined for any other payload. */
function plainTokenOf(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const p = payload as { event?: unknown; payload?: { plainToken?: unknown } | null };
  if (p.event !== 'endpoint.url_validation' || typeof p.payload !== 'object' || p.payload === null) return undefined;
  const t = p.payload.plainToken;
  return typeof t === 'string' && t.length > 0 && t.length <= MAX_PLAIN_TOKEN_CHARS ? t : undefined;
}

export const zoomVerifier: VerifierFactory<{ secret: string | string[]; toleranceSeconds?: number }> = {
  configSchema: Options,
  create(options) {
    const check = compileVerifier({ type: 'zoom', ...options });
    const keys: KeyObject[] = (typeof options.secret === 'string' ? [options.secret] : options.secret).map((s) =>
      createSecretKey(Buffer.from(s, 'utf8')),
    );
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const r = check(req.headers, req.rawBody, req.receivedAt);
      if (!r.ok) return r;
      const plainToken = plainTokenOf(req.payload);
      if (plainToken === undefined) return r;
      const encryptedToken = createHmac('sha256', keys[r.secretIndex]!).update(plainToken, 'utf8').digest('hex');
      return { ...r, answer: { status: 200, body: { plainToken, encryptedToken } } };
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }) };
  },
};
