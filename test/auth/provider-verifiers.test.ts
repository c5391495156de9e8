/**
 * The provider verifiers that are more than an HMAC of the body (src/auth/providers/): GitLab's and
 * Postmark's shared credentials, Mailgun's signed body fields, SendGrid's ECDSA, and the body
 * timestamp and URL handshake around Linear's and Zoom's HMACs (docs/verifiers.md). The URL-signing
 * ones (Twilio, HubSpot) are in provider-url-verifiers.test.ts.
 */
import { createHmac, generateKeyPairSync, sign as ecdsaSign } from 'node:crypto';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { describe, expect, it } from 'vitest';
import { isCredentialHeader } from '../../src/auth/credential-headers.ts';
import { PluginConfigError } from '../../src/plugins/define.ts';
import { makeVerifier, NOW_MS, verifyRequest } from '../helpers/verifiers.ts';

const T = String(NOW_MS / 1000);
const make = makeVerifier;
const request = verifyRequest;

const hmacHex = (key: string, data: string) => createHmac('sha256', key).update(data).digest('hex');

describe('gitlab', () => {
  const v = make('gitlab', { secret: ['new-token', 'old-token'] });
  const withToken = (t: string) => request({ headers: { 'x-gitlab-token': t } });

  it('takes X-Gitlab-Token equal to any configured secret, saying which', () => {
    expect(v.verify(withToken('new-token'))).toEqual({ ok: true, secretIndex: 0 });
    expect(v.verify(withToken('old-token'))).toEqual({ ok: true, secretIndex: 1 });
  });

  it('refuses a wrong, missing or oversized token with a fixed phrase', () => {
    expect(v.verify(withToken('new-tokenx'))).toEqual({ ok: false, reason: 'token does not match' });
    expect(v.verify(request())).toEqual({ ok: false, reason: 'missing token header' });
    expect(v.verify(withToken('a'.repeat(2000)))).toEqual({ ok: false, reason: 'malformed token header' });
  });

  it('the header is a credential', () => expect(isCredentialHeader('x-gitlab-token', new Set())).toBe(true));
});

describe('postmark', () => {
  const v = make('postmark', { secret: ['hooks:n3w-pass:with:colons', 'hooks:old'] });
  const basic = (s: string) => request({ headers: { authorization: `Basic ${Buffer.from(s).toString('base64')}` } });

  it('takes HTTP basic auth equal to any configured user:password', () => {
    expect(v.verify(basic('hooks:n3w-pass:with:colons'))).toEqual({ ok: true, secretIndex: 0 });
    expect(v.verify(basic('hooks:old'))).toEqual({ ok: true, secretIndex: 1 });
  });

  it('refuses other credentials, other schemes and malformed headers', () => {
    expect(v.verify(basic('hooks:wrong'))).toEqual({ ok: false, reason: 'credentials do not match' });
    expect(v.verify(basic('other:old'))).toEqual({ ok: false, reason: 'credentials do not match' });
    expect(v.verify(request())).toEqual({ ok: false, reason: 'missing authorization header' });
    expect(v.verify(request({ headers: { authorization: 'Bearer hooks:old' } }))).toEqual({
      ok: false,
      reason: 'malformed authorization header',
    });
    expect(v.verify(request({ headers: { authorization: 'Basic ***' } }))).toEqual({ ok: false, reason: 'malformed authorization header' });
  });

  it('a secret that is not user:password is a config error naming it, without quoting it', () => {
    expect(() => make('postmark', { secret: ['a:b', 'nocolon'] })).toThrow(PluginConfigError);
    try {
      make('postmark', { secret: ':nouser' });
    } catch (err) {
      expect((err as PluginConfigError).key).toBe('secret');
      expect((err as Error).message).not.toContain('nouser');
    }
  });
});

describe('mailgun', () => {
  const key = 'key-0123456789abcdef';
  const token = 'e0b5477167110d68991efc6b9f89f0a11066af27834600e123';
  const sig = (k: string, ts = T, tok = token) => hmacHex(k, ts + tok);
  const json = (fields: Record<string, unknown>) =>
    JSON.stringify({ signature: fields, 'event-data': { event: 'delivered', id: 'ev1', recipient: 'a@example.com' } });

  it('verifies a JSON webhook, the signature over timestamp + token as Mailgun documents', () => {
    const v = make('mailgun', { secret: key });
    expect(v.verify(request({ body: json({ timestamp: T, token, signature: sig(key) }) }))).toEqual({ ok: true, secretIndex: 0 });
  });

  it('verifies a form post (routes, legacy webhooks) and a subaccount parent-signature under the parent key', () => {
    const v = make('mailgun', { secret: ['key-sub', key] });
    const form = `recipient=a%40example.com&timestamp=${T}&token=${token}&signature=${sig('key-sub')}&body-plain=hi`;
    expect(v.verify(request({ body: form }))).toEqual({ ok: true, secretIndex: 0 });
    const other = 'f'.repeat(50);
    const parent = json({ timestamp: T, token: other, signature: '0'.repeat(64), 'parent-signature': sig(key, T, other) });
    expect(v.verify(request({ body: parent }))).toEqual({ ok: true, secretIndex: 1 });
  });

  it('refuses a wrong key, a changed token, a stale timestamp, and missing or malformed fields', () => {
    const v = make('mailgun', { secret: key });
    expect(v.verify(request({ body: json({ timestamp: T, token, signature: sig('key-other') }) }))).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
    expect(v.verify(request({ body: json({ timestamp: T, token: `${token}x`, signature: sig(key) }) })).ok).toBe(false);
    const late = request({
      body: json({ timestamp: T, token: 'a'.repeat(50), signature: sig(key, T, 'a'.repeat(50)) }),
      receivedAt: NOW_MS + 301_000,
    });
    expect(v.verify(late)).toEqual({ ok: false, reason: 'timestamp outside tolerance' });
    expect(v.verify(request({ body: '{"event-data":{}}' }))).toEqual({ ok: false, reason: 'missing signature field' });
    expect(v.verify(request({ body: json({ timestamp: T, token, signature: 'zz' }) }))).toEqual({
      ok: false,
      reason: 'malformed signature field',
    });
    expect(v.verify(request({ body: json({ timestamp: T, signature: sig(key) }) }))).toEqual({
      ok: false,
      reason: 'missing or malformed token field',
    });
    expect(v.verify(request({ body: json({ timestamp: 'soon', token, signature: sig(key) }) }))).toEqual({
      ok: false,
      reason: 'malformed timestamp',
    });
  });

  it('refuses a token it accepted before, within the window (a replay), in memory', () => {
    const v = make('mailgun', { secret: key });
    const tok = 'b'.repeat(50);
    const r = request({ body: json({ timestamp: T, token: tok, signature: sig(key, T, tok) }) });
    expect(v.verify(r).ok).toBe(true);
    expect(v.verify({ ...r, receivedAt: NOW_MS + 200_000 })).toEqual({ ok: false, reason: 'token seen before' });
    // a forged request never records its token, so it cannot block the genuine one
    const forged = request({ body: json({ timestamp: T, token: 'c'.repeat(50), signature: '0'.repeat(64) }) });
    expect(v.verify(forged).ok).toBe(false);
    expect(v.verify(request({ body: json({ timestamp: T, token: 'c'.repeat(50), signature: sig(key, T, 'c'.repeat(50)) }) })).ok).toBe(
      true,
    );
  });

  it('the request log keeps the body with the signatures cut out', () => {
    const v = make('mailgun', { secret: key });
    const body = json({ timestamp: T, token, signature: sig(key) });
    const kept = Buffer.from(v.keptBody!(Buffer.from(body), JSON.parse(body))).toString();
    expect(kept).not.toContain(sig(key));
    expect(kept).toContain('[redacted]');
    expect(kept).toContain('"event":"delivered"');
  });
});

describe('sendgrid', () => {
  // @sendgrid/eventwebhook's own test vector (src/eventwebhook.spec.js, "should verify a valid single event signature")
  const SDK_KEY =
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==';
  const SDK_SIGNATURE = 'MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM=';
  const SDK_TIMESTAMP = '1600112502';
  const SDK_PAYLOAD = `${JSON.stringify([
    {
      email: 'hello@world.com',
      event: 'dropped',
      reason: 'Bounced Address',
      sg_event_id: 'ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA',
      sg_message_id: 'LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0',
      'smtp-id': '<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>',
      timestamp: 1600112492,
    },
  ])}\r\n`;
  const headers = (signature: string, ts: string) => ({
    'x-twilio-email-event-webhook-signature': signature,
    'x-twilio-email-event-webhook-timestamp': ts,
  });

  it("verifies the SDK's published vector with the key as SendGrid shows it", () => {
    const v = make('sendgrid', { publicKey: SDK_KEY });
    const r = request({ body: SDK_PAYLOAD, headers: headers(SDK_SIGNATURE, SDK_TIMESTAMP), receivedAt: Number(SDK_TIMESTAMP) * 1000 });
    expect(v.verify(r)).toEqual({ ok: true, secretIndex: 0 });
    expect(v.verify({ ...r, rawBody: Buffer.from(SDK_PAYLOAD.replace('dropped', 'dropper')) })).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
  });

  it('a fresh key pair: signed as SendGrid signs, accepted by the SDK and by the verifier, either of two keys', () => {
    const pair = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const a = pair();
    const b = pair();
    const shown = (k: typeof a) => k.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    const body = '[{"email":"x@example.com","event":"delivered","sg_event_id":"e1"}]\r\n';
    const signature = ecdsaSign('sha256', Buffer.from(T + body), { key: a.privateKey, dsaEncoding: 'der' }).toString('base64');
    const sdk = new EventWebhook();
    expect(sdk.verifySignature(sdk.convertPublicKeyToECDSA(shown(a)), body, signature, T)).toBe(true);
    const v = make('sendgrid', { publicKey: [shown(b), shown(a)] });
    expect(v.verify(request({ body, headers: headers(signature, T) }))).toEqual({ ok: true, secretIndex: 1 });
    expect(make('sendgrid', { publicKey: shown(b) }).verify(request({ body, headers: headers(signature, T) }))).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
    const pem = a.publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expect(make('sendgrid', { publicKey: pem }).verify(request({ body, headers: headers(signature, T) })).ok).toBe(true);
  });

  it('refuses stale timestamps, missing and malformed headers, and a signature that is not DER', () => {
    const v = make('sendgrid', { publicKey: SDK_KEY });
    const at = Number(SDK_TIMESTAMP) * 1000;
    expect(v.verify(request({ body: SDK_PAYLOAD, headers: headers(SDK_SIGNATURE, SDK_TIMESTAMP), receivedAt: at + 301_000 }))).toEqual({
      ok: false,
      reason: 'timestamp outside tolerance',
    });
    expect(v.verify(request({ body: SDK_PAYLOAD }))).toEqual({ ok: false, reason: 'missing signature header' });
    expect(v.verify(request({ body: SDK_PAYLOAD, headers: headers('%%%', SDK_TIMESTAMP) }))).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
    expect(v.verify(request({ body: SDK_PAYLOAD, headers: headers(SDK_SIGNATURE, 'now') }))).toEqual({
      ok: false,
      reason: 'malformed timestamp',
    });
    const notDer = Buffer.from('not a DER signature at all').toString('base64');
    expect(v.verify(request({ body: SDK_PAYLOAD, headers: headers(notDer, SDK_TIMESTAMP), receivedAt: at }))).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
  });

  it('a key that is not P-256 is a config error naming it', () => {
    const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    expect(() => make('sendgrid', { publicKey: ed })).toThrow(/P-256/);
    try {
      make('sendgrid', { publicKey: [SDK_KEY, 'bm90IGEga2V5'] });
      expect.unreachable();
    } catch (err) {
      expect((err as PluginConfigError).key).toBe('publicKey[1]');
    }
  });
});

describe('linear', () => {
  const secret = 'lin_wh_secret';
  const signed = (payload: Record<string, unknown>, at = NOW_MS) => {
    const body = JSON.stringify(payload);
    return request({ body, headers: { 'linear-signature': hmacHex(secret, body) }, receivedAt: at });
  };

  it("checks the signed body's webhookTimestamp (ms) against toleranceSeconds, after the signature", () => {
    const v = make('linear', { secret, toleranceSeconds: 60 });
    expect(v.verify(signed({ type: 'Issue', webhookTimestamp: NOW_MS - 59_000 }))).toEqual({ ok: true, secretIndex: 0 });
    expect(v.verify(signed({ type: 'Issue', webhookTimestamp: NOW_MS - 61_000 }))).toEqual({
      ok: false,
      reason: 'timestamp outside tolerance',
    });
    expect(v.verify(signed({ type: 'Issue' }))).toEqual({ ok: false, reason: 'missing timestamp' });
    expect(v.verify(signed({ type: 'Issue', webhookTimestamp: 'now' }))).toEqual({ ok: false, reason: 'malformed timestamp' });
    const forged = { ...signed({ type: 'Issue', webhookTimestamp: 1 }), headers: { 'linear-signature': '0'.repeat(64) } };
    expect(v.verify(forged)).toEqual({ ok: false, reason: 'no signature matches' });
  });
});

describe('zoom', () => {
  const secret = 'zoom-secret-token';
  const zoomSigned = (payload: unknown, key = secret) => {
    const body = JSON.stringify(payload);
    return request({
      body,
      headers: { 'x-zm-signature': `v0=${hmacHex(key, `v0:${T}:${body}`)}`, 'x-zm-request-timestamp': T },
    });
  };
  const validation = { event: 'endpoint.url_validation', payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' }, event_ts: NOW_MS };

  it('answers a signed endpoint.url_validation with {plainToken, encryptedToken} under the secret that matched', () => {
    const v = make('zoom', { secret: ['zoom-new', secret] });
    expect(v.verify(zoomSigned(validation))).toEqual({
      ok: true,
      secretIndex: 1,
      answer: { status: 200, body: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken: hmacHex(secret, 'qgg8vlvZRS6UYooatFL8Aw') } },
    });
  });

  it('refuses an unsigned or wrongly signed validation request: no HMAC is handed out', () => {
    const v = make('zoom', { secret });
    expect(v.verify(request({ body: JSON.stringify(validation) }))).toEqual({ ok: false, reason: 'missing signature header' });
    expect(v.verify(zoomSigned(validation, 'guess'))).toEqual({ ok: false, reason: 'no signature matches' });
  });

  it('lets other events through without an answer', () => {
    const v = make('zoom', { secret });
    expect(v.verify(zoomSigned({ event: 'meeting.started', payload: { object: { id: 1 } } }))).toEqual({ ok: true, secretIndex: 0 });
  });
});
