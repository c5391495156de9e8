/**
 * Limits under concurrency, over real HTTP against the real CLI: a mapping's
 * `rateLimit` lets exactly `max` of a burst through, and `hooks.maxQueuedRuns`
 * refuses runs past the cap with 503 + Retry-After while every run already
 * answered 202 completes, across a restart too, once a slow provider answers.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../src/auth/signing.ts';
import type { VerifySpec } from '../../src/auth/signatures.ts';
import { cleanup, get, post, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { completion, json, startStub, type HttpStub } from '../helpers/http-stub.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };

describe('per-mapping rateLimit under concurrency', () => {
  const SIGNED: VerifySpec = { type: 'hmac-sha256', secret: randomBytes(16).toString('hex') };
  let srv: Running;
  beforeAll(async () => {
    srv = await startCli({
      config: {
        gateway: { auth: { token: GW } },
        hooks: {
          enabled: true,
          token: HOOK,
          authFailures: { max: 1000, windowSeconds: 60 },
          mappings: [
            // a window far longer than the test: what is counted, not when the window ends
            {
              id: 'limited',
              match: { path: 'limited' },
              action: 'wake',
              textTemplate: 'limited {{n}}',
              wakeMode: 'next-heartbeat',
              rateLimit: { max: 5, perSeconds: 600 },
            },
            {
              id: 'other',
              match: { path: 'other' },
              action: 'wake',
              textTemplate: 'other',
              wakeMode: 'next-heartbeat',
              rateLimit: { max: 5, perSeconds: 600 },
            },
            {
              id: 'strict',
              match: { path: 'strict' },
              messageTemplate: 'strict {{n}}',
              model: '{{model}}',
              deliver: false,
              rateLimit: { max: 3, perSeconds: 600 },
            },
            {
              id: 'signed',
              match: { path: 'signed' },
              action: 'wake',
              textTemplate: 'signed',
              wakeMode: 'next-heartbeat',
              verify: SIGNED,
              rateLimit: { max: 2, perSeconds: 600 },
            },
          ],
        },
        agents: { defaults: { heartbeat: { every: '0' } } },
      },
    });
  });
  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    cleanup(srv.dir);
  });

  it('lets exactly max requests of a concurrent burst through; the rest get 429 with Retry-After, and store nothing', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, n) => post(`${srv.url}/hooks/limited`, { n }, auth)));
    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status === 429);
    expect(ok).toHaveLength(5);
    expect(limited).toHaveLength(35);
    for (const a of limited) {
      expect(a.body).toEqual({
        ok: false,
        error: expect.stringContaining('hook "limited" takes at most 5 requests per 600s'),
        code: 'RATE_LIMITED',
      });
      const retry = Number(a.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(600);
    }
    const events = (await get(`${srv.url}/api/main/events?limit=10000`, GW)).body.events as { text: string }[];
    expect(events.filter((e) => /\nlimited \d+\n/.test(e.text))).toHaveLength(5);
    // a mapping's limit is its own
    const other = await Promise.all(Array.from({ length: 8 }, () => post(`${srv.url}/hooks/other`, {}, auth)));
    expect(other.filter((a) => a.status === 200)).toHaveLength(5);
  });

  it('counts requests that reach the mapping, also those its action then refuses; not those refused before it', async () => {
    // wrong token and idempotent repeats never reach the mapping
    for (let i = 0; i < 5; i++)
      expect((await post(`${srv.url}/hooks/strict`, { n: i }, { authorization: 'Bearer wrong' })).status).toBe(401);
    const first = await post(`${srv.url}/hooks/strict`, { n: 1, model: 'echo/echo' }, { ...auth, 'idempotency-key': 'same' });
    expect(first.status).toBe(202);
    for (let i = 0; i < 5; i++)
      expect((await post(`${srv.url}/hooks/strict`, { n: 1 }, { ...auth, 'idempotency-key': 'same' })).body.duplicate).toBe(true);
    // a model the action refuses still spent its turn
    expect((await post(`${srv.url}/hooks/strict`, { n: 2, model: 'nope/x' }, auth)).status).toBe(400);
    expect((await post(`${srv.url}/hooks/strict`, { n: 3, model: 'echo/echo' }, auth)).status).toBe(202);
    expect((await post(`${srv.url}/hooks/strict`, { n: 4, model: 'echo/echo' }, auth)).status).toBe(429);
  });

  it("does not let bad signatures use up a signed mapping's limit", async () => {
    const body = '{"n":1}';
    const bad = await Promise.all(
      Array.from({ length: 10 }, () => post(`${srv.url}/hooks/signed`, body, { 'x-signature': `sha256=${'0'.repeat(64)}` })),
    );
    expect(bad.every((a) => a.body.code === 'INVALID_SIGNATURE')).toBe(true);
    const good = await Promise.all(
      Array.from({ length: 4 }, () => post(`${srv.url}/hooks/signed`, body, signatureHeaders(SIGNED, Buffer.from(body), Date.now()))),
    );
    expect(good.map((a) => a.status).sort()).toEqual([200, 200, 429, 429]);
  });
});

describe('hooks.maxQueuedRuns with a slow provider', () => {
  const CAP = 5;
  let stub: HttpStub;
  /** Answers the stand-in holds back until released. */
  const held: ServerResponse[] = [];
  let release = false;
  const dir = tempDir();
  const config = (stubUrl: string) => ({
    gateway: { auth: { token: GW }, shutdownTimeoutSeconds: 1 },
    hooks: { enabled: true, token: HOOK, maxQueuedRuns: CAP },
    agents: {
      defaults: { model: 'slow/m', maxConcurrent: 1, heartbeat: { every: '0' }, timeoutSeconds: 120 },
      providers: { slow: { type: 'openai', baseUrl: `${stubUrl}/v1` } },
    },
  });

  beforeAll(async () => {
    stub = await startStub((req, res) => {
      const reply = () => json(res, 200, completion(`done: ${String(req.json?.messages?.at(-1)?.content ?? '').slice(-40)}`));
      if (release) reply();
      else held.push(Object.assign(res, { reply }));
    });
  });
  afterAll(async () => {
    await stub.close();
    cleanup(dir);
  });

  it('answers 503 with Retry-After once the queue is full, keeps taking wakes, and completes every run it accepted, across a restart', async () => {
    let srv = await startCli({ config: config(stub.url), dir });
    const accepted = new Map<string, string>(); // runId → message
    const agent = async (i: number) => {
      const message = `job ${i}`;
      const r = await post(
        `${srv.url}/hooks/agent`,
        { message, sessionKey: `hook:job:${i}`, deliver: false, wakeMode: 'next-heartbeat' },
        auth,
      );
      if (r.status === 202) accepted.set(r.body.runId, message);
      return r;
    };

    // a burst far past the cap, all at once
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => agent(i)));
    const refused = burst.filter((r) => r.status === 503);
    expect(burst.every((r) => r.status === 202 || r.status === 503)).toBe(true);
    // the queue holds CAP; at most one more left it for the (stuck) provider
    expect(accepted.size).toBeGreaterThanOrEqual(CAP);
    expect(accepted.size).toBeLessThanOrEqual(CAP + 1);
    for (const r of refused) {
      expect(r.body).toEqual({ ok: false, error: 'too many queued agent runs; try again later', code: 'UNAVAILABLE' });
      expect(r.headers.get('retry-after')).toBe('30');
    }
    await until(() => held.length === 1);
    // when the runner took that run from the queue only after the burst (a busy machine), it left
    // room for one more, and the queue is full after it
    if (accepted.size === CAP) expect((await agent(35)).status).toBe(202);
    expect(accepted.size).toBe(CAP + 1);

    // later requests, one at a time: the queue is full, they are refused, nothing is stored for them
    for (let i = 30; i < 35; i++) expect((await agent(i)).status).toBe(503);
    expect(accepted.size).toBeLessThanOrEqual(CAP + 1);
    const stored = (await get(`${srv.url}/api/runs?limit=10000`, GW)).body.runs as { id: string; status: string }[];
    expect(stored.map((r) => r.id).sort()).toEqual([...accepted.keys()].sort());
    const status = (await get(`${srv.url}/api/status`, GW)).body;
    expect(status.runner).toEqual({ queued: accepted.size - 1, running: 1 });
    // wakes are not capped
    expect((await post(`${srv.url}/hooks/wake`, { text: 'still here', mode: 'next-heartbeat' }, auth)).status).toBe(200);

    // stop while the provider still holds the running one: the queue and the interrupted run are kept
    expect(await srv.stop()).toBe(0);
    expect(srv.output()).toContain('run interrupted by shutdown; left queued');

    // the provider recovers; a new process on the same data finishes everything it was given
    release = true;
    for (const res of held.splice(0)) if (!res.writableEnded && !res.destroyed) (res as ServerResponse & { reply: () => void }).reply();
    srv = await startCli({ config: config(stub.url), dir });
    try {
      await until(async () => {
        const runs = (await get(`${srv.url}/api/runs?limit=10000`, GW)).body.runs as { status: string }[];
        return runs.every((r) => r.status === 'ok');
      }, 30_000);
      const runs = (await get(`${srv.url}/api/runs?limit=10000`, GW)).body.runs as {
        id: string;
        status: string;
        message: string;
        reply: string;
      }[];
      expect(runs.map((r) => r.id).sort()).toEqual([...accepted.keys()].sort());
      for (const r of runs) {
        expect(r.status).toBe('ok');
        expect(r.message).toContain(`\n${accepted.get(r.id)}\n`);
      }
      // every accepted message reached the provider (the interrupted one twice), no refused one did
      const asked = stub.requests.map((q) => String(q.json?.messages?.at(-1)?.content ?? ''));
      for (const m of accepted.values()) expect(asked.some((a) => a.includes(`\n${m}\n`))).toBe(true);
      const refusedMessages = Array.from({ length: 35 }, (_, i) => `job ${i}`).filter((m) => ![...accepted.values()].includes(m));
      for (const m of refusedMessages) expect(asked.some((a) => a.includes(`\n${m}\n`))).toBe(false);
    } finally {
      expect(await srv.stop()).toBe(0);
    }
  });
});
