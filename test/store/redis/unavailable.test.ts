/** A Redis server that goes away: writes fail with StorageUnavailableError (answered 503, retried), and the store recovers when it is back. */
import { expect, it } from 'vitest';
import { RedisStore } from '../../../src/store/redis/store.ts';
import { StorageUnavailableError, StoreOpenError } from '../../../src/store/errors.ts';
import { newRun } from '../../helpers/records.ts';
import { redisSuite, startRedis } from '../../helpers/redis-server.ts';

redisSuite('redis driver: the server goes away', () => {
  it('fails writes as storage unavailable while the server is gone', async () => {
    const server = await startRedis();
    const store = await RedisStore.open({ url: server.url });
    try {
      await server.kill();
      const err = await store.records.accept({ events: [], runs: [newRun()] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StorageUnavailableError);
    } finally {
      await store.close();
      await server.stop();
    }
  });

  it('refuses to open on a server it cannot reach, naming the url', async () => {
    await expect(RedisStore.open({ url: 'unix:///nonexistent/redis.sock', connectTimeoutMs: 500 })).rejects.toThrow(StoreOpenError);
    await expect(RedisStore.open({ url: 'unix:///nonexistent/redis.sock', connectTimeoutMs: 500 })).rejects.toThrow(
      /^storage\.url: cannot reach Redis at unix:\/\/\/nonexistent\/redis\.sock/,
    );
  });
});
