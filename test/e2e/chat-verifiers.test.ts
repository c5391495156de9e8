/**
 * The chat services' verifiers in a running server (the real CLI), their
 * secrets given as ${ENV} references: each service's genuine requests run
 * their mapping, its URL checks (Discord's PING, Slack's url_verification,
 * Meta's GET handshake) are answered directly and store nothing, and every
 * forgery is refused with a fixed reason. Then everything the server said
 * (its whole output, every answer) is searched for the secrets and for what
 * the refused requests carried.
 */
import { createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../src/auth/signing.ts';
import { cleanup, get, startCli, type Running } from '../helpers/cli.ts';

const random = (n: number) => randomBytes(n).toString('base64url');
const HOOK = `hk_${random(30)}`;
const GW = `gw_${random(30)}`;
const TG = `tg_${random(24)}`.replace(/[^A-Za-z0-9_-]/g, '_');
const META = `meta_${random(24)}`;
const META_VERIFY = `mv_${random(24)}`;
const MM = `mm${random(20)}`;
const SLACK = `sl_${random(24)}`;
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const DISCORD_KEY = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
/** What refused requests carry in their headers, query or body: none of it may be repeated. */
const SENT = `sent${random(18)}`;
const SECRETS = {
  'hook token': HOOK,
  'gateway token': GW,
  'telegram secret': TG,
  'meta app secret': META,
  'meta verify token': META_VERIFY,
  'mattermost token': MM,
  'slack secret': SLACK,
  'refused content': SENT,
};

const config = {
  gateway: { auth: { token: GW } },
  hooks: {
    enabled: true,
    token: HOOK,
    mappings: [
      {
        id: 'telegram',
        match: { path: 'telegram' },
        action: 'wake',
        wakeMode: 'next-heartbeat',
        textTemplate: 'tg {{message.text}}',
        verify: { type: 'telegram', secret: '${TG_SECRET}' },
      },
      // takes only application commands: a PING must still be answered
      {
        id: 'discord',
        match: { path: 'discord', payload: { type: 2 } },
        action: 'wake',
        wakeMode: 'next-heartbeat',
        textTemplate: 'dc {{data.name}}',
        verify: { type: 'discord', publicKey: '${DISCORD_PUBLIC_KEY}' },
      },
      {
        id: 'whatsapp',
        match: { path: 'whatsapp' },
        action: 'wake',
        wakeMode: 'next-heartbeat',
        textTemplate: 'wa {{object}}',
        verify: { type: 'meta', secret: '${META_APP_SECRET}', verifyToken: '${META_VERIFY_TOKEN}' },
      },
      {
        id: 'mattermost',
        match: { path: 'mattermost' },
        action: 'wake',
        wakeMode: 'next-heartbeat',
        textTemplate: 'mm {{text}}',
        verify: { type: 'mattermost', secret: '${MM_TOKEN}' },
      },
      {
        id: 'slack',
        match: { path: 'slack', payload: { type: 'event_callback' } },
        action: 'wake',
        wakeMode: 'next-heartbeat',
        textTemplate: 'sl {{event.text}}',
        verify: { type: 'slack', secret: '${SLACK_SIGNING_SECRET}' },
      },
      { id: 'plain', match: { path: 'plain' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'plain' },
    ],
  },
  agents: { defaults: { heartbeat: { every: '0' } } },
};
const env = {
  TG_SECRET: TG,
  DISCORD_PUBLIC_KEY: DISCORD_KEY,
  META_APP_SECRET: META,
  META_VERIFY_TOKEN: META_VERIFY,
  MM_TOKEN: MM,
  SLACK_SIGNING_SECRET: SLACK,
};

function discord(body: string, ts = Math.floor(Date.now() / 1000), key = privateKey): Record<string, string> {
  return { 'x-signature-ed25519': sign(null, Buffer.from(`${ts}${body}`), key).toString('hex'), 'x-signature-timestamp': String(ts) };
}
const slack = (body: string, secret = SLACK) => signatureHeaders({ type: 'slack', secret }, Buffer.from(body), Date.now());
const meta = (body: string, secret = META) => ({
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

describe('chat service verifiers in a running server', () => {
  let srv: Running;
  const said: string[] = [];
  const record = async (res: Response) => {
    const text = await res.text();
    said.push(text, JSON.stringify([...res.headers]));
    return {
      status: res.status,
      headers: res.headers,
      text,
      body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
    };
  };
  const post = (name: string, body: string, headers: Record<string, string>, type = 'application/json') =>
    fetch(`${srv.url}/hooks/${name}`, { method: 'POST', headers: { 'content-type': type, ...headers }, body }).then(record);
  const getHook = (pathAndQuery: string) => fetch(`${srv.url}/hooks/${pathAndQuery}`).then(record);

  beforeAll(async () => {
    srv = await startCli({ config, env });
  });
  afterAll(async () => {
    await srv?.stop();
    if (srv) cleanup(srv.dir);
  });

  it("runs the mapping for each service's genuine request, without the hook token", async () => {
    const tg = JSON.stringify({ update_id: 1, message: { chat: { id: 5 }, text: 'from telegram' } });
    expect((await post('telegram', tg, { 'x-telegram-bot-api-secret-token': TG })).status).toBe(200);
    const dc = JSON.stringify({ type: 2, data: { name: 'ask' } });
    expect((await post('discord', dc, discord(dc))).status).toBe(200);
    const wa = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    expect((await post('whatsapp', wa, meta(wa))).status).toBe(200);
    expect(
      (await post('mattermost', `token=${MM}&text=from+mattermost&channel_id=abc`, {}, 'application/x-www-form-urlencoded')).status,
    ).toBe(200);
    expect((await post('mattermost', JSON.stringify({ token: MM, text: 'mattermost json' }), {})).status).toBe(200);
    const sl = JSON.stringify({ type: 'event_callback', event: { type: 'message', text: 'from slack' } });
    expect((await post('slack', sl, slack(sl))).status).toBe(200);
  });

  it("answers the services' URL checks directly, even where the mapping's match would not take them", async () => {
    const ping = '{"type":1}';
    const pong = await post('discord', ping, discord(ping));
    expect([pong.status, pong.body]).toEqual([200, { type: 1 }]);

    const check = JSON.stringify({
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    const answered = await post('slack', check, slack(check));
    expect([answered.status, answered.body]).toEqual([200, { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' }]);

    const hub = await getHook(`whatsapp?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(META_VERIFY)}&hub.challenge=1158201444`);
    expect([hub.status, hub.text, hub.headers.get('content-type')]).toEqual([200, '1158201444', 'text/plain; charset=utf-8']);
  });

  it('refuses forgeries: 401 for a POST, 403 for a handshake, with fixed messages', async () => {
    const tg = JSON.stringify({ message: { text: SENT } });
    for (const headers of [
      { 'x-telegram-bot-api-secret-token': `${TG}${SENT}` },
      { 'x-telegram-bot-api-secret-token': SENT },
      {},
      { authorization: `Bearer ${HOOK}` },
    ] as Record<string, string>[]) {
      const r = await post('telegram', tg, headers);
      expect([r.status, r.body]).toEqual([401, { ok: false, error: 'missing or invalid signature', code: 'INVALID_SIGNATURE' }]);
    }
    // a PING the mapping's match does not take, and a command it does
    for (const dc of [`{"type":1,"x":"${SENT}"}`, `{"type":2,"data":{"name":"${SENT}"}}`]) {
      expect((await post('discord', dc, discord(dc, undefined, generateKeyPairSync('ed25519').privateKey))).status).toBe(401);
      expect((await post('discord', dc, { ...discord(dc), 'x-signature-ed25519': `${'0'.repeat(64)}${SENT}` })).status).toBe(401);
      // genuine but ten minutes old
      expect((await post('discord', dc, discord(dc, Math.floor(Date.now() / 1000) - 600))).status).toBe(401);
    }
    const wa = JSON.stringify({ object: SENT });
    expect((await post('whatsapp', wa, meta(wa, `${META}x`))).status).toBe(401);
    expect((await post('mattermost', `token=${MM}${SENT}&text=x`, {}, 'application/x-www-form-urlencoded')).status).toBe(401);
    expect((await post('mattermost', `token=${MM}&token=${SENT}&text=x`, {}, 'application/x-www-form-urlencoded')).status).toBe(401);
    const check = JSON.stringify({ type: 'url_verification', challenge: SENT });
    const forged = await post('slack', check, slack(check, `${SLACK}x`));
    expect(forged.status).toBe(401);
    const event = JSON.stringify({ type: 'event_callback', event: { text: SENT } });
    expect((await post('slack', event, { ...slack(event), 'x-slack-signature': `v0=${SENT}` })).status).toBe(401);

    for (const q of [
      `hub.mode=subscribe&hub.verify_token=${SENT}&hub.challenge=${SENT}`,
      `hub.mode=subscribe&hub.verify_token=${META_VERIFY}x&hub.challenge=${SENT}`,
      `hub.challenge=${SENT}`,
    ]) {
      const r = await getHook(`whatsapp?${q}`);
      expect([r.status, r.body]).toEqual([403, { ok: false, error: 'handshake refused', code: 'FORBIDDEN' }]);
    }
  });

  it('takes GET only where a verifier answers a handshake: 405 with Allow: POST elsewhere', async () => {
    for (const path of ['plain', 'telegram', 'wake', 'agent', 'nowhere', '']) {
      const r = await getHook(`${path}?hub.mode=subscribe&hub.verify_token=${META_VERIFY}&hub.challenge=1`);
      expect([path, r.status, r.headers.get('allow'), r.body?.code]).toEqual([path, 405, 'POST', 'METHOD_NOT_ALLOWED']);
    }
  });

  it('stored exactly the genuine requests, and said nothing secret anywhere', async () => {
    const events = await get(`${srv.url}/api/main/events?limit=100`, GW);
    const texts = (events.body.events as { text: string }[]).map((e) => e.text).join('\n');
    for (const t of ['from telegram', 'dc ask', 'wa whatsapp_business_account', 'from mattermost', 'mattermost json', 'from slack'])
      expect(texts).toContain(t);
    expect(events.body.events).toHaveLength(6);
    said.push(JSON.stringify(events.body));
    // the request log keeps Mattermost's bodies with the token cut out, the rest as sent
    const kept = await get(`${srv.url}/api/requests?hook=mattermost`, GW);
    const bodies: string[] = [];
    for (const r of kept.body.requests as { id: string; status: number }[]) {
      if (r.status !== 200) continue;
      bodies.push((await get(`${srv.url}/api/requests/${r.id}`, GW)).body.request.body as string);
    }
    expect(bodies.sort()).toEqual(
      ['token=[redacted]&text=from+mattermost&channel_id=abc', '{"token":"[redacted]","text":"mattermost json"}'].sort(),
    );

    expect(await srv.stop()).toBe(0);
    const output = srv.output();
    expect(output).toContain('signature rejected');
    expect(output).toContain('handshake refused');
    for (const reason of [
      'secret token does not match',
      'no signature matches',
      'malformed signature header',
      'timestamp outside tolerance',
      'token does not match',
      'malformed token field',
      'verify token does not match',
    ])
      expect(output).toContain(reason);
    const stored = readdirSync(srv.dataDir)
      .map((f) => readFileSync(join(srv.dataDir, f)).toString('latin1'))
      .join('\n');
    expect(stored.includes(MM), 'the mattermost token is in the data directory').toBe(false);
    for (const [what, secret] of Object.entries(SECRETS)) {
      expect(output.includes(secret), `the ${what} is in the output`).toBe(false);
      expect(
        said.filter((s) => s.includes(secret)),
        `the ${what} is in an answer`,
      ).toEqual([]);
    }
  });
});

describe("Meta's GET handshake and the failed-authentication throttle", () => {
  let srv: Running;
  beforeAll(async () => {
    const throttled = { ...config, hooks: { ...config.hooks, authFailures: { max: 3, windowSeconds: 60 } } };
    srv = await startCli({ config: throttled, env });
  });
  afterAll(async () => {
    await srv?.stop();
    if (srv) cleanup(srv.dir);
  });
  const hub = (token: string) =>
    fetch(`${srv.url}/hooks/whatsapp?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=7`);

  it('counts a refused handshake like a wrong token: a success resets the count, the failure past the limit blocks the address', async () => {
    for (let i = 0; i < 3; i++) expect((await hub('wrong')).status).toBe(403);
    expect((await hub(META_VERIFY)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await hub('wrong')).status).toBe(403);
    const crossing = await hub('wrong');
    expect(crossing.status).toBe(429);
    expect(Number(crossing.headers.get('retry-after'))).toBeGreaterThan(0);
    // blocked now, whatever it sends
    expect((await hub(META_VERIFY)).status).toBe(429);
  });
});
