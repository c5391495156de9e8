/**
 * Three `hook-intake serve` instances on one redis-server act as one service (docs/redis.md): mixed wake
 * and agent load spread over them, one killed with SIGKILL mid-load. Every request answered 2xx is
 * stored and carried out, each session's runs run in order and one at a time, heartbeats never run
 * two at once, and no run is left unfinished; failed authentications count for the whole service.
 * Prints the figures.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/store/redis/store.ts';
import type { Run } from '../../src/store/types.ts';
import { cleanup, post, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { completion, json, startStub, type HttpStub } from '../helpers/http-stub.ts';
import { redisSuite, startRedis, type RedisServer } from '../helpers/redis-server.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };
const SESSIONS = 15;
const RUNS_PER_SESSION = 10;
const WAKE_CHAINS = 6;
const WAKES_PER_CHAIN = 25;
/** The instance killed mid-load. */
const KILLED = 1;
/** The job a model call is for (`job s3#7`); none for a heartbeat, whose prompt may quote jobs. */
const jobOf = (prompt: string) => (prompt.startsWith('Heartbeat.') ? undefined : /job s\d+#\d+/.exec(prompt)?.[0]);

redisSuite('several instances on one Redis', () => {
  let redis: RedisServer;
  let llm: HttpStub;
  let receiver: HttpStub;
  let store: RedisStore;
  const dirs: string[] = [];
  /** Deliveries received, by run id. */
  const delivered = new Map<string, number>();
  /** The model calls of the instance that is killed, held until the kill ends them. */
  const held: { job: string; aborted: Promise<void> }[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    store = await RedisStore.open({ url: redis.url });
    // a model that takes 20–60 ms; the calls of the instance to be killed (its provider's URL says which it is)
    // are held until the kill cuts them, so it has runs in flight then, whatever the machine's speed
    llm = await startStub(async (req, res) => {
      const last = String(req.json.messages.at(-1).content);
      const job = jobOf(last);
      if (job && req.url.startsWith(`/i${KILLED}/`)) {
        held.push({ job, aborted: req.aborted });
        return req.aborted;
      }
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 40));
      json(res, 200, completion(last.startsWith('Heartbeat.') ? 'HEARTBEAT_OK' : `done: ${job ?? '?'}`));
    });
    receiver = await startStub((req, res) => {
      delivered.set(req.json.runId, (delivered.get(req.json.runId) ?? 0) + 1);
      json(res, 200, { ok: true });
    });
  });
  afterAll(async () => {
    await store?.close();
    await llm?.close();
    await receiver?.close();
    await redis?.stop();
    for (const d of dirs) cleanup(d);
  });

  const config = (instance: number) => ({
    hooks: { enabled: true, token: HOOK },
    agents: {
      defaults: { model: 'llm/stand-in', maxConcurrent: 4, heartbeat: { every: '0' } },
      providers: { llm: { type: 'openai', baseUrl: `${llm.url}/i${instance}/v1`, models: { 'stand-in': 'local-model' } } },
    },
    channels: { out: { type: 'webhook', url: `${receiver.url}/deliver`, secret: `whsec_${randomBytes(16).toString('base64')}` } },
    session: { defaultRoute: { channel: 'out' } },
    delivery: { initialBackoffMs: 50 },
    storage: { driver: 'redis', url: redis.url, instanceTimeoutSeconds: 1 },
    logging: { level: 'warn' },
  });

  it('keeps every 2xx, in order per session, with one heartbeat at a time, when one of three instances is killed', async () => {
    const instances: Running[] = await Promise.all(
      [0, 1, 2].map((i) => startCli({ config: config(i), dir: (dirs[dirs.length] = tempDir()), startTimeoutMs: 60_000 })),
    );
    const alive = [true, true, true];
    let next = 0;
    const figures = { requests: 0, answered2xx: 0, refused: 0, retriedElsewhere: 0 };
    /** Accepted agent runs by idempotency key, and wake events. */
    const runs = new Map<string, string>();
    const wakes: string[] = [];

    /** A load balancer's way: round robin over live instances; a request cut off goes once to another, with the same key. */
    const send = async (path: string, body: unknown, key: string): Promise<{ status: number; body: any } | undefined> => {
      figures.requests++;
      for (let attempt = 0; attempt < 2; attempt++) {
        const i = [0, 1, 2].map((k) => (next + k) % 3).find((k) => alive[k])!;
        next = (i + 1) % 3;
        try {
          const r = await post(`${instances[i]!.url}${path}`, body, { ...auth, 'idempotency-key': key });
          if (r.status >= 200 && r.status < 300) figures.answered2xx++;
          else figures.refused++;
          return r;
        } catch {
          alive[i] = false;
          figures.retriedElsewhere++;
        }
      }
      return undefined;
    };

    const agentChain = async (s: number) => {
      for (let n = 0; n < RUNS_PER_SESSION; n++) {
        const key = `run-s${s}-${n}`;
        const r = await send(
          '/hooks/agent',
          { message: `job s${s}#${n}`, sessionKey: `hook:s${s}`, wakeMode: n % 3 === 0 ? 'now' : 'next-heartbeat' },
          key,
        );
        if (r && r.status < 300) runs.set(key, r.body.runId);
      }
    };
    const wakeChain = async (c: number) => {
      for (let n = 0; n < WAKES_PER_CHAIN; n++) {
        const r = await send('/hooks/wake', { text: `event ${c}.${n}`, mode: n % 4 === 0 ? 'now' : 'next-heartbeat' }, `wake-${c}-${n}`);
        if (r && r.status < 300) wakes.push(r.body.eventId);
      }
    };
    const total = SESSIONS * RUNS_PER_SESSION + WAKE_CHAINS * WAKES_PER_CHAIN;
    const load = Promise.all([
      ...Array.from({ length: SESSIONS }, (_, s) => agentChain(s)),
      ...Array.from({ length: WAKE_CHAINS }, (_, c) => wakeChain(c)),
    ]);
    // the kill lands once a third of the load is answered, with runs in flight on the instance killed
    await until(() => figures.answered2xx >= total / 3 && held.length > 0, 30_000, 5).catch(() => {
      throw new Error(`no kill: ${figures.answered2xx} of ${total} answered 2xx, ${held.length} model calls held on instance ${KILLED}`);
    });
    instances[KILLED]!.proc.kill('SIGKILL');
    // the held calls were in flight: the kill, not an answer, ended them
    await Promise.all(held.map((h) => h.aborted));
    await load;
    await instances[KILLED]!.stop();

    const runIds = new Set(runs.values());
    const final = await until(
      async () => {
        const all = await store.records.listRuns({ limit: 10_000 });
        const hooks = all.filter((r) => r.kind === 'hook');
        const done = hooks.every((r) => ['ok', 'error', 'timeout'].includes(r.status) && r.delivery.status !== 'pending');
        return done && [...runIds].every((id) => delivered.has(id)) ? all : undefined;
      },
      30_000,
      100,
    );
    // the last heartbeat consumes what is still pending
    await until(
      async () => (await store.records.counts()).events.pending === 0 && (await store.records.counts()).runs.running === 0,
      15_000,
      100,
    );

    const hooks = final.filter((r) => r.kind === 'hook');
    const lost = [...runIds].filter((id) => !hooks.some((r) => r.id === id && r.status === 'ok')).length;
    const duplicateRuns = hooks.length - runIds.size;
    const duplicateDeliveries = [...delivered.values()].filter((n) => n > 1).length;
    const events = await store.records.listEvents({ limit: 10_000 });
    const lostWakes = wakes.filter((id) => !events.some((e) => e.id === id && e.status === 'consumed')).length;
    console.info(
      `redis-instances: ${figures.requests} requests, ${figures.answered2xx} answered 2xx (${runs.size} runs, ${wakes.length} wakes), ` +
        `${figures.refused} refused, ${figures.retriedElsewhere} cut off by the kill and sent again elsewhere; lost ${lost + lostWakes}, ` +
        `duplicate runs ${duplicateRuns}, duplicate deliveries ${duplicateDeliveries}; ` +
        `${hooks.filter((r) => r.attempts > 1).length} runs taken over and run again (${held.length} held at the kill), ${final.filter((r) => r.kind === 'heartbeat').length} heartbeats`,
    );

    expect(figures.answered2xx).toBe(figures.requests);
    expect(lost + lostWakes).toBe(0);
    expect(duplicateRuns).toBe(0);
    // each request kept once in the request log, whichever instance took it (a repeat is not kept again)
    expect((await store.requests.list({ limit: 10_000 })).length).toBe(figures.requests);
    // a reply the killed instance sent but had not recorded as sent is sent again by the one taking over
    // (at least once, as after a crash on SQLite): only the few it had in flight, never the whole outbox
    expect(duplicateDeliveries).toBeLessThanOrEqual(SESSIONS);
    expect(hooks.every((r) => r.attempts <= 2)).toBe(true);
    // each run in flight on the killed instance was taken over by another one: called again from there, and finished
    // (its attempts say less: the start is stored beside the model call, so the kill may have come before it was)
    const calledElsewhere = (job: string) =>
      llm.requests.filter((r) => !r.url.startsWith(`/i${KILLED}/`) && jobOf(String(r.json.messages.at(-1).content)) === job).length;
    expect(held.map((h) => ({ job: h.job, calledElsewhere: calledElsewhere(h.job) > 0 }))).toEqual(
      held.map((h) => ({ job: h.job, calledElsewhere: true })),
    );
    expect(held.map((h) => hooks.find((r) => r.message.includes(`\n${h.job}\n`))?.status)).toEqual(held.map(() => 'ok'));

    // each session's runs in the order sent, each started after the one before finished
    const bySession = new Map<string, Run[]>();
    for (const r of hooks) bySession.set(r.sessionKey, [...(bySession.get(r.sessionKey) ?? []), r]);
    for (const list of bySession.values()) {
      list.sort((a, b) => Number(/#(\d+)/.exec(a.message)![1]) - Number(/#(\d+)/.exec(b.message)![1]));
      for (let i = 1; i < list.length; i++) expect(list[i]!.startedAt!).toBeGreaterThanOrEqual(list[i - 1]!.finishedAt!);
    }
    // heartbeats one at a time across instances (one ended by the kill aside), and no more than the `now` requests asked for
    const beats = final.filter((r) => r.kind === 'heartbeat' && r.status === 'ok').sort((a, b) => a.startedAt! - b.startedAt!);
    for (let i = 1; i < beats.length; i++) expect(beats[i]!.startedAt!).toBeGreaterThanOrEqual(beats[i - 1]!.finishedAt!);
    const nowRequests = Math.ceil(RUNS_PER_SESSION / 3) * SESSIONS + Math.ceil(WAKES_PER_CHAIN / 4) * WAKE_CHAINS;
    expect(final.filter((r) => r.kind === 'heartbeat').length).toBeLessThanOrEqual(nowRequests);
    // nothing left in the queue
    await store.runs.refresh();
    expect(store.runs.size()).toEqual({ waiting: 0, claimed: 0 });

    // authentication failures are counted for the service: spread over the two instances left, they are
    // refused soon after the 20th in all (hooks.authFailures.max), not after the 20th on each (the 41st).
    // Each instance learns the shared count after its answer, so it may refuse a few late.
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await post(`${instances[i % 2 === 0 ? 0 : 2]!.url}/hooks/wake`, { text: 'x' }, { authorization: 'Bearer wrong' });
      statuses.push(r.status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(26)).toEqual([429, 429, 429, 429]);

    await Promise.all([instances[0]!.stop(), instances[2]!.stop()]);
  }, 120_000);
});
