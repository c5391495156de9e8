/**
 * The Redis store read by a process that does not serve from it (src/store/redis/reader.ts): it reads
 * what the serving store wrote, and writes nothing, not even a presence key.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openRedisReader } from '../../../src/store/redis/reader.ts';
import { RedisStore } from '../../../src/store/redis/store.ts';
import { redisSuite, startRedis, type RedisServer } from '../../helpers/redis-server.ts';
import { readerContract } from '../reader-contract.ts';

redisSuite('redis reader', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());

  readerContract('redis', async () => {
    await server.flush();
    const store = await RedisStore.open({ url: server.url });
    return { store, reader: await openRedisReader({ url: server.url }) };
  });

  it('writes nothing: the keys are the same before and after reading', async () => {
    await server.flush();
    const store = await RedisStore.open({ url: server.url });
    await store.records.accept({
      events: [],
      runs: [],
      request: {
        hook: 'h',
        mappingId: null,
        url: '/hooks/h',
        headers: {},
        body: new Uint8Array(2),
        receivedAt: 1,
        status: 204,
        actions: [],
        replayOf: null,
      },
    });
    const keys = async () => (await server.client.keys('*')).sort();
    const before = await keys();
    const reader = await openRedisReader({ url: server.url });
    const [kept] = await reader.requests.list({ limit: 1 });
    expect(await reader.requests.get(kept!.id)).toBeDefined();
    await reader.close();
    expect(await keys()).toEqual(before);
    await store.close();
  });
});
