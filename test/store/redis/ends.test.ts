/**
 * Word of runs that ended on Redis (src/store/redis/ends.ts): an instance hears of a run another instance finished, it
 * subscribes only once something listens, and after its subscriber's connection is lost and back it tells its
 * listeners to read everything again, and hears again.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { RedisStore } from '../../../src/store/redis/store.ts';
import { until } from '../../helpers/cli.ts';
import { newRun, okOutcome } from '../../helpers/records.ts';
import { redisSuite, startRedis, type RedisServer } from '../../helpers/redis-server.ts';

redisSuite('redis driver: word of runs that ended', () => {
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
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  const subscribers = async () => ((await server.client.pubsub('NUMSUB', 'hook-intake:ends')) as [string, number])[1];
  /** A run finished on `store`, its reply not to be delivered. */
  const finishOn = async (store: RedisStore) => {
    const run = newRun();
    await store.records.accept({ events: [], runs: [run] });
    await store.records.startRun(run.id, 1_500);
    await store.records.finishRun(okOutcome(run.id, { delivery: { kind: 'skipped', reason: 'deliver is false' } }));
    return run.id;
  };

  it('tells one instance of a run another finished, subscribing only once something listens', async () => {
    await finishOn(b);
    expect(await subscribers()).toBe(0);
    const heard: (string | undefined)[] = [];
    await a.ends.listen((id) => heard.push(id));
    expect(await subscribers()).toBe(1);
    const id = await finishOn(b);
    await until(() => heard.length > 0);
    expect(heard).toEqual([id]);
  });

  it('tells its listeners to read everything again once its lost connection is back, and hears again', async () => {
    const heard: (string | undefined)[] = [];
    await a.ends.listen((id) => heard.push(id));
    await server.client.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await until(() => heard.includes(undefined), 10_000);
    const id = await finishOn(b);
    await until(() => heard.includes(id));
    expect(heard).toEqual([undefined, id]);
  });
});
