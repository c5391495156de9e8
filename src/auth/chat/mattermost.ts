/**
 * `verify: {type: "mattermost", secret}`: a Mattermost outgoing webhook (or
 * slash command) posts its token in the body's `token` field, as a form field
 * or in JSON; it must equal a configured token. Mattermost signs nothing, so
 * the token is the whole credential: keep the hook behind TLS. The request log
 * keeps the body with the token cut out (`keptBody`).
 */
import { Type } from '@sinclair/typebox';
import type { VerifierFactory, VerifyOutcome, VerifyRequest } from '../../plugins/define.ts';
import { bodyWithoutToken, failClosed, MAX_TOKEN_CHARS, matchToken, tokenDigests } from './tokens.ts';

const Secret = Type.String({ minLength: 1, description: "the outgoing webhook's or slash command's token" });
const Options = Type.Object({ secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]) }, { additionalProperties: false });

export const mattermostVerifier: VerifierFactory<{ secret: string | string[] }> = {
  configSchema: Options,
  create(options) {
    const digests = tokenDigests(options.secret);
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const p = req.payload;
      const token =
        typeof p === 'object' && p !== null && !Array.isArray(p) && Object.hasOwn(p, 'token') ? (p as { token: unknown }).token : undefined;
      if (token === undefined || token === '') return { ok: false, reason: 'missing token field' };
      // a repeated form field arrives as an array: refused, as is any other non-string
      if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS) return { ok: false, reason: 'malformed token field' };
      const i = matchToken(digests, token);
      return i < 0 ? { ok: false, reason: 'token does not match' } : { ok: true, secretIndex: i };
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }), keptBody: bodyWithoutToken };
  },
};
