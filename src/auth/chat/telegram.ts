/**
 * `verify: {type: "telegram", secret}`: the `secret_token` given to the Bot
 * API's `setWebhook` comes back in `X-Telegram-Bot-Api-Secret-Token` with
 * every update; it must equal a configured secret. Telegram signs nothing, so
 * the token is the whole credential: keep the hook behind TLS.
 */
import { Type } from '@sinclair/typebox';
import { PluginConfigError, type VerifierFactory } from '../../plugins/define.ts';
import { headerValue } from '../signature-parts.ts';
import { MAX_TOKEN_CHARS, matchToken, secretList, tokenDigests } from './tokens.ts';

export const TELEGRAM_HEADER = 'x-telegram-bot-api-secret-token';
// what setWebhook accepts as secret_token
const TELEGRAM_SECRET = /^[A-Za-z0-9_-]{1,256}$/;

const Secret = Type.String({ minLength: 1, description: 'the secret_token given to setWebhook' });
const Options = Type.Object({ secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]) }, { additionalProperties: false });

export const telegramVerifier: VerifierFactory<{ secret: string | string[] }> = {
  configSchema: Options,
  create(options) {
    secretList(options.secret).forEach((s, i) => {
      const key = typeof options.secret === 'string' ? 'secret' : `secret[${i}]`;
      if (!TELEGRAM_SECRET.test(s))
        throw new PluginConfigError(key, 'must be 1 to 256 characters A-Z, a-z, 0-9, _ or - (what Telegram accepts as secret_token)');
    });
    const digests = tokenDigests(options.secret);
    return {
      verify(req) {
        const value = headerValue(req.headers, TELEGRAM_HEADER);
        if (!value) return { ok: false, reason: 'missing secret token header' };
        if (value.length > MAX_TOKEN_CHARS) return { ok: false, reason: 'malformed secret token header' };
        const i = matchToken(digests, value);
        return i < 0 ? { ok: false, reason: 'secret token does not match' } : { ok: true, secretIndex: i };
      },
    };
  },
};
