/**
 * Two Redis stores on one server, as two instances: one queue and one set of records between them, and
 * what one holds is taken over by the other once its presence key expires (it was killed).
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { IdempotencyTakenError } from '../../../src/store/errors.ts';
import { RedisStore } from '../../../src/store/redis/store.ts';
import { newDelivery, newRun, okOutcome } from '../../helpers/records.ts';
import { redisSuite, startRedis, type RedisServer } from '../../helpers/redis-server.ts';

redisSuite('redis driver: several instances', () => {
  let server: RedisServer;
  let a: RedisStore;
  let b: RedisStore;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());
  beforeEach(async () => {
    await server.flush();
    // a short instance timeout: a killed instance's work is taken over after 300 ms
    [a, b] = await Promise.all([
      RedisStore.open({ url: server.url, instanceTimeoutMs: 300 }),
      RedisStore.open({ url: server.url, instanceTimeoutMs: 300 }),
    ]);
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  /** The instance stops as `kill -9` would: no goodbye, its presence key left to expire. */
  const kill = (s: RedisStore) => (s as unknown as { client: { disconnect(): void } }).client.disconnect();
  const waitFor = <T>(fn: () => Promise<T>) => vi.waitFor(async () => expect(await fn()).toBeTruthy(), { timeout: 5_000, interval: 50 });

  it("shares one queue: a run accepted on one is claimed on the other, and a key's runs go one at a time across both", async () => {
    const [k1, k2] = [newRun({ sessionKey: 'k' }), newRun({ sessionKey: 'k' })];
    await a.records.accept({ events: [], runs: [k1, k2] });
    const [first, second] = [await b.runs.claim('wb', 60_000, 10), await a.runs.claim('wa', 60_000, 10)];
    expect(first.map((c) => c.id)).toEqual([k1.id]);
    expect(second).toEqual([]);
    expect(await a.runs.complete(k1.id, 'wb')).toBe(true);
    expect((await a.runs.claim('wa', 60_000, 10)).map((c) => c.id)).toEqual([k2.id]);
  });

  it('takes over the claims of an instance that was killed, counting the attempt', async () => {
    const run = newRun();
    await a.records.accept({ events: [], runs: [run] });
    await a.runs.claim('wa', 60_000, 10);
    await a.records.startRun(run.id, 1_000);
    expect(await b.runs.claim('wb', 60_000, 10)).toEqual([]);
    kill(a);
    await waitFor(async () => (await b.runs.claim('wb', 60_000, 10)).find((c) => c.id === run.id && c.attempts === 1));
  });

  it("sends an instance's pending deliveries from it alone until it is killed, then from another", async () => {
    const run = newRun();
    await a.records.accept({ events: [], runs: [run] });
    await a.records.startRun(run.id, 1_000);
    const entry = newDelivery(run.id);
    await a.records.finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry } }));
    expect(await b.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    expect((await a.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).map((d) => d.id)).toEqual([entry.id]);
    kill(a);
    await waitFor(async () => (await b.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).length === 1);
  });

  it("ends a killed instance's running heartbeat as error, and leaves a live one's alone", async () => {
    const hb = newRun({ kind: 'heartbeat', sessionKey: 'main' });
    await a.records.insertHeartbeat(hb, 1_000);
    expect(await b.records.failInterruptedHeartbeats(2_000, 'restart')).toBe(0);
    const stop = b.pollTakeovers(() => {});
    try {
      kill(a);
      await waitFor(async () => (await b.records.getRun(hb.id))?.status === 'error');
      expect(await b.records.getRun(hb.id)).toMatchObject({ error: 'interrupted: the instance running it stopped' });
    } finally {
      stop();
    }
  });

  it('gives a heartbeat task to one instance, and to the other once its holder is killed', async () => {
    await a.tasks.enqueue({ kind: 'heartbeat', key: 'main' }, 0);
    expect(await b.tasks.enqueue({ kind: 'heartbeat', key: 'main' }, 10)).toBe(0);
    const [held] = await a.tasks.claim('heartbeat', 'wa', 60_000, 1);
    expect(await b.tasks.claim('heartbeat', 'wb', 60_000, 1)).toEqual([]);
    kill(a);
    await waitFor(async () => (await b.tasks.claim('heartbeat', 'wb', 60_000, 1)).find((c) => c.id === held!.id && c.attempts === 1));
  });

  it('counts in shared windows: both instances add to one count, a window ends after its time, a reset ends it at once', async () => {
    expect(await a.counters.countInWindow('auth:1.2.3.4', 60_000, 1_000)).toEqual({ count: 1, start: 1_000 });
    expect(await b.counters.countInWindow('auth:1.2.3.4', 60_000, 2_000)).toEqual({ count: 2, start: 1_000 });
    expect(await a.counters.countInWindow('auth:5.6.7.8', 60_000, 2_000)).toEqual({ count: 1, start: 2_000 });
    expect(await b.counters.countInWindow('auth:1.2.3.4', 60_000, 61_000)).toEqual({ count: 1, start: 61_000 });
    await a.counters.resetCount('auth:1.2.3.4');
    expect(await b.counters.countInWindow('auth:1.2.3.4', 60_000, 62_000)).toEqual({ count: 1, start: 62_000 });
  });

  it('stores an idempotency key once: the second instance to write it is refused and reads the first answer', async () => {
    const rec = (body: string) => ({ key: 'hook:k', status: 200, body, createdAt: 1_000, expiresAt: 60_000 });
    await a.records.accept({ events: [], runs: [newRun()], idempotency: rec('{"first":true}') });
    const late = newRun();
    await expect(b.records.accept({ events: [], runs: [late], idempotency: rec('{"second":true}') })).rejects.toBeInstanceOf(
      IdempotencyTakenError,
    );
    expect(await b.records.getRun(late.id)).toBeUndefined();
    expect((await b.records.getIdempotency('hook:k', 2_000))?.body).toBe('{"first":true}');
  });
});
