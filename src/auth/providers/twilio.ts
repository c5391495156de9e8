/**
 * `verify: {type: "twilio", secret, publicUrl?}`: Twilio's `X-Twilio-Signature`, the base64
 * HMAC-SHA1 keyed by the account's Auth Token (a list while you rotate; a Webhooks Rule's SharedKey
 * secret when it signs with HMAC-SHA256 and says so in `X-Twilio-Webhooks-Signature-Settings`) over the full URL Twilio
 * called followed by the form parameters sorted by name, each name then value with nothing between
 * (a repeated name: its distinct values sorted, each after the name). A JSON body is not in the
 * signature: Twilio adds `bodySHA256` (hex SHA-256 of the body) to the URL's query and signs the URL
 * alone, and the body must match that hash. The URL is `publicUrl` with the request's query, or the
 * one rebuilt from `Host` (./signed-url.ts). Twilio signs inconsistently with and without the
 * default port, so both spellings are tried, as Twilio's own helper does. No timestamp: a captured
 * request can be replayed; `MessageSid` recognises a repeat.
 */
import { createHash, createSecretKey, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { VerifierFactory, VerifyOutcome, VerifyRequest } from '../../plugins/define.ts';
import { failClosed } from '../chat/tokens.ts';
import { headerValue, MAX_HEADER_CHARS, macFromBase64, matchingKey } from '../signature-parts.ts';
import { PublicUrl, publicUrlOption, signedUrl } from './signed-url.ts';

export const TWILIO_HEADER = 'x-twilio-signature';
export const TWILIO_SETTINGS_HEADER = 'x-twilio-webhooks-signature-settings';

const Secret = Type.String({ minLength: 1, description: "the account's Auth Token" });
const Options = Type.Object(
  { secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]), publicUrl: Type.Optional(PublicUrl) },
  { additionalProperties: false },
);

const BODY_HASH = /^[0-9a-fA-F]{64}$/;

/**
 * The HMAC's hash: SHA-1, unless a Webhooks Rule signs with its SharedKey and says so in
 * `X-Twilio-Webhooks-Signature-Settings: key=…,algorithm=HMAC_SHA256`. Undefined for an algorithm
 * Twilio's own helper does not know either.
 */
function digestOf(settings: string | undefined): 'sha1' | 'sha256' | undefined {
  let algorithm = '';
  for (const part of (settings ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq >= 0 && part.slice(0, eq).trim() === 'algorithm')
      algorithm = part
        .slice(eq + 1)
        .trim()
        .toUpperCase();
  }
  if (algorithm === '' || algorithm === 'HMAC_SHA1') return 'sha1';
  return algorithm === 'HMAC_SHA256' ? 'sha256' : undefined;
}

/** The form parameters as Twilio signs them: sorted by name, `name + value` each, distinct values of a repeated name sorted. */
function sortedParams(body: Uint8Array): string {
  const byName = new Map<string, Set<string>>();
  for (const [k, v] of new URLSearchParams(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'))) {
    let values = byName.get(k);
    if (!values) byName.set(k, (values = new Set()));
    values.add(v);
  }
  let out = '';
  for (const name of [...byName.keys()].sort()) for (const v of [...byName.get(name)!].sort()) out += name + v;
  return out;
}

const URL_PARTS = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?([^/?#:]+|\[[^\]]*\])(:[0-9]*)?(.*)$/i;

/**
 * The spellings Twilio may have signed, as its own helper tries them: the URL as sent and as WHATWG URL
 * serialises it, each without a port and with one (the default added when there is none).
 */
function urlSpellings(url: string): string[] {
  const out = new Set<string>();
  let normalised: string | undefined;
  try {
    normalised = new URL(url).href;
  } catch {
    // not parseable: the spelling as sent is all there is
  }
  for (const u of normalised === undefined ? [url] : [url, normalised]) {
    const m = URL_PARTS.exec(u);
    if (!m) {
      out.add(u);
      continue;
    }
    const [, scheme, user = '', host, port, rest] = m;
    out.add(scheme! + user + host + rest);
    out.add(scheme! + user + host! + (port || (scheme!.toLowerCase() === 'https://' ? ':443' : ':80')) + rest);
  }
  return [...out];
}

export const twilioVerifier: VerifierFactory<{ secret: string | string[]; publicUrl?: string }> = {
  configSchema: Options,
  create(options) {
    const publicUrl = publicUrlOption(options.publicUrl);
    const keys = (typeof options.secret === 'string' ? [options.secret] : options.secret).map((s) =>
      createSecretKey(Buffer.from(s, 'utf8')),
    );
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const value = headerValue(req.headers, TWILIO_HEADER);
      if (!value) return { ok: false, reason: 'missing signature header' };
      const digest = digestOf(headerValue(req.headers, TWILIO_SETTINGS_HEADER));
      if (!digest) return { ok: false, reason: 'unsupported signature algorithm' };
      const mac = value.length <= MAX_HEADER_CHARS ? macFromBase64(value, digest === 'sha1' ? 20 : 32) : undefined;
      if (!mac) return { ok: false, reason: 'malformed signature header' };
      const url = signedUrl(req.headers, req.url, publicUrl);
      if (url === undefined) return { ok: false, reason: 'missing host header' };
      const bodyHash = req.query.bodySHA256;
      if (bodyHash !== undefined && !BODY_HASH.test(bodyHash)) return { ok: false, reason: 'malformed bodySHA256' };
      const params = bodyHash === undefined ? sortedParams(req.rawBody) : '';
      let matched = -1;
      for (const spelling of urlSpellings(url)) {
        const i = matchingKey(keys, digest, [Buffer.from(spelling + params, 'utf8')], [mac]);
        if (matched < 0) matched = i;
      }
      if (matched < 0) return { ok: false, reason: 'no signature matches' };
      if (bodyHash !== undefined) {
        const actual = createHash('sha256').update(req.rawBody).digest();
        if (!timingSafeEqual(actual, Buffer.from(bodyHash, 'hex'))) return { ok: false, reason: 'body does not match bodySHA256' };
      }
      return { ok: true, secretIndex: matched };
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }) };
  },
};
