/**
 * The chat services' verifiers (`telegram`, `discord`, `meta`, `mattermost`,
 * and `slack`'s URL check), as the registry hands them to a mapping: made
 * from their options, then asked about requests.
 */
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureVerifiers } from '../../src/auth/verifiers.ts';
import { signatureHeaders } from '../../src/auth/signing.ts';
import { PluginConfigError, type PluginContext, type Verifier, type VerifyRequest } from '../../src/plugins/define.ts';
import { VECTORS } from '../fixtures/signature-vectors.ts';
import { HUB_SIGNATURE_EXAMPLE, WYCHEPROOF_ED25519 } from '../fixtures/chat-vectors.ts';

const make = (type: string, options: Record<string, unknown>): Verifier =>
  signatureVerifiers.verifiers![type]!.create(options, {} as PluginContext);

function request(over: Partial<VerifyRequest> & { body?: string } = {}): VerifyRequest {
  const body = over.body ?? '{}';
  let payload: unknown = over.payload;
  if (!('payload' in over)) {
    try {
      payload = JSON.parse(body);
    } catch {
      payload = undefined;
    }
  }
  return {
    name: 'hook',
    headers: {},
    url: '/hooks/hook',
    query: {},
    rawBody: Buffer.from(body),
    receivedAt: 1_700_000_000_000,
    ...over,
    payload,
  } as VerifyRequest;
}

describe('telegram', () => {
  const v = make('telegram', { secret: ['new_Secret-1', 'old_secret-0'] });
  const withToken = (t: string | string[]) => request({ headers: { 'x-telegram-bot-api-secret-token': t } });

  it('accepts the secret token header equal to any configured secret, saying which', () => {
    expect(v.verify(withToken('new_Secret-1'))).toEqual({ ok: true, secretIndex: 0 });
    expect(v.verify(withToken('old_secret-0'))).toEqual({ ok: true, secretIndex: 1 });
  });

  it('refuses a missing, wrong, shortened, extended or repeated token with a fixed reason', () => {
    expect(v.verify(request())).toEqual({ ok: false, reason: 'missing secret token header' });
    for (const t of ['new_Secret-2', 'new_Secret-', 'new_Secret-1x', 'NEW_SECRET-1', ['new_Secret-1', 'new_Secret-1']])
      expect(v.verify(withToken(t))).toEqual({ ok: false, reason: 'secret token does not match' });
    expect(v.verify(withToken('x'.repeat(5000)))).toEqual({ ok: false, reason: 'malformed secret token header' });
  });

  it('refuses a secret Telegram would not accept, naming it without quoting it', () => {
    const err = (() => {
      try {
        make('telegram', { secret: ['fine', 'has a space'] });
      } catch (e) {
        return e as PluginConfigError;
      }
    })();
    expect(err).toBeInstanceOf(PluginConfigError);
    expect(err!.key).toBe('secret[1]');
    expect(err!.message).not.toContain('has a space');
  });
});

describe('discord', () => {
  const W = WYCHEPROOF_ED25519;
  const vector = (sig: string) =>
    request({
      body: W.message.slice(4),
      headers: { 'x-signature-ed25519': sig, 'x-signature-timestamp': W.message.slice(0, 4) },
      receivedAt: 1234 * 1000,
    });

  it(`verifies the published Ed25519 vector laid out as timestamp + body (${W.source})`, () => {
    const v = make('discord', { publicKey: W.publicKey });
    expect(v.verify(vector(W.valid))).toEqual({ ok: true });
    expect(v.verify(vector(W.valid.toUpperCase()))).toEqual({ ok: true });
  });

  it("refuses the vector set's invalid signatures of the same message", () => {
    const v = make('discord', { publicKey: W.publicKey });
    for (const [what, sig] of Object.entries(W.invalid))
      expect(v.verify(vector(sig)), what).toEqual({ ok: false, reason: 'no signature matches' });
  });

  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicHex = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
  const T = 1_700_000_000;
  const signed = (body: string, ts = String(T), key = privateKey, now = T * 1000) =>
    request({
      body,
      headers: { 'x-signature-ed25519': sign(null, Buffer.from(ts + body), key).toString('hex'), 'x-signature-timestamp': ts },
      receivedAt: now,
    });

  it('answers a signed PING with {"type":1} and lets any other signed interaction run the mapping', () => {
    const v = make('discord', { publicKey: publicHex });
    expect(v.verify(signed('{"type":1}'))).toEqual({ ok: true, answer: { status: 200, body: { type: 1 } } });
    expect(v.verify(signed('{"type":2,"data":{"name":"ask"}}'))).toEqual({ ok: true });
  });

  it('never answers an unsigned or wrongly signed PING', () => {
    const v = make('discord', { publicKey: publicHex });
    const other = generateKeyPairSync('ed25519').privateKey;
    expect(v.verify(signed('{"type":1}', String(T), other))).toEqual({ ok: false, reason: 'no signature matches' });
    expect(v.verify(request({ body: '{"type":1}' }))).toEqual({ ok: false, reason: 'missing signature header' });
  });

  it('signs the timestamp and the exact body', () => {
    const v = make('discord', { publicKey: publicHex });
    const r = signed('{"type":2}');
    expect(v.verify({ ...r, rawBody: Buffer.from('{"type":2} ') })).toMatchObject({ ok: false });
    expect(v.verify({ ...r, headers: { ...r.headers, 'x-signature-timestamp': String(T + 1) } })).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
  });

  it('refuses a genuine request outside the window (default 300 s, configurable), either side of the injected clock', () => {
    const v = make('discord', { publicKey: publicHex });
    expect(v.verify(signed('{"type":2}', String(T - 300)))).toEqual({ ok: true });
    expect(v.verify(signed('{"type":2}', String(T - 301)))).toEqual({ ok: false, reason: 'timestamp outside tolerance' });
    expect(v.verify(signed('{"type":2}', String(T + 301)))).toEqual({ ok: false, reason: 'timestamp outside tolerance' });
    const narrow = make('discord', { publicKey: publicHex, toleranceSeconds: 5 });
    expect(narrow.verify(signed('{"type":2}', String(T - 5)))).toEqual({ ok: true });
    expect(narrow.verify(signed('{"type":2}', String(T - 6)))).toEqual({ ok: false, reason: 'timestamp outside tolerance' });
  });

  it('refuses malformed headers without throwing', () => {
    const v = make('discord', { publicKey: publicHex });
    const r = signed('{"type":2}');
    const sig = r.headers['x-signature-ed25519'] as string;
    expect(v.verify({ ...r, headers: { ...r.headers, 'x-signature-ed25519': sig.slice(2) } })).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
    expect(v.verify({ ...r, headers: { ...r.headers, 'x-signature-ed25519': [sig, sig] } })).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
    expect(v.verify({ ...r, headers: { 'x-signature-ed25519': sig } })).toEqual({ ok: false, reason: 'missing timestamp' });
    expect(v.verify({ ...r, headers: { ...r.headers, 'x-signature-timestamp': '17e8' } })).toEqual({
      ok: false,
      reason: 'malformed timestamp',
    });
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom');
        },
        ownKeys: () => {
          throw new Error('boom');
        },
      },
    );
    expect(v.verify({ ...r, headers: hostile })).toEqual({ ok: false, reason: 'verifier error' });
  });

  it('refuses a public key that is not 64 hex digits', () => {
    for (const publicKey of [publicHex.slice(2), `${publicHex}00`, publicHex.replace(/^../, 'zz')]) {
      expect(() => make('discord', { publicKey })).toThrow(PluginConfigError);
    }
  });
});

describe('meta', () => {
  const E = HUB_SIGNATURE_EXAMPLE;
  const v = make('meta', { secret: ['rotated-in', E.secret], verifyToken: 'verify-me-123' });

  it(`verifies X-Hub-Signature-256 over the raw body with the app secret (${E.source})`, () => {
    expect(v.verify(request({ body: E.body, headers: { 'x-hub-signature-256': E.signature } }))).toEqual({ ok: true, secretIndex: 1 });
    expect(v.verify(request({ body: `${E.body} `, headers: { 'x-hub-signature-256': E.signature } }))).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
    expect(v.verify(request({ body: E.body }))).toEqual({ ok: false, reason: 'missing signature header' });
  });

  const hub = (q: Record<string, string>) => ({ name: 'whatsapp', headers: {}, query: q, receivedAt: 0 });

  it('answers the subscription handshake with the bare challenge when the verify token matches', () => {
    expect(v.handshake!(hub({ 'hub.mode': 'subscribe', 'hub.verify_token': 'verify-me-123', 'hub.challenge': '1158201444' }))).toEqual({
      ok: true,
      answer: { status: 200, text: '1158201444' },
    });
  });

  it('refuses a handshake with a wrong token, another mode, or no challenge', () => {
    const ok = { 'hub.mode': 'subscribe', 'hub.verify_token': 'verify-me-123', 'hub.challenge': '42' };
    expect(v.handshake!(hub({ ...ok, 'hub.verify_token': 'verify-me-1234' }))).toEqual({
      ok: false,
      reason: 'verify token does not match',
    });
    expect(v.handshake!(hub({ ...ok, 'hub.verify_token': '' }))).toEqual({ ok: false, reason: 'verify token does not match' });
    expect(v.handshake!(hub({ ...ok, 'hub.mode': 'unsubscribe' }))).toEqual({ ok: false, reason: 'not a subscription handshake' });
    expect(v.handshake!(hub({ 'hub.mode': 'subscribe', 'hub.verify_token': 'verify-me-123' }))).toEqual({
      ok: false,
      reason: 'missing or malformed challenge',
    });
    expect(v.handshake!(hub({ ...ok, 'hub.challenge': '<script>\n' }))).toEqual({ ok: false, reason: 'missing or malformed challenge' });
  });

  it('refuses every handshake when no verify token is configured', () => {
    const noToken = make('meta', { secret: E.secret });
    expect(noToken.handshake!(hub({ 'hub.mode': 'subscribe', 'hub.verify_token': '', 'hub.challenge': '42' }))).toEqual({
      ok: false,
      reason: 'no verifyToken is configured',
    });
  });
});

describe('mattermost', () => {
  const v = make('mattermost', { secret: ['ccopeqrdc7fzmxwdbhi9pfy7rr', 'older0token0value000000000'] });

  it('accepts the token field of a form post or a JSON body, saying which token matched', () => {
    expect(v.verify(request({ payload: { token: 'ccopeqrdc7fzmxwdbhi9pfy7rr', text: 'hi' } }))).toEqual({ ok: true, secretIndex: 0 });
    expect(v.verify(request({ body: '{"token":"older0token0value000000000","text":"hi"}' }))).toEqual({ ok: true, secretIndex: 1 });
  });

  it('refuses a missing, wrong, repeated or non-string token', () => {
    expect(v.verify(request({ payload: { text: 'hi' } }))).toEqual({ ok: false, reason: 'missing token field' });
    expect(v.verify(request({ payload: [] }))).toEqual({ ok: false, reason: 'missing token field' });
    expect(v.verify(request({ payload: { token: 'ccopeqrdc7fzmxwdbhi9pfy7rX' } }))).toEqual({ ok: false, reason: 'token does not match' });
    expect(v.verify(request({ payload: { token: ['ccopeqrdc7fzmxwdbhi9pfy7rr', 'x'] } }))).toEqual({
      ok: false,
      reason: 'malformed token field',
    });
    expect(v.verify(request({ payload: { token: 7 } }))).toEqual({ ok: false, reason: 'malformed token field' });
    // an inherited `token` is not the body's
    expect(v.verify(request({ payload: Object.create({ token: 'ccopeqrdc7fzmxwdbhi9pfy7rr' }) }))).toEqual({
      ok: false,
      reason: 'missing token field',
    });
  });

  it('gives the request log the body without the token, however a form or JSON spelled it', () => {
    const kept = (body: string, token: string) => Buffer.from(v.keptBody!(new Uint8Array(Buffer.from(body)), { token })).toString();
    expect(kept('token=ccopeqrdc7fzmxwdbhi9pfy7rr&text=a+b', 'ccopeqrdc7fzmxwdbhi9pfy7rr')).toBe('token=[redacted]&text=a+b');
    expect(kept('{"text":"x","token":"ccopeqrdc7fzmxwdbhi9pfy7rr"}', 'ccopeqrdc7fzmxwdbhi9pfy7rr')).toBe(
      '{"text":"x","token":"[redacted]"}',
    );
    expect(kept('token=a%2Fb+c&text=x', 'a/b c')).toBe('token=[redacted]&text=x');
    expect(kept('{"token":"a\\"b"}', 'a"b')).toBe('{"token":"[redacted]"}');
    // spelled some other way (a JSON \u escape): nothing of the body is kept
    expect(kept('{"token":"\\u0061bc"}', 'abc')).toBe('');
  });
});

describe('slack', () => {
  it("gives the request log a slash command's or event's body without its legacy verification token", () => {
    const v = make('slack', { secret: 'slack-signing-secret-0123' });
    const kept = (body: string, payload: unknown) => Buffer.from(v.keptBody!(new Uint8Array(Buffer.from(body)), payload)).toString();
    expect(
      kept('token=gIkuvaNzQIHg97ATvDxqgjtO&command=%2Fweather&text=94070', { token: 'gIkuvaNzQIHg97ATvDxqgjtO', command: '/weather' }),
    ).toBe('token=[redacted]&command=%2Fweather&text=94070');
    expect(kept('{"token":"XXYYZZ","type":"event_callback"}', { token: 'XXYYZZ', type: 'event_callback' })).toBe(
      '{"token":"[redacted]","type":"event_callback"}',
    );
    expect(kept('{"type":"event_callback"}', { type: 'event_callback' })).toBe('{"type":"event_callback"}');
  });

  const doc = VECTORS.find((x) => x.name === 'slack: documentation example')!;

  it(`verifies Slack's documented example and runs the mapping for it (${doc.source})`, () => {
    const v = make('slack', { secret: doc.spec.secret });
    const form = Object.fromEntries(new URLSearchParams(doc.body));
    expect(v.verify(request({ body: doc.body, payload: form, headers: doc.headers, receivedAt: doc.nowMs }))).toEqual({
      ok: true,
      secretIndex: 0,
    });
  });

  const spec = { type: 'slack' as const, secret: 'slack-signing-secret-0123' };
  const T = 1_700_000_000_000;
  const body =
    '{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}';

  it("answers a signed url_verification with its challenge (Slack's documented request)", () => {
    const v = make('slack', { secret: spec.secret });
    const headers = signatureHeaders(spec, Buffer.from(body), T);
    expect(v.verify(request({ body, headers, receivedAt: T }))).toEqual({
      ok: true,
      secretIndex: 0,
      answer: { status: 200, body: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' } },
    });
  });

  it('never answers an unsigned or wrongly signed url_verification', () => {
    const v = make('slack', { secret: spec.secret });
    const forged = {
      'x-slack-request-timestamp': String(T / 1000),
      'x-slack-signature': `v0=${createHmac('sha256', 'wrong')
        .update(`v0:${T / 1000}:${body}`)
        .digest('hex')}`,
    };
    expect(v.verify(request({ body, headers: forged, receivedAt: T }))).toEqual({ ok: false, reason: 'no signature matches' });
    expect(v.verify(request({ body, receivedAt: T }))).toEqual({ ok: false, reason: 'missing signature header' });
  });
});
