/**
 * `verify: {type: "gitlab", secret}`: GitLab sends a webhook's secret token as it is in
 * `X-Gitlab-Token` with every delivery; it must equal a configured secret (constant time; a list
 * while you rotate). GitLab signs nothing, so the token is the whole credential: serve the hook over
 * TLS only. The request log never keeps the header (auth/credential-headers.ts).
 */
import { Type } from '@sinclair/typebox';
import type { VerifierFactory, VerifyOutcome, VerifyRequest } from '../../plugins/define.ts';
import { failClosed, MAX_TOKEN_CHARS, matchToken, tokenDigests } from '../chat/tokens.ts';
import { headerValue } from '../signature-parts.ts';

export const GITLAB_HEADER = 'x-gitlab-token';

const Secret = Type.String({ minLength: 1, description: "the webhook's secret token" });
const Options = Type.Object({ secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]) }, { additionalProperties: false });

export const gitlabVerifier: VerifierFactory<{ secret: string | string[] }> = {
  configSchema: Options,
  create(options) {
    const digests = tokenDigests(options.secret);
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const value = headerValue(req.headers, GITLAB_HEADER);
      if (!value) return { ok: false, reason: 'missing token header' };
      if (value.length > MAX_TOKEN_CHARS) return { ok: false, reason: 'malformed token header' };
      const i = matchToken(digests, value);
      return i < 0 ? { ok: false, reason: 'token does not match' } : { ok: true, secretIndex: i };
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }) };
  },
};
