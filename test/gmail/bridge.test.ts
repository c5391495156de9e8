/**
 * `gmail run` in process against the stand-in Google and a stand-in hook: push authentication
 * (push token, OIDC), history to hook requests, the answer Pub/Sub gets, the durable historyId,
 * out-of-order and repeated pushes, the stale-historyId resync, watch renewal and token refresh.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { startGmailRun, type RunningBridge } from '../../src/gmail/run.ts';
import type { Deps } from '../../src/gmail/settings.ts';
import { readState, stateFile } from '../../src/gmail/state.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { json, startStub, type HttpStub } from '../helpers/http-stub.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';
import { googleUrls, pushBody, startGoogle, type GoogleStandIn } from './google-standin.ts';
import { alertMail, invoiceMail, qpMail } from './mail.ts';

const ACCOUNT = 'ops@example.com';
const PUSH_TOKEN = 'push-token-0123456789abcdef';
const HOOK_TOKEN = 'hook-token-0123456789abcdef';
const SA = 'pubsub-push@proj.iam.gserviceaccount.com';
const AUDIENCE = 'https://mail.example.net/gmail-pubsub';

interface Setup {
  google: GoogleStandIn;
  hook: HttpStub;
  run: RunningBridge;
  dir: string;
  clock: { t: number };
  timers: { fn: () => void; ms: number; cancelled: boolean }[];
  log: ReturnType<typeof captureLogger>;
  push(historyId: string, opts?: { token?: string | null; bearer?: string }): Promise<number>;
}

const open: Setup[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) {
    await s.run.close();
    await s.google.close();
    await s.hook.close();
    cleanup(s.dir);
  }
});

async function setup(gmail: Record<string, unknown> = {}, prepare: (g: GoogleStandIn) => void = () => undefined): Promise<Setup> {
  const clock = { t: Date.UTC(2026, 10, 20, 9, 0, 0) };
  const google = await startGoogle({ now: () => clock.t });
  prepare(google);
  const hook = await startStub((_req, res) => json(res, 202, { ok: true, runIds: ['r'] }));
  const dir = tempDir('hook-intake-gmail-');
  const timers: Setup['timers'] = [];
  const deps: Deps = {
    fetch: globalThis.fetch,
    now: () => clock.t,
    schedule: (fn, ms) => {
      const t = { fn, ms, cancelled: false };
      timers.push(t);
      return () => (t.cancelled = true);
    },
  };
  const { config } = testConfig({
    hooks: {
      enabled: true,
      token: HOOK_TOKEN,
      presets: ['gmail'],
      gmail: {
        account: ACCOUNT,
        topic: 'projects/proj/topics/gmail',
        pushToken: PUSH_TOKEN,
        hookUrl: `${hook.url}/hooks/gmail`,
        oauth: { clientId: google.client.id, clientSecret: google.client.secret, refreshToken: google.client.refreshToken },
        serve: { port: 0 },
        ...googleUrls(google),
        ...gmail,
      },
    },
  });
  const log = captureLogger('debug');
  const run = await startGmailRun({ config, dataDir: dir, deps, log: log.logger, port: 0 });
  const s: Setup = {
    google,
    hook,
    run,
    dir,
    clock,
    timers,
    log,
    push: async (historyId, o = {}) => {
      const url = new URL(run.url!);
      const token = o.token === undefined ? PUSH_TOKEN : o.token;
      if (token !== null) url.searchParams.set('token', token);
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(o.bearer ? { authorization: `Bearer ${o.bearer}` } : {}) },
        body: pushBody(ACCOUNT, historyId),
      });
      await res.arrayBuffer();
      return res.status;
    },
  };
  open.push(s);
  return s;
}

const posted = (hook: HttpStub) => hook.requests.map((r) => r.json.messages[0].id);
const historyOf = (s: Setup) => readState(stateFile(s.dir, ACCOUNT)).historyId;

describe('gmail run: from a push to hook requests', () => {
  it('posts each new message once, with the hook token and gmail:<id> as idempotency key, then answers 204', async () => {
    const s = await setup();
    expect(s.google.calls).toEqual(['gmail.users.watch']);
    const start = historyOf(s);
    expect(start).toBe('1000');
    const latest = s.google.deliver(invoiceMail('m1'), alertMail('m2'), qpMail('m3'));
    expect(await s.push(latest)).toBe(204);
    expect(posted(s.hook)).toEqual(['m1', 'm2', 'm3']);
    for (const r of s.hook.requests) {
      expect(r.url).toBe('/hooks/gmail');
      expect(r.headers.authorization).toBe(`Bearer ${HOOK_TOKEN}`);
      expect(r.headers['idempotency-key']).toBe(`gmail:${r.json.messages[0].id}`);
      expect(r.json).toMatchObject({ source: 'gmail', account: ACCOUNT, historyId: latest });
    }
    const [invoice, alert, qp] = s.hook.requests.map((r) => r.json.messages[0]);
    expect(invoice).toEqual({
      id: 'm1',
      threadId: 't-m1',
      from: 'Ana Lima <ana@example.org>',
      to: ACCOUNT,
      subject: 'Facture 2041 échue',
      date: 'Fri, 20 Nov 2026 09:12:00 +0000',
      snippet: 'Hi, the invoice from October is still open & due',
      body: 'Hi,\r\nthe invoice from October is still open. Café Olá.\r\nAna',
      labels: ['INBOX', 'UNREAD'],
    });
    expect(alert.from).toBe('Monitoring 📨 <alerts@monitoring.example.net>');
    expect(alert.subject).toBe('Disk usage 91% on db-2');
    expect(alert.body).toBe('db-2 /var is at 91% & résumé\n\nthreshold 90%');
    expect(qp.body).toBe('Garçon, a long line wrapped here. ÿ end');
    expect(historyOf(s)).toBe(latest);
    // two records a page: three messages took two history.list calls
    expect(s.google.calls.filter((c) => c === 'gmail.users.history.list')).toHaveLength(2);
    expect(s.google.mismatches).toEqual([]);
    const logged = s.log.text();
    expect(logged).toContain('"messages":3');
    for (const secret of [HOOK_TOKEN, PUSH_TOKEN, s.google.client.secret, s.google.client.refreshToken, ...s.google.issued])
      expect(logged).not.toContain(secret);
    for (const content of ['Ana Lima', 'Facture', 'invoice', 'Disk usage', 'résumé', 'Garçon']) expect(logged).not.toContain(content);
  });

  it('cuts a body to maxBytes on a character boundary and says so; includeBody false posts no body', async () => {
    // byte 49 is the middle of the é of "Café"
    const s = await setup({ maxBytes: 49 });
    s.google.deliver(invoiceMail('m1'));
    expect(await s.push(String(s.google.historyId))).toBe(204);
    const m = s.hook.requests[0]!.json.messages[0];
    expect(m.body).toBe('Hi,\r\nthe invoice from October is still open. Caf');
    expect(m.bodyTruncated).toBe(true);

    const t = await setup({ includeBody: false });
    t.google.deliver(invoiceMail('m9'));
    expect(await t.push(String(t.google.historyId))).toBe(204);
    expect(t.hook.requests[0]!.json.messages[0]).not.toHaveProperty('body');
    expect(t.google.mismatches).toEqual([]);
  });

  it('answers 503 and keeps the historyId when the hook refuses a message; the redelivery posts it and answers 204', async () => {
    const s = await setup();
    const latest = s.google.deliver(invoiceMail('m1'), alertMail('m2'));
    s.hook.handler = (req, res) => json(res, req.json.messages[0].id === 'm2' ? 503 : 202, {});
    expect(await s.push(latest)).toBe(503);
    expect(historyOf(s)).toBe('1000');
    s.hook.handler = (_req, res) => json(res, 200, { ok: true, duplicate: true });
    expect(await s.push(latest)).toBe(204);
    expect(historyOf(s)).toBe(latest);
    // m1 was accepted the first time: the redelivery posts only m2 again
    expect(posted(s.hook)).toEqual(['m1', 'm2', 'm2']);
  });

  it('answers 503 while the hook is unreachable', async () => {
    const s = await setup();
    const latest = s.google.deliver(invoiceMail('m1'));
    await s.hook.close();
    expect(await s.push(latest)).toBe(503);
    expect(historyOf(s)).toBe('1000');
  });

  it('a repeated or older push after a newer one calls nothing and answers 204', async () => {
    const s = await setup();
    const first = s.google.deliver(invoiceMail('m1'));
    const second = s.google.deliver(alertMail('m2'));
    expect(await s.push(second)).toBe(204);
    const calls = s.google.calls.length;
    expect(await s.push(first)).toBe(204);
    expect(await s.push(second)).toBe(204);
    expect(s.google.calls.length).toBe(calls);
    expect(posted(s.hook)).toEqual(['m1', 'm2']);
  });

  it('pushes arriving together are handled one after the other: each message posted once', async () => {
    const s = await setup();
    const ids = [s.google.deliver(invoiceMail('m1')), s.google.deliver(alertMail('m2')), s.google.deliver(qpMail('m3'))];
    const statuses = await Promise.all([...ids, ...ids].map((h) => s.push(h)));
    expect(statuses).toEqual([204, 204, 204, 204, 204, 204]);
    expect(posted(s.hook).sort()).toEqual(['m1', 'm2', 'm3']);
  });

  it('falls back to the latest messages when the stored historyId is too old (404), skipping those posted already', async () => {
    const s = await setup();
    expect(await s.push(s.google.deliver(invoiceMail('m1')))).toBe(204);
    s.google.deliver(alertMail('m2'), qpMail('m3'));
    s.google.historyFloor = s.google.historyId;
    expect(await s.push(String(s.google.historyId))).toBe(204);
    expect(posted(s.hook)).toEqual(['m1', 'm2', 'm3']);
    expect(s.google.calls).toContain('gmail.users.messages.list');
    expect(historyOf(s)).toBe(String(s.google.historyId));
    expect(s.log.text()).toContain('too old for history.list');
    expect(s.google.mismatches).toEqual([]);
  });

  it('a push for another mailbox is acknowledged and ignored', async () => {
    const s = await setup();
    s.google.deliver(invoiceMail('m1'));
    const res = await fetch(`${s.run.url}?token=${PUSH_TOKEN}`, {
      method: 'POST',
      body: pushBody('someone@else.com', String(s.google.historyId)),
    });
    expect(res.status).toBe(204);
    expect(s.hook.requests).toHaveLength(0);
  });

  it('refuses a push without message.data with 400, and answers 404 off the push path and 405 for GET', async () => {
    const s = await setup();
    const bad = await fetch(`${s.run.url}?token=${PUSH_TOKEN}`, { method: 'POST', body: '{"message":{}}' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ ok: false, error: 'message.data is missing' });
    expect((await fetch(`${new URL(s.run.url!).origin}/hooks/gmail?token=${PUSH_TOKEN}`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${s.run.url}?token=${PUSH_TOKEN}`)).status).toBe(405);
  });
});

describe('gmail run: who may push', () => {
  it('refuses a wrong or missing push token with 401 and calls no Google endpoint', async () => {
    const s = await setup();
    s.google.deliver(invoiceMail('m1'));
    const before = [...s.google.calls];
    const grants = s.google.grants.length;
    expect(await s.push(String(s.google.historyId), { token: `${PUSH_TOKEN}x` })).toBe(401);
    expect(await s.push(String(s.google.historyId), { token: null })).toBe(401);
    expect(s.google.calls).toEqual(before);
    expect(s.google.grants).toHaveLength(grants);
    expect(s.hook.requests).toHaveLength(0);
    expect(s.log.text()).not.toContain(PUSH_TOKEN);
  });

  it('accepts a Google-signed OIDC token for the audience from the push service account', async () => {
    const s = await setup({ pushToken: undefined, push: { audience: AUDIENCE, serviceAccountEmail: SA } });
    s.google.deliver(invoiceMail('m1'));
    const jwt = await s.google.oidc({ iss: 'https://accounts.google.com', aud: AUDIENCE, email: SA, email_verified: true, sub: '1234' });
    expect(await s.push(String(s.google.historyId), { token: null, bearer: jwt })).toBe(204);
    expect(posted(s.hook)).toEqual(['m1']);
  });

  it.each([
    [
      'expired',
      async (g: GoogleStandIn, now: number) =>
        g.oidc(
          { iss: 'https://accounts.google.com', aud: AUDIENCE, email: SA, email_verified: true },
          { iatSeconds: now / 1000 - 7200, expiresInSeconds: 3600 },
        ),
    ],
    [
      'signed by another key',
      async (g: GoogleStandIn) =>
        g.oidc(
          { iss: 'https://accounts.google.com', aud: AUDIENCE, email: SA, email_verified: true },
          { key: (await generateKeyPair('RS256')).privateKey },
        ),
    ],
    [
      'for another audience',
      async (g: GoogleStandIn) =>
        g.oidc({ iss: 'https://accounts.google.com', aud: 'https://other.example/', email: SA, email_verified: true }),
    ],
    [
      'from another issuer',
      async (g: GoogleStandIn) => g.oidc({ iss: 'https://evil.example', aud: AUDIENCE, email: SA, email_verified: true }),
    ],
    [
      'from another service account',
      async (g: GoogleStandIn) =>
        g.oidc({ iss: 'https://accounts.google.com', aud: AUDIENCE, email: 'someone@proj.iam.gserviceaccount.com', email_verified: true }),
    ],
    [
      'with an unverified email',
      async (g: GoogleStandIn) => g.oidc({ iss: 'https://accounts.google.com', aud: AUDIENCE, email: SA, email_verified: false }),
    ],
  ])('refuses an OIDC token %s with 401 and calls no Gmail endpoint', async (_name, make) => {
    const s = await setup({ push: { audience: AUDIENCE, serviceAccountEmail: SA } });
    s.google.deliver(invoiceMail('m1'));
    const before = [...s.google.calls];
    const jwt = await make(s.google, s.clock.t);
    expect(await s.push(String(s.google.historyId), { token: null, bearer: jwt })).toBe(401);
    expect(s.google.calls).toEqual(before);
    expect(s.hook.requests).toHaveLength(0);
    expect(s.log.text()).not.toContain(jwt);
  });

  it('keeps the keys for their max-age, and fetches them again for a key id it does not know', async () => {
    const s = await setup({ pushToken: undefined, push: { audience: AUDIENCE, serviceAccountEmail: SA } });
    const claims = { iss: 'accounts.google.com', aud: AUDIENCE, email: SA, email_verified: true };
    expect(await s.push(s.google.deliver(invoiceMail('m1')), { token: null, bearer: await s.google.oidc(claims) })).toBe(204);
    expect(await s.push(s.google.deliver(alertMail('m2')), { token: null, bearer: await s.google.oidc(claims) })).toBe(204);
    expect(s.google.certFetches).toBe(1);
    await s.google.rotateKey();
    s.clock.t += 60_000;
    expect(await s.push(s.google.deliver(qpMail('m3')), { token: null, bearer: await s.google.oidc(claims) })).toBe(204);
    expect(s.google.certFetches).toBe(2);
    s.clock.t += 3600_000;
    expect(await s.push(String(s.google.historyId), { token: null, bearer: await s.google.oidc(claims) })).toBe(204);
    expect(s.google.certFetches).toBe(3);
    expect(posted(s.hook)).toEqual(['m1', 'm2', 'm3']);
  });

  it('an OIDC token is not accepted unless both push.audience and push.serviceAccountEmail are set', async () => {
    const s = await setup({ push: { audience: AUDIENCE } });
    const jwt = await s.google.oidc({ iss: 'https://accounts.google.com', aud: AUDIENCE, email: SA, email_verified: true });
    expect(await s.push(String(s.google.historyId), { token: null, bearer: jwt })).toBe(401);
  });
});

describe('gmail run: watch renewal and access tokens', () => {
  it('renews the watch every renewEveryMinutes, and a minute after a failed renewal', async () => {
    const s = await setup({ renewEveryMinutes: 60 });
    expect(s.timers.map((t) => t.ms)).toEqual([3_600_000]);
    s.timers[0]!.fn();
    await vi_waitFor(() => s.timers.length === 2);
    expect(s.google.calls.filter((c) => c === 'gmail.users.watch')).toHaveLength(2);
    expect(s.timers[1]!.ms).toBe(3_600_000);
    await s.google.close();
    s.timers[1]!.fn();
    await vi_waitFor(() => s.timers.length === 3);
    expect(s.timers[2]!.ms).toBe(60_000);
  });

  it('listens even when the first users.watch fails, and retries it a minute later', async () => {
    const s = await setup({}, (g) => g.failures.push('gmail.users.watch'));
    expect(s.timers.map((t) => t.ms)).toEqual([60_000]);
    expect(historyOf(s)).toBeUndefined();
    s.timers[0]!.fn();
    await vi_waitFor(() => s.timers.length === 2);
    expect(s.timers[1]!.ms).toBe(720 * 60_000);
    expect(historyOf(s)).toBe('1000');
    expect(await s.push(s.google.deliver(invoiceMail('m1')))).toBe(204);
    expect(posted(s.hook)).toEqual(['m1']);
  });

  it('refreshes the access token when it nears expiry and when Gmail answers 401', async () => {
    const s = await setup();
    expect(s.google.grants).toEqual(['refresh_token']);
    s.google.expireAccessTokens();
    expect(await s.push(s.google.deliver(invoiceMail('m1')))).toBe(204);
    expect(s.google.grants).toEqual(['refresh_token', 'refresh_token']);
    s.clock.t += 3600_000;
    expect(await s.push(s.google.deliver(alertMail('m2')))).toBe(204);
    expect(s.google.grants).toHaveLength(3);
    expect(posted(s.hook)).toEqual(['m1', 'm2']);
  });

  it('keeps the historyId in a state file that a restart reads', async () => {
    const s = await setup();
    const latest = s.google.deliver(invoiceMail('m1'));
    expect(await s.push(latest)).toBe(204);
    const file = stateFile(s.dir, ACCOUNT);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ historyId: latest, posted: ['m1'] });
    expect(readFileSync(join(s.dir, `gmail-${ACCOUNT}.json`), 'utf8')).toContain(latest);
  });
});

/** Waits for `cond` over event-loop turns (no wall-clock wait). */
async function vi_waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}
