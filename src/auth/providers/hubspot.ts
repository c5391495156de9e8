/**
 * `verify: {type: "hubspot", secret, publicUrl?, toleranceSeconds?}`: HubSpot's v3 request signature.
 * `X-HubSpot-Signature-v3` is the base64 HMAC-SHA256, keyed by the app's client secret (a list while
 * you rotate), of `POST` + the full request URI + the raw body + `X-HubSpot-Request-Timestamp`
 * (milliseconds), with the URI's `%3A %2F %3F %40 %21 %24 %27 %28 %29 %2A %2C %3B` decoded as HubSpot
 * says to. The URI is `publicUrl` with the request's query, or the one rebuilt from `Host`
 * (./signed-url.ts). A timestamp more than `toleranceSeconds` (default 300, HubSpot's five minutes)
 * from the service's clock is refused, after the signature is checked.
 */
import { createSecretKey } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { VerifierFactory, VerifyOutcome, VerifyRequest } from '../../plugins/define.ts';
import { failClosed } from '../chat/tokens.ts';
import { headerValue, MAX_HEADER_CHARS, macFromBase64, matchingKey } from '../signature-parts.ts';
import { DEFAULT_TOLERANCE_SECONDS } from '../signatures.ts';
import { PublicUrl, publicUrlOption, signedUrl } from './signed-url.ts';

export const HUBSPOT_SIGNATURE_HEADER = 'x-hubspot-signature-v3';
export const HUBSPOT_TIMESTAMP_HEADER = 'x-hubspot-request-timestamp';

const Secret = Type.String({ minLength: 1, description: "the app's client secret" });
const Options = Type.Object(
  {
    secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]),
    publicUrl: Type.Optional(PublicUrl),
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

const TIMESTAMP_MS = /^[0-9]{1,15}$/;
const DECODED: Record<string, string> = {
  '3a': ':',
  '2f': '/',
  '3f': '?',
  '40': '@',
  '21': '!',
  '24': '$',
  '27': "'",
  '28': '(',
  '29': ')',
  '2a': '*',
  '2c': ',',
  '3b': ';',
};

/** The URI as HubSpot signs it: the listed percent-escapes decoded, any other left as sent. */
export const hubspotUri = (url: string): string =>
  url.replace(/%(3[AFB]|2[FC14789A]|40)/gi, (m, code: string) => DECODED[code.toLowerCase()] ?? m);

export const hubspotVerifier: VerifierFactory<{ secret: string | string[]; publicUrl?: string; toleranceSeconds?: number }> = {
  configSchema: Options,
  create(options) {
    const publicUrl = publicUrlOption(options.publicUrl);
    const keys = (typeof options.secret === 'string' ? [options.secret] : options.secret).map((s) =>
      createSecretKey(Buffer.from(s, 'utf8')),
    );
    const toleranceMs = (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) * 1000;
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const value = headerValue(req.headers, HUBSPOT_SIGNATURE_HEADER);
      if (!value) return { ok: false, reason: 'missing signature header' };
      const mac = value.length <= MAX_HEADER_CHARS ? macFromBase64(value) : undefined;
      if (!mac) return { ok: false, reason: 'malformed signature header' };
      const ts = headerValue(req.headers, HUBSPOT_TIMESTAMP_HEADER);
      if (!ts) return { ok: false, reason: 'missing timestamp' };
      if (!TIMESTAMP_MS.test(ts)) return { ok: false, reason: 'malformed timestamp' };
      const url = signedUrl(req.headers, req.url, publicUrl);
      if (url === undefined) return { ok: false, reason: 'missing host header' };
      const parts = [Buffer.from(`POST${hubspotUri(url)}`, 'utf8'), req.rawBody, Buffer.from(ts, 'latin1')];
      const matched = matchingKey(keys, 'sha256', parts, [mac]);
      if (matched < 0) return { ok: false, reason: 'no signature matches' };
      // written so that NaN (a broken clock) fails closed
      if (!(Math.abs(req.receivedAt - Number(ts)) <= toleranceMs)) return { ok: false, reason: 'timestamp outside tolerance' };
      return { ok: true, secretIndex: matched };
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }) };
  },
};
