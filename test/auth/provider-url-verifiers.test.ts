/**
 * The schemes that sign the URL (src/auth/providers/twilio.ts, hubspot.ts): requests signed by the
 * providers' own SDKs (`twilio`'s getExpectedTwilioSignature, `@hubspot/api-client`'s Signature) for
 * the URL as the provider called it, rebuilt from `Host` and `X-Forwarded-Proto` or given as
 * `publicUrl` (docs/verifiers.md, "Schemes that sign the URL").
 */
import { createHmac } from 'node:crypto';
import { Signature } from '@hubspot/api-client';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { PluginConfigError } from '../../src/plugins/define.ts';
import { makeVerifier, NOW_MS, verifyRequest } from '../helpers/verifiers.ts';

const proxied = { host: 'hooks.example.com', 'x-forwarded-proto': 'https' };

/** A request as it reaches the service: `url` is the path and query as sent. */
function arriving(url: string, body: string, headers: Record<string, string>, contentType = 'application/x-www-form-urlencoded') {
  const query = Object.fromEntries(new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : ''));
  return verifyRequest({ url, query, body, headers: { ...proxied, 'content-type': contentType, ...headers } });
}

describe('twilio', () => {
  const token = 'twilio-auth-token-0123';
  // an inbound SMS as Twilio posts it (Messaging webhook parameters)
  const params = {
    MessageSid: 'SM1234567890abcdef',
    AccountSid: 'AC0123',
    From: '+14155550100',
    To: '+14155550199',
    Body: 'Hello & welcome ✓',
    NumMedia: '0',
  };
  const form = new URLSearchParams(params).toString();
  const url = '/hooks/twilio?source=sms';
  const full = `https://hooks.example.com${url}`;
  const signedBy = (t: string, u = full, p: Record<string, unknown> = params) => ({
    'x-twilio-signature': twilio.getExpectedTwilioSignature(t, u, p),
  });

  it('verifies a form post signed by the twilio SDK over the URL rebuilt from Host and X-Forwarded-Proto', () => {
    const v = makeVerifier('twilio', { secret: token });
    expect(v.verify(arriving(url, form, signedBy(token)))).toEqual({ ok: true, secretIndex: 0 });
    expect(twilio.validateRequest(token, signedBy(token)['x-twilio-signature'], full, params)).toBe(true);
  });

  it('refuses a wrong token, a changed parameter, an added parameter and another URL', () => {
    const v = makeVerifier('twilio', { secret: token });
    const fail = { ok: false, reason: 'no signature matches' };
    expect(v.verify(arriving(url, form, signedBy(`${token}x`)))).toEqual(fail);
    expect(v.verify(arriving(url, form.replace('welcome', 'welc0me'), signedBy(token)))).toEqual(fail);
    expect(v.verify(arriving(url, `${form}&Extra=1`, signedBy(token)))).toEqual(fail);
    expect(v.verify(arriving('/hooks/twilio?source=voice', form, signedBy(token)))).toEqual(fail);
    expect(v.verify(arriving(url, form, { ...signedBy(token), 'x-forwarded-proto': 'http' }))).toEqual(fail);
  });

  it('accepts the URL signed with the default port, and either of two tokens', () => {
    const v = makeVerifier('twilio', { secret: ['the-new-token', token] });
    expect(v.verify(arriving(url, form, signedBy(token, 'https://hooks.example.com:443/hooks/twilio?source=sms')))).toEqual({
      ok: true,
      secretIndex: 1,
    });
    expect(v.verify(arriving(url, form, signedBy('the-new-token')))).toEqual({ ok: true, secretIndex: 0 });
  });

  it('sorts a repeated parameter’s values as the SDK does', () => {
    const v = makeVerifier('twilio', { secret: token });
    const body = 'To=%2B1&MediaUrl=b&MediaUrl=a&MediaUrl=b';
    const sig = signedBy(token, full, { To: '+1', MediaUrl: ['b', 'a', 'b'] });
    expect(v.verify(arriving(url, body, sig)).ok).toBe(true);
  });

  it('uses publicUrl, with the request’s query, when a proxy rewrote the host and path', () => {
    const publicUrl = 'https://public.example.com/sms/inbound';
    const v = makeVerifier('twilio', { secret: token, publicUrl });
    const headers = { ...signedBy(token, `${publicUrl}?source=sms`), host: '10.0.0.5:18789', 'x-forwarded-proto': '' };
    expect(v.verify(arriving(url, form, headers))).toEqual({ ok: true, secretIndex: 0 });
    expect(makeVerifier('twilio', { secret: token }).verify(arriving(url, form, headers))).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
  });

  it('a JSON body: the URL with bodySHA256 is signed, and the body must match that hash', () => {
    const v = makeVerifier('twilio', { secret: token });
    const body = '{"MessageSid":"SM1","Body":"hi"}';
    const jsonUrl = `/hooks/twilio?bodySHA256=${twilio.getExpectedBodyHash(body)}`;
    const headers = { 'x-twilio-signature': twilio.getExpectedTwilioSignature(token, `https://hooks.example.com${jsonUrl}`, {}) };
    expect(twilio.validateRequestWithBody(token, headers['x-twilio-signature'], `https://hooks.example.com${jsonUrl}`, body)).toBe(true);
    expect(v.verify(arriving(jsonUrl, body, headers, 'application/json'))).toEqual({ ok: true, secretIndex: 0 });
    expect(v.verify(arriving(jsonUrl, body.replace('hi', 'ho'), headers, 'application/json'))).toEqual({
      ok: false,
      reason: 'body does not match bodySHA256',
    });
    expect(v.verify(arriving('/hooks/twilio?bodySHA256=xyz', body, headers, 'application/json'))).toEqual({
      ok: false,
      reason: 'malformed bodySHA256',
    });
  });

  it('a Webhooks Rule signing with HMAC-SHA256 under its SharedKey, as the settings header says', () => {
    const shared = 'shared-key-secret';
    const v = makeVerifier('twilio', { secret: [token, shared] });
    const headers = {
      'x-twilio-signature': twilio.getExpectedTwilioSignature(shared, full, params, 'HMAC_SHA256'),
      'x-twilio-webhooks-signature-settings': 'key=KS0123,algorithm=HMAC_SHA256',
    };
    expect(v.verify(arriving(url, form, headers))).toEqual({ ok: true, secretIndex: 1 });
    expect(v.verify(arriving(url, form, { ...headers, 'x-twilio-webhooks-signature-settings': 'algorithm=HMAC_MD5' }))).toEqual({
      ok: false,
      reason: 'unsupported signature algorithm',
    });
  });

  it('refuses a missing or malformed signature, and a request it cannot rebuild the URL of', () => {
    const v = makeVerifier('twilio', { secret: token });
    expect(v.verify(arriving(url, form, {}))).toEqual({ ok: false, reason: 'missing signature header' });
    expect(v.verify(arriving(url, form, { 'x-twilio-signature': 'abc' }))).toEqual({ ok: false, reason: 'malformed signature header' });
    const noHost = verifyRequest({ url, body: form, headers: signedBy(token) });
    expect(v.verify(noHost)).toEqual({ ok: false, reason: 'missing host header' });
  });

  it.each(['hooks.example.com/x', 'https://h.example/x?a=1', 'https://h.example/x#f', 'https://u:p@h.example/x', 'ftp://h.example/x'])(
    'publicUrl %s is a config error naming it',
    (publicUrl) => {
      expect(() => makeVerifier('twilio', { secret: token, publicUrl })).toThrow(PluginConfigError);
    },
  );
});

describe('hubspot', () => {
  const secret = 'hubspot-client-secret-0123';
  const body =
    '[{"eventId":1,"subscriptionId":12345,"portalId":62515,"occurredAt":1564113600000,"subscriptionType":"contact.creation","objectId":123}]';
  const ts = String(NOW_MS);
  const url = '/hooks/hubspot?portal=62515';
  const sdkSigned = (s: string, u = `https://hooks.example.com${url}`, t = ts) => ({
    'x-hubspot-signature-v3': Signature.getSignature('POST', 'v3', {
      signature: '',
      clientSecret: s,
      url: u,
      requestBody: body,
      timestamp: Number(t),
    }),
    'x-hubspot-request-timestamp': t,
  });

  it('verifies a v3 signature made by @hubspot/api-client, either of two secrets', () => {
    const v = makeVerifier('hubspot', { secret: ['hubspot-new', secret] });
    expect(v.verify(arriving(url, body, sdkSigned(secret), 'application/json'))).toEqual({ ok: true, secretIndex: 1 });
    expect(v.verify(arriving(url, body, sdkSigned('hubspot-new'), 'application/json'))).toEqual({ ok: true, secretIndex: 0 });
  });

  it('decodes the percent-escapes HubSpot lists in the URI, and only those', () => {
    const v = makeVerifier('hubspot', { secret });
    const sent = '/hooks/hubspot?next=https%3A%2F%2Fapp.example%2Fa%20b%40c';
    // as HubSpot documents: %3A %2F %40 … decoded, %20 left as it is
    const uri = 'https://hooks.example.com/hooks/hubspot?next=https://app.example/a%20b@c';
    const sig = createHmac('sha256', secret).update(`POST${uri}${body}${ts}`).digest('base64');
    const headers = { 'x-hubspot-signature-v3': sig, 'x-hubspot-request-timestamp': ts };
    expect(v.verify(arriving(sent, body, headers, 'application/json'))).toEqual({ ok: true, secretIndex: 0 });
  });

  it('refuses a tampered body, a wrong secret, and a timestamp (ms) outside the window, after the signature', () => {
    const v = makeVerifier('hubspot', { secret });
    expect(v.verify(arriving(url, body.replace('123}', '124}'), sdkSigned(secret), 'application/json'))).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
    expect(v.verify(arriving(url, body, sdkSigned('other'), 'application/json'))).toEqual({ ok: false, reason: 'no signature matches' });
    const stale = String(NOW_MS - 301_000);
    expect(v.verify(arriving(url, body, sdkSigned(secret, undefined, stale), 'application/json'))).toEqual({
      ok: false,
      reason: 'timestamp outside tolerance',
    });
    const shortWindow = makeVerifier('hubspot', { secret, toleranceSeconds: 60 });
    expect(shortWindow.verify(arriving(url, body, sdkSigned(secret, undefined, String(NOW_MS - 61_000)), 'application/json')).ok).toBe(
      false,
    );
  });

  it('refuses missing and malformed headers with fixed phrases', () => {
    const v = makeVerifier('hubspot', { secret });
    const good = sdkSigned(secret);
    expect(v.verify(arriving(url, body, {}))).toEqual({ ok: false, reason: 'missing signature header' });
    expect(v.verify(arriving(url, body, { 'x-hubspot-signature-v3': good['x-hubspot-signature-v3'] }))).toEqual({
      ok: false,
      reason: 'missing timestamp',
    });
    expect(v.verify(arriving(url, body, { ...good, 'x-hubspot-request-timestamp': '1.5e12' }))).toEqual({
      ok: false,
      reason: 'malformed timestamp',
    });
    expect(v.verify(arriving(url, body, { ...good, 'x-hubspot-signature-v3': 'v3=abc' }))).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
  });
});
