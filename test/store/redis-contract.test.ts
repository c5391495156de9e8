/** The Redis driver against the store and queue contracts, on a real redis-server emptied before each case. */
import { afterAll, beforeAll } from 'vitest';
import { RedisStore } from '../../src/store/redis/store.ts';
import { redisSuite, startRedis, type RedisServer } from '../helpers/redis-server.ts';
import { storeContract } from './contract.ts';
import { queueContract } from './queue-contract.ts';

redisSuite('redis driver', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());
  const open = async (clock?: () => number) => {
    await server.flush();
    return RedisStore.open({ url: server.url, ...(clock ? { clock } : {}) });
  };
  storeContract('redis', () => open());
  queueContract('redis', ({ clock }) => open(clock));
});
