/**
 * Retention on the Redis driver, beyond the shared contract: batches stay within their limit, a pass
 * never stalls on runs whose reply is still pending, and two instances pruning at once remove each
 * record once. No key of a pruned record is left behind.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { pruneAll } from '../../../src/runtime/retention.ts';
import { RedisStore } from '../../../src/store/redis/store.ts';
import type { NewRun, RunOutcome } from '../../../src/store/types.ts';
import { newDelivery, newEvent, newRun, okOutcome } from '../../helpers/records.ts';
import { redisSuite, startRedis, type RedisServer } from '../../helpers/redis-server.ts';
import { newRequest } from '../contract-console.ts';

const cutoff = { runs: 10_000, events: 10_000, requests: 10_000, sessionLines: 50 };

redisSuite('redis driver: retention', () => {
  let server: RedisServer;
  let a: RedisStore;
  let b: RedisStore;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());
  beforeEach(async () => {
    await server.flush();
    [a, b] = await Promise.all([RedisStore.open({ url: server.url }), RedisStore.open({ url: server.url })]);
  });
  afterEach(() => Promise.all([a.close(), b.close()]));

  /** A hook run (with an event and its request kept) accepted, claimed, started, finished at `at` and completed, as the runner does. */
  const finished = async (at: number, over: Partial<NewRun> = {}, outcome: Partial<RunOutcome> = {}) => {
    const run = newRun({ createdAt: at, ...over });
    await a.records.accept({ events: [newEvent({ createdAt: at })], runs: [run], request: newRequest({ receivedAt: at }) });
    expect((await a.runs.claim('w', 60_000, 1)).map((c) => c.id)).toEqual([run.id]);
    await a.records.startRun(run.id, at);
    await a.records.finishRun(okOutcome(run.id, { finishedAt: at, delivery: { kind: 'skipped', reason: 'ack' }, ...outcome }));
    expect(await a.runs.complete(run.id, 'w')).toBe(true);
    return run;
  };
  /** Every key on the server but the instances' presence keys, the counters and the tally of pending events by source. */
  const keys = async () => (await server.client.keys('*')).filter((k) => !/:(alive:.*|seq|mseq|q:n|events:src)$/.test(k)).sort();

  it('removes at most `limit` of each kind per batch, a long transcript over several batches, and leaves no key behind', async () => {
    const line = (i: number) => ({ sessionKey: 's', role: 'user' as const, content: `line ${i}`, runId: null, createdAt: 1_000 });
    for (let i = 0; i < 7; i++) {
      const run = await finished(1_000 + i, { sessionKey: 's' }, { messages: [line(2 * i), line(2 * i + 1)] });
      // each consumed by a heartbeat, which is a finished run too
      const hb = newRun({ kind: 'heartbeat', sessionKey: 'main', createdAt: 2_000 });
      await a.records.insertHeartbeat(hb, 2_000);
      const events = await a.records.pendingEvents(10);
      await a.records.finishRun(
        okOutcome(hb.id, { finishedAt: 2_000, delivery: { kind: 'skipped', reason: 'ack' }, consumedEventIds: events.map((e) => e.id) }),
      );
      expect(await a.records.getRun(run.id)).toBeDefined();
    }
    const dry = await a.records.countPrunable(cutoff);
    expect(dry).toEqual({ runs: 14, events: 7, messages: 14, deliveries: 0, requests: 7 });

    const batches: Awaited<ReturnType<RedisStore['records']['prune']>>[] = [];
    for (;;) {
      const r = await a.records.prune(cutoff, 3);
      batches.push(r);
      for (const n of [r.runs, r.events, r.messages, r.deliveries, r.requests]) expect(n).toBeLessThanOrEqual(3);
      if (!r.more) break;
    }
    const sum = (k: 'runs' | 'events' | 'messages' | 'requests') => batches.reduce((t, r) => t + r[k], 0);
    expect({ runs: sum('runs'), events: sum('events'), messages: sum('messages'), requests: sum('requests') }).toEqual({
      runs: 14,
      events: 7,
      messages: 14,
      requests: 7,
    });
    expect(batches.length).toBeGreaterThanOrEqual(5);
    expect(await keys()).toEqual([]);
  });

  it('moves past runs whose reply is pending, and prunes them in a later pass once it was sent', async () => {
    const runs = [];
    for (let i = 0; i < 4; i++) {
      const run = newRun({ createdAt: 1_000 });
      runs.push(run);
      await a.records.accept({ events: [], runs: [run] });
      await a.records.startRun(run.id, 1_000);
      await a.records.finishRun(
        okOutcome(run.id, { finishedAt: 1_000, delivery: { kind: 'outbox', entry: newDelivery(run.id, { createdAt: 1_000 }) } }),
      );
    }
    for (let i = 0; i < 4; i++) await finished(2_000);
    // four runs to keep ahead of four to prune, a batch of one at a time: the pass ends, having pruned the four
    expect(await pruneAll(a.records, cutoff, { batch: 1 })).toMatchObject({ runs: 4, deliveries: 0 });
    for (const r of runs) expect(await a.records.getRun(r.id)).toBeDefined();

    for (const d of await a.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10))
      await a.records.recordDelivery({ id: d.id, runId: d.runId, attempts: 1, at: 2_000, status: 'sent' });
    expect(await a.records.countPrunable({ ...cutoff, runs: 10_001 })).toMatchObject({ runs: 4, deliveries: 4 });
    expect(await pruneAll(a.records, { ...cutoff, runs: 10_001 }, { batch: 1 })).toMatchObject({ runs: 4, deliveries: 4 });
    for (const r of runs) expect(await a.records.getRun(r.id)).toBeUndefined();
  });

  it('two instances pruning at once remove each record once', async () => {
    for (let i = 0; i < 30; i++) await finished(1_000 + i);
    const dry = await a.records.countPrunable(cutoff);
    expect(dry).toMatchObject({ runs: 30, requests: 30 });
    const [x, y] = await Promise.all([pruneAll(a.records, cutoff, { batch: 4 }), pruneAll(b.records, cutoff, { batch: 4 })]);
    expect({ runs: x.runs + y.runs, requests: x.requests + y.requests }).toEqual({ runs: 30, requests: 30 });
    expect(await a.records.listRuns({ limit: 100 })).toEqual([]);
    expect(await b.requests.list({ limit: 100 })).toEqual([]);
  });
});
