/**
 * With `appendonly yes` and `appendfsync always`, what the store acknowledged survives the Redis server
 * being killed (SIGKILL) and started again on its files: a 2xx then means on disk.
 */
import { expect, it } from 'vitest';
import { RedisStore } from '../../../src/store/redis/store.ts';
import { cleanup, tempDir } from '../../helpers/cli.ts';
import { newEvent, newRun } from '../../helpers/records.ts';
import { redisSuite, startRedis } from '../../helpers/redis-server.ts';

redisSuite('redis driver: append-only file', () => {
  it('keeps every acknowledged write across a SIGKILL of the server, queue included', async () => {
    const dir = tempDir('hook-intake-aof-');
    try {
      const first = await startRedis({ aof: true, dir });
      const store = await RedisStore.open({ url: first.url });
      const runs = Array.from({ length: 50 }, (_, i) => newRun({ sessionKey: `s${i % 5}` }));
      const events = Array.from({ length: 50 }, () => newEvent());
      await Promise.all(
        runs.map((r, i) =>
          store.records.accept({
            events: [events[i]!],
            runs: [r],
            idempotency: { key: `k${i}`, status: 202, body: '{}', createdAt: 1, expiresAt: 10_000 },
          }),
        ),
      );
      await first.kill();
      await store.close();

      const second = await startRedis({ aof: true, dir });
      const again = await RedisStore.open({ url: second.url });
      try {
        expect((await again.records.counts()).runs.queued).toBe(50);
        expect((await again.records.counts()).events.pending).toBe(50);
        expect(await again.records.getIdempotency('k49', 5)).toMatchObject({ status: 202 });
        // the queue came back too: the oldest run of each session is due
        const claims = await again.runs.claim('w', 60_000, 100);
        expect(claims.map((c) => c.id)).toEqual(runs.slice(0, 5).map((r) => r.id));
      } finally {
        await again.close();
        await second.stop();
      }
    } finally {
      cleanup(dir);
    }
  });
});
