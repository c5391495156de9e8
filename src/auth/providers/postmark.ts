/**
 * `verify: {type: "postmark", secret: "user:password"}`: Postmark signs nothing; it authenticates by
 * HTTP basic auth written into the webhook URL (`https://user:password@host/hooks/postmark`), which
 * arrives as `Authorization: Basic …`. The decoded `user:password` must equal a configured secret
 * (constant time; a list while you rotate). The request log never keeps the header
 * (auth/credential-headers.ts); serve the hook over TLS only.
 */
import { Type } from '@sinclair/typebox';
import { PluginConfigError, type VerifierFactory, type VerifyOutcome, type VerifyRequest } from '../../plugins/define.ts';
import { decodeBase64Strict } from '../../plugin-api/base64.ts';
import { failClosed, MAX_TOKEN_CHARS, matchToken, secretList, tokenDigests } from '../chat/tokens.ts';
import { headerValue } from '../signature-parts.ts';

const Secret = Type.String({ minLength: 3, description: 'user:password, as written into the webhook URL' });
const Options = Type.Object({ secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]) }, { additionalProperties: false });

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2})$/i;

export const postmarkVerifier: VerifierFactory<{ secret: string | string[] }> = {
  configSchema: Options,
  create(options) {
    secretList(options.secret).forEach((s, i) => {
      const key = typeof options.secret === 'string' ? 'secret' : `secret[${i}]`;
      // RFC 7617: the user id cannot hold a colon; the password may
      if (s.indexOf(':') < 1) throw new PluginConfigError(key, 'must be user:password (the credentials written into the webhook URL)');
    });
    const digests = tokenDigests(options.secret);
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const value = headerValue(req.headers, 'authorization');
      if (!value) return { ok: false, reason: 'missing authorization header' };
      const m = value.length <= MAX_TOKEN_CHARS ? BASIC.exec(value) : null;
      const decoded = m ? decodeBase64Strict(m[1]!) : undefined;
      if (!decoded) return { ok: false, reason: 'malformed authorization header' };
      const i = matchToken(digests, decoded.toString('utf8'));
      return i < 0 ? { ok: false, reason: 'credentials do not match' } : { ok: true, secretIndex: i };
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }) };
  },
};
