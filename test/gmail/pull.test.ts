/**
 * `gmail run` in pull mode (docs/gmail.md, "Pull mode") in process, against the stand-in Google
 * (OAuth, Gmail), the stand-in Pub/Sub (checked against its discovery document) and a stand-in
 * hook: a pulled notice becomes hook requests and is acknowledged only once the hook accepted
 * them; refused ones are handed out again; repeats run nothing twice; a stop acknowledges nothing
 * unprocessed; failed pulls back off.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccessTokens } from '../../src/gmail/access-token.ts';
import { GmailApi } from '../../src/gmail/api.ts';
import { Bridge } from '../../src/gmail/bridge.ts';
import { PullLoop } from '../../src/gmail/pull.ts';
import { PubSubApi } from '../../src/gmail/pubsub.ts';
import { pullSubscription, startGmailRun, type RunningBridge } from '../../src/gmail/run.ts';
import type { Deps } from '../../src/gmail/settings.ts';
import { readState, stateFile } from '../../src/gmail/state.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { json, startStub, type HttpStub } from '../helpers/http-stub.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';
import { GMAIL_READONLY, googleUrls, startGoogle, type GoogleStandIn } from './google-standin.ts';
import { alertMail, invoiceMail, qpMail } from './mail.ts';
import { startPubSub, type PubSubStandIn } from './pubsub-standin.ts';

const ACCOUNT = 'ops@example.com';
const HOOK_TOKEN = 'hook-token-0123456789abcdef';
const PULL = 'pubsub.projects.subscriptions.pull';

interface Setup {
  google: GoogleStandIn;
  pubsub: PubSubStandIn;
  hook: HttpStub;
  run: RunningBridge;
  dir: string;
  timers: { fn: () => void; ms: number; cancelled: boolean }[];
  deps: Deps;
  log: ReturnType<typeof captureLogger>;
  /** Starts `gmail run` again on the same data directory (after a stop). */
  restart(): Promise<RunningBridge>;
}

const open: Setup[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) {
    await s.run.close();
    await s.pubsub.close();
    await s.google.close();
    await s.hook.close();
    cleanup(s.dir);
  }
});

async function setup(gmail: Record<string, unknown> = {}, prepare: (g: GoogleStandIn) => void = () => undefined): Promise<Setup> {
  const google = await startGoogle();
  prepare(google);
  const pubsub = await startPubSub(google);
  const hook = await startStub((_req, res) => json(res, 202, { ok: true, runIds: ['r'] }));
  const dir = tempDir('hook-intake-gmail-pull-');
  const timers: Setup['timers'] = [];
  const deps: Deps = {
    fetch: globalThis.fetch,
    now: Date.now,
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
        mode: 'pull',
        topic: 'projects/proj/topics/gmail',
        subscription: 'gmail-pull',
        hookUrl: `${hook.url}/hooks/gmail`,
        oauth: { clientId: google.client.id, clientSecret: google.client.secret, refreshToken: google.client.refreshToken },
        ...googleUrls(google),
        pubsubBaseUrl: pubsub.url,
        ...gmail,
      },
    },
  });
  const log = captureLogger('debug');
  const start = () => startGmailRun({ config, dataDir: dir, deps, log: log.logger });
  const s: Setup = { google, pubsub, hook, run: await start(), dir, timers, deps, log, restart: start };
  open.push(s);
  return s;
}

const until = (cond: () => boolean) => vi.waitFor(() => expect(cond()).toBe(true), { timeout: 5000, interval: 5 });
const posted = (hook: HttpStub) => hook.requests.map((r) => r.json.messages[0].id);
const historyOf = (s: Setup) => readState(stateFile(s.dir, ACCOUNT)).historyId;
const pulls = (p: PubSubStandIn) => p.calls.filter((c) => c.id === PULL).length;
/** The loop handled everything it was given and waits in its next pull. */
const idle = (p: PubSubStandIn, after: number) => until(() => pulls(p) > after && p.waiting() === 1);
const live = (timers: Setup['timers']) => timers.filter((t) => !t.cancelled);

describe('gmail run, pull mode: from a pulled notice to hook requests', () => {
  it('posts each new message once with gmail:<id> as idempotency key, then acknowledges the notice', async () => {
    const s = await setup();
    expect(s.run.mode).toBe('pull');
    expect(s.run.subscription).toBe('projects/proj/subscriptions/gmail-pull');
    expect(s.run.url).toBeUndefined();
    await idle(s.pubsub, 0);
    const latest = s.google.deliver(invoiceMail('m1'), alertMail('m2'));
    const n = s.pubsub.publish({ emailAddress: ACCOUNT, historyId: latest });
    await until(() => s.pubsub.acked.length === 1);
    expect(s.pubsub.acked).toEqual([n]);
    expect(posted(s.hook)).toEqual(['m1', 'm2']);
    for (const r of s.hook.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${HOOK_TOKEN}`);
      expect(r.headers['idempotency-key']).toBe(`gmail:${r.json.messages[0].id}`);
      expect(r.json).toMatchObject({ source: 'gmail', account: ACCOUNT, historyId: latest });
    }
    expect(historyOf(s)).toBe(latest);
    expect(s.pubsub.calls.find((c) => c.id === PULL)!.body).toEqual({ maxMessages: 10 });
    expect(s.pubsub.calls.find((c) => c.id !== PULL)!.body.ackIds).toHaveLength(1);
    expect(s.pubsub.mismatches).toEqual([]);
    expect(s.google.mismatches).toEqual([]);
    const logged = s.log.text();
    for (const secret of [HOOK_TOKEN, s.google.client.secret, s.google.client.refreshToken, ...s.google.issued])
      expect(logged).not.toContain(secret);
    for (const content of ['Ana Lima', 'Facture', 'invoice', 'Disk usage']) expect(logged).not.toContain(content);
  });

  it('leaves a notice unacknowledged while the hook answers 503; handed out again, it is acknowledged once accepted', async () => {
    const s = await setup();
    await idle(s.pubsub, 0);
    s.hook.handler = (_req, res) => json(res, 503, { ok: false });
    const latest = s.google.deliver(invoiceMail('m1'));
    const n = s.pubsub.publish({ emailAddress: ACCOUNT, historyId: latest });
    await idle(s.pubsub, 1);
    expect(posted(s.hook)).toEqual(['m1']);
    expect(s.pubsub.acked).toEqual([]);
    expect(s.pubsub.outstanding()).toEqual([n]);
    expect(historyOf(s)).toBe('1000');

    s.hook.handler = (_req, res) => json(res, 202, { ok: true });
    s.pubsub.expireDeadlines();
    await until(() => s.pubsub.acked.length === 1);
    expect(s.pubsub.acked).toEqual([n]);
    expect(s.pubsub.deliveries(n)).toBe(2);
    expect(posted(s.hook)).toEqual(['m1', 'm1']);
    expect(historyOf(s)).toBe(latest);
    expect(s.pubsub.mismatches).toEqual([]);
  });

  it('a notice handed out again after it was acknowledged is acknowledged again and runs nothing', async () => {
    const s = await setup();
    await idle(s.pubsub, 0);
    const n = s.pubsub.publish({ emailAddress: ACCOUNT, historyId: s.google.deliver(invoiceMail('m1')) });
    await until(() => s.pubsub.acked.length === 1);
    const gmailCalls = s.google.calls.length;
    s.pubsub.redeliver(n);
    await until(() => s.pubsub.acked.length === 2);
    expect(s.pubsub.acked).toEqual([n, n]);
    expect(posted(s.hook)).toEqual(['m1']);
    expect(s.google.calls.length).toBe(gmailCalls);
  });

  it('notices out of order in one batch: the newest catches up, the older is covered; each message posted once', async () => {
    const s = await setup();
    await idle(s.pubsub, 0);
    const h1 = s.google.deliver(invoiceMail('m1'));
    const h2 = s.google.deliver(alertMail('m2'));
    const n2 = s.pubsub.publish({ emailAddress: ACCOUNT, historyId: h2 });
    const n1 = s.pubsub.publish({ emailAddress: ACCOUNT, historyId: h1 });
    await until(() => s.pubsub.acked.length === 2);
    expect(s.pubsub.acked).toEqual([n2, n1]);
    // both were in one pull answer and acknowledged together
    expect(s.pubsub.calls.filter((c) => c.id !== PULL).map((c) => c.body.ackIds.length)).toEqual([2]);
    expect(posted(s.hook)).toEqual(['m1', 'm2']);
    expect(historyOf(s)).toBe(h2);
  });

  it('acknowledges a message that is not a Gmail notice without posting anything', async () => {
    const s = await setup();
    await idle(s.pubsub, 0);
    const n = s.pubsub.publish({ hello: 'world' });
    await until(() => s.pubsub.acked.length === 1);
    expect(s.pubsub.acked).toEqual([n]);
    expect(s.hook.requests).toHaveLength(0);
    expect(s.log.text()).toContain('not a Gmail notice');
  });
});

describe('gmail run, pull mode: stopping', () => {
  it('a stop in the middle of a batch lets the notice in hand finish and acknowledges nothing unprocessed', async () => {
    const s = await setup();
    await idle(s.pubsub, 0);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    s.hook.handler = async (req, res) => {
      if (req.json.messages[0].id === 'm1') await held;
      json(res, 202, { ok: true });
    };
    const ids = [invoiceMail('m1'), alertMail('m2'), qpMail('m3')].map((m) =>
      s.pubsub.publish({ emailAddress: ACCOUNT, historyId: s.google.deliver(m) }),
    );
    await until(() => s.hook.requests.length === 1);
    const closing = s.run.close();
    release();
    await closing;
    // the first notice's catch-up posted all three messages; the other two notices were not handled
    expect(posted(s.hook)).toEqual(['m1', 'm2', 'm3']);
    expect(s.pubsub.acked).toEqual([ids[0]]);
    expect(s.pubsub.outstanding()).toEqual([ids[1], ids[2]]);

    // after a restart they are handed out again, covered, and acknowledged without a post
    s.run = await s.restart();
    s.pubsub.expireDeadlines();
    await until(() => s.pubsub.acked.length === 3);
    expect(posted(s.hook)).toEqual(['m1', 'm2', 'm3']);
    expect(s.pubsub.mismatches).toEqual([]);
  });

  it('a stop during a long poll ends it at once and acknowledges nothing', async () => {
    const s = await setup();
    await idle(s.pubsub, 0);
    await s.run.close();
    await until(() => s.pubsub.waiting() === 0);
    s.pubsub.publish({ emailAddress: ACCOUNT, historyId: s.google.deliver(invoiceMail('m1')) });
    expect(s.pubsub.acked).toEqual([]);
    expect(s.hook.requests).toHaveLength(0);
    expect(pulls(s.pubsub)).toBe(1);
  });
});

describe('gmail run, pull mode: failures', () => {
  it('backs off after failed pulls: 1 s doubling, Retry-After when given; then pulls again', async () => {
    const s = await setup();
    s.pubsub.faults.push(
      { method: 'pull', status: 503 },
      { method: 'pull', status: 429, retryAfter: '7' },
      { method: 'pull', reset: true },
      { method: 'pull', status: 500 },
    );
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      await until(() => live(s.timers).length === 2);
      const t = live(s.timers).find((x) => x.ms !== 720 * 60_000)!;
      waits.push(t.ms);
      t.cancelled = true;
      t.fn();
    }
    expect(waits).toEqual([1000, 7000, 4000, 8000]);
    await idle(s.pubsub, 4);
    const n = s.pubsub.publish({ emailAddress: ACCOUNT, historyId: s.google.deliver(invoiceMail('m1')) });
    await until(() => s.pubsub.acked.length === 1);
    expect(s.pubsub.acked).toEqual([n]);
    expect(s.log.text()).toContain('gmail: pull failed');
    expect(s.pubsub.mismatches).toEqual([]);
  });

  it('a failed acknowledge leaves the notice to be handed out again, and then it is covered', async () => {
    const s = await setup();
    await idle(s.pubsub, 0);
    s.pubsub.faults.push({ method: 'acknowledge', status: 503 });
    const n = s.pubsub.publish({ emailAddress: ACCOUNT, historyId: s.google.deliver(invoiceMail('m1')) });
    await idle(s.pubsub, 1);
    expect(s.pubsub.outstanding()).toEqual([n]);
    s.pubsub.expireDeadlines();
    await until(() => s.pubsub.acked.length === 1);
    expect(posted(s.hook)).toEqual(['m1']);
  });

  it('a pull left unanswered past its time limit is made again at once, without a failure', async () => {
    const s = await setup();
    await s.run.close();
    const deps = s.deps;
    const tokens = new AccessTokens(deps, `${s.google.url}/token`, {
      clientId: s.google.client.id,
      clientSecret: s.google.client.secret,
      refreshToken: s.google.client.refreshToken,
    });
    const bridge = new Bridge(
      deps,
      new GmailApi(deps, s.google.url, tokens),
      {
        account: ACCOUNT,
        label: 'INBOX',
        includeBody: true,
        maxBytes: 1000,
        hookUrl: `${s.hook.url}/hooks/gmail`,
        hookToken: HOOK_TOKEN,
        stateFile: stateFile(s.dir, ACCOUNT),
      },
      s.log.logger,
    );
    const timers = s.timers.length;
    const loop = new PullLoop(
      deps,
      new PubSubApi(deps, s.pubsub.url, tokens),
      bridge,
      { subscription: s.pubsub.subscription, maxMessages: 5, timeoutMs: 50 },
      s.log.logger,
    );
    const before = pulls(s.pubsub);
    loop.start();
    await until(() => pulls(s.pubsub) >= before + 3);
    await loop.stop();
    expect(s.timers.length).toBe(timers);
    expect(s.log.text()).not.toContain('gmail: pull failed');
    expect(s.log.text()).toContain('gmail: pull unanswered; pulling again');
  });

  it('refuses to start when the refresh token lacks the Pub/Sub scope, naming the command that fixes it', async () => {
    await expect(setup({}, (g) => (g.grantedScopes = [GMAIL_READONLY]))).rejects.toThrow(
      /without the Pub\/Sub scope .*run "hook-intake webhooks gmail auth" again/,
    );
  });

  it('says which command fixes it when Pub/Sub answers that the token lacks its scope', async () => {
    const s = await setup();
    await idle(s.pubsub, 0);
    s.google.grantedScopes = [GMAIL_READONLY];
    s.google.expireAccessTokens();
    s.pubsub.publish({ emailAddress: ACCOUNT, historyId: s.google.deliver(invoiceMail('m1')) });
    // the held pull answers; the next one gets 401, refreshes the token, and gets 403
    await until(() => live(s.timers).length === 2);
    expect(s.log.text()).toContain('the refresh token lacks the Pub/Sub scope: run \\"hook-intake webhooks gmail auth\\" again');
  });
});

describe('hooks.gmail.subscription in pull mode', () => {
  const g = (subscription?: string) => ({ subscription }) as Parameters<typeof pullSubscription>[0];
  it('takes a full name, or a name in the project of the topic', () => {
    expect(pullSubscription(g('projects/other/subscriptions/s1'), 'projects/proj/topics/t')).toBe('projects/other/subscriptions/s1');
    expect(pullSubscription(g('s1'), 'projects/proj/topics/t')).toBe('projects/proj/subscriptions/s1');
  });
  it('is required, and a short name needs a topic with a project', () => {
    expect(() => pullSubscription(g(), 'projects/proj/topics/t')).toThrow(/hooks\.gmail\.subscription is required in pull mode/);
    expect(() => pullSubscription(g('s1'), 't')).toThrow(/hooks\.gmail\.subscription must be projects\/<project>\/subscriptions\/<name>/);
    expect(() => pullSubscription(g('projects/p/topics/x'), 'projects/proj/topics/t')).toThrow(/must be projects/);
  });
});
