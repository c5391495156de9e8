/** The test harness's redis-server: on a unix socket, empty after a flush, gone after a stop. */
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { redisSuite, startRedis } from '../../helpers/redis-server.ts';

redisSuite('redis-server harness', () => {
  it('serves on a unix socket with no persistence, flushes, and stops', async () => {
    const r = await startRedis();
    try {
      expect(existsSync(r.socket)).toBe(true);
      expect(await r.client.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
      expect(await r.client.config('GET', 'save')).toEqual(['save', '']);
      await r.client.set('k', 'v');
      await r.flush();
      expect(await r.client.dbsize()).toBe(0);
    } finally {
      await r.stop();
    }
    expect(existsSync(r.dir)).toBe(false);
  });

  it('turns on the append-only file when asked', async () => {
    const r = await startRedis({ aof: true });
    try {
      expect(await r.client.config('GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
    } finally {
      await r.stop();
    }
  });
});
