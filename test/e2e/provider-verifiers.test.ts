/**
 * The provider verifiers through the real /hooks path of the real CLI, one mapping per scheme family
 * (docs/verifiers.md): a request signed as the provider signs it is taken; a forged, tampered or
 * stale one is `401 INVALID_SIGNATURE`; Zoom's URL validation is answered directly; no secret and
 * no credential header reaches the output or the kept requests.
 */
import { createHmac, generateKeyPairSync, randomBytes, sign as ecdsaSign } from 'node:crypto';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, type Running } from '../helpers/cli.ts';

const GW = `gw_${randomBytes(18).toString('hex')}`;
const secret = (name: string) => `${name}_${randomBytes(12).toString('hex')}`;
const S = {
  shopify: secret('shpss'),
  paddle: secret('pdl_ntfset'),
  zoom: secret('zoom'),
  gitlab: secret('glpat'),
  postmark: `hooks:${secret('pm')}`,
  twilio: secret('tw'),
  hubspot: secret('hs'),
  mailgun: secret('key'),
  linear: secret('lin_wh'),
};
const sendgridKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const sendgridShown = sendgridKey.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

const verifyOf: Record<string, Record<string, unknown>> = {
  ...Object.fromEntries(Object.entries(S).map(([type, s]) => [type, { type, secret: s }])),
  sendgrid: { type: 'sendgrid', publicKey: sendgridShown },
};

const config = {
  gateway: { auth: { token: GW } },
  hooks: {
    enabled: true,
    token: `hk_${randomBytes(18).toString('hex')}`,
    authFailures: { max: 100, windowSeconds: 60 },
    mappings: Object.entries(verifyOf).map(([path, verify]) => ({
      id: path,
      match: { path },
      action: 'wake',
      textTemplate: `${path} event`,
      verify,
    })),
  },
  agents: { defaults: { heartbeat: { every: '0' } } },
};

const hmac = (alg: string, key: string, data: string) => createHmac(alg, key).update(data).digest();
const now = () => Math.floor(Date.now() / 1000);
const JSON_CT = { 'content-type': 'application/json' };

/** Per family: a body and the headers its provider signs it with, at the current time. */
const signers: Record<string, (body: string) => Record<string, string>> = {
  shopify: (b) => ({ 'x-shopify-hmac-sha256': hmac('sha256', S.shopify, b).toString('base64') }),
  paddle: (b) => {
    const t = now();
    return { 'paddle-signature': `ts=${t};h1=${hmac('sha256', S.paddle, `${t}:${b}`).toString('hex')}` };
  },
  zoom: (b) => {
    const t = now();
    return { 'x-zm-signature': `v0=${hmac('sha256', S.zoom, `v0:${t}:${b}`).toString('hex')}`, 'x-zm-request-timestamp': String(t) };
  },
  gitlab: () => ({ 'x-gitlab-token': S.gitlab }),
  postmark: () => ({ authorization: `Basic ${Buffer.from(S.postmark).toString('base64')}` }),
  sendgrid: (b) => {
    const t = String(now());
    const sig = ecdsaSign('sha256', Buffer.from(t + b), { key: sendgridKey.privateKey, dsaEncoding: 'der' }).toString('base64');
    return { 'x-twilio-email-event-webhook-signature': sig, 'x-twilio-email-event-webhook-timestamp': t };
  },
  linear: (b) => ({ 'linear-signature': hmac('sha256', S.linear, b).toString('hex') }),
};

describe('provider verifiers over HTTP', () => {
  let srv: Running;
  const send = (path: string, body: string, headers: Record<string, string>) =>
    post(`${srv.url}/hooks/${path}`, body, { ...JSON_CT, ...headers });
  beforeAll(async () => {
    srv = await startCli({ config });
  });
  afterAll(async () => {
    await srv.stop();
    cleanup(srv.dir);
  });

  it.each(Object.keys(signers))('%s: takes a request signed as the provider signs it, refuses it tampered or unsigned', async (path) => {
    const body = JSON.stringify({ id: randomBytes(4).toString('hex'), n: 1, webhookTimestamp: Date.now() });
    const headers = signers[path]!(body);
    const ok = await send(path, body, headers);
    expect(ok.status, ok.text).toBe(200);
    const refused = { ok: false, error: 'missing or invalid signature', code: 'INVALID_SIGNATURE' };
    if (path !== 'gitlab' && path !== 'postmark') expect((await send(path, body.replace('"n":1', '"n":2'), headers)).body).toEqual(refused);
    expect((await send(path, body, {})).body).toEqual(refused);
  });

  it('shopify: a wrong secret is refused', async () => {
    const body = '{"id":1}';
    const r = await send('shopify', body, { 'x-shopify-hmac-sha256': hmac('sha256', `${S.shopify}x`, body).toString('base64') });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('INVALID_SIGNATURE');
  });

  it('paddle: an expired timestamp is refused and logged as such', async () => {
    const body = '{"event_type":"transaction.completed"}';
    const t = now() - 600;
    const r = await send('paddle', body, { 'paddle-signature': `ts=${t};h1=${hmac('sha256', S.paddle, `${t}:${body}`).toString('hex')}` });
    expect(r.body.code).toBe('INVALID_SIGNATURE');
    await srv.waitFor('timestamp outside tolerance');
  });

  it("zoom: a signed endpoint.url_validation is answered in Zoom's shape, and only the refused request is kept, without its body", async () => {
    const keptZoom = async () => (await get(`${srv.url}/api/requests?hook=zoom`, GW)).body.requests as { id: string; status: number }[];
    const before = (await keptZoom()).length;
    const body = JSON.stringify({
      event: 'endpoint.url_validation',
      payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' },
      event_ts: Date.now(),
    });
    const r = await send('zoom', body, signers.zoom!(body));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
      encryptedToken: hmac('sha256', S.zoom, 'qgg8vlvZRS6UYooatFL8Aw').toString('hex'),
    });
    const unsigned = await send('zoom', body, {});
    expect(unsigned.body.code).toBe('INVALID_SIGNATURE');
    // the validation itself is answered, not kept; the refusal is kept (docs/http.md, "Kept requests")
    const after = await keptZoom();
    expect(after.length).toBe(before + 1);
    expect(after[0]!.status).toBe(401);
    expect((await get(`${srv.url}/api/requests/${after[0]!.id}`, GW)).body.request).toMatchObject({ bodyKept: false, body: '' });
  });

  it('twilio: a form post signed by the twilio SDK over the URL it called', async () => {
    const params = { MessageSid: 'SM0001', From: '+14155550100', Body: 'Hi there' };
    const form = new URLSearchParams(params).toString();
    const url = `${srv.url}/hooks/twilio?tag=sms`;
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(S.twilio, url, params),
    };
    const r = await post(url, form, headers);
    expect(r.status, r.text).toBe(200);
    const other = await post(`${srv.url}/hooks/twilio?tag=voice`, form, headers);
    expect(other.body.code).toBe('INVALID_SIGNATURE');
  });

  it('hubspot: a v3 signature over the method, the URL, the body and the timestamp', async () => {
    const body = '[{"eventId":1,"subscriptionType":"contact.creation","objectId":123}]';
    const ts = String(Date.now());
    const sign = (key: string) => hmac('sha256', key, `POST${srv.url}/hooks/hubspot${body}${ts}`).toString('base64');
    const headers = { 'x-hubspot-signature-v3': sign(S.hubspot), 'x-hubspot-request-timestamp': ts };
    expect((await send('hubspot', body, headers)).status).toBe(200);
    expect((await send('hubspot', body, { ...headers, 'x-hubspot-signature-v3': sign('other') })).body.code).toBe('INVALID_SIGNATURE');
  });

  it('mailgun: signed body fields; the same token again is a replay', async () => {
    const token = randomBytes(25).toString('hex');
    const timestamp = String(now());
    const signature = hmac('sha256', S.mailgun, timestamp + token).toString('hex');
    const body = JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': { event: 'delivered', id: 'ev1' } });
    const first = await send('mailgun', body, {});
    expect(first.status, first.text).toBe(200);
    expect((await send('mailgun', body, {})).body.code).toBe('INVALID_SIGNATURE');
    await srv.waitFor('token seen before');
    // the accepted request's kept body has the signature cut out (the refused replay is kept without its body)
    const listed = (await get(`${srv.url}/api/requests?hook=mailgun`, GW)).body.requests as { id: string; status: number }[];
    const accepted = listed.find((r) => r.status === 200);
    const kept = (await get(`${srv.url}/api/requests/${accepted!.id}`, GW)).body.request;
    expect(kept.body).toContain('"event":"delivered"');
    expect(kept.body).not.toContain(signature);
  });

  it('keeps no credential header and logs no secret', async () => {
    const list = (await get(`${srv.url}/api/requests?hook=postmark`, GW)).body.requests as { id: string }[];
    expect(list.length).toBeGreaterThan(0);
    const kept = (await get(`${srv.url}/api/requests/${list[0]!.id}`, GW)).body.request;
    expect(Object.keys(kept.headers)).not.toContain('authorization');
    for (const h of ['gitlab', 'shopify', 'linear']) {
      const l = (await get(`${srv.url}/api/requests?hook=${h}`, GW)).body.requests as { id: string }[];
      const headers = (await get(`${srv.url}/api/requests/${l[0]!.id}`, GW)).body.request.headers as Record<string, string>;
      expect(Object.keys(headers).filter((k) => /token|hmac|signature|authorization/.test(k))).toEqual([]);
    }
    const out = srv.output();
    for (const s of Object.values(S)) expect(out).not.toContain(s);
    expect(out).toContain('signature rejected');
  });
});
