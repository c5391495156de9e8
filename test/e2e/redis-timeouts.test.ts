/**
 * A Redis that holds writes (`CLIENT PAUSE WRITE`) does not hold a sender past `storage.timeoutSeconds`
 * (docs/redis.md, "Timeouts"): the request is answered 503 with Retry-After while Redis still holds its
 * write; once Redis lets go, the write lands, the sender's retry with the same idempotency key gets the
 * first answer as a duplicate, one run is stored and carried out, and the runs held meanwhile finish
 * with no restart of the instance.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/store/redis/store.ts';
import { cleanup, post, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { redisSuite, startRedis, type RedisServer } from '../helpers/redis-server.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;

redisSuite('a Redis that holds writes', () => {
  let redis: RedisServer;
  let store: RedisStore;
  let serve: Running;
  let dir: string;

  beforeAll(async () => {
    redis = await startRedis();
    store = await RedisStore.open({ url: redis.url });
    dir = tempDir();
    serve = await startCli({
      config: {
        hooks: { enabled: true, token: HOOK },
        agents: { defaults: { heartbeat: { every: '0' } } },
        // the instance's own timed writes (its presence, takeovers) far apart: while Redis holds writes, the request's
        // idempotency read goes through and its write is the one held, as it is for most requests of a busy instance
        storage: { driver: 'redis', url: redis.url, timeoutSeconds: 1, instanceTimeoutSeconds: 600 },
        logging: { level: 'warn' },
      },
      dir,
    });
  });
  afterAll(async () => {
    await serve?.stop();
    await store?.close();
    await redis?.stop();
    if (dir) cleanup(dir);
  });

  const agent = (message: string, key: string) =>
    post(`${serve.url}/hooks/agent`, { message, sessionKey: 'hook:held' }, { authorization: `Bearer ${HOOK}`, 'idempotency-key': key });

  it('answers 503 within storage.timeoutSeconds, and the retry with the same key finds the write that landed late', async () => {
    // a wake that starts no run: answered once its write is done, after which the instance sends Redis nothing
    const before = await post(
      `${serve.url}/hooks/wake`,
      { text: 'before the pause', mode: 'next-heartbeat' },
      { authorization: `Bearer ${HOOK}` },
    );
    expect(before.status).toBe(200);

    // long enough that only the bound can end the request while Redis holds it
    await redis.client.call('CLIENT', 'PAUSE', '120000', 'WRITE');
    let held: Awaited<ReturnType<typeof agent>>;
    let retriedWhileHeld: Awaited<ReturnType<typeof agent>>;
    try {
      held = await agent('sent while Redis holds writes', 'k-held');
      retriedWhileHeld = await agent('sent while Redis holds writes', 'k-held');
      // still paused here: the answers came from the bound, not from Redis letting go
      expect(await redis.client.call('CLIENT', 'PAUSE', '120000', 'WRITE')).toBe('OK');
    } finally {
      await redis.client.call('CLIENT', 'UNPAUSE');
    }
    for (const r of [held, retriedWhileHeld]) {
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ ok: false, code: 'STORAGE_UNAVAILABLE' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }

    const retry = await agent('sent while Redis holds writes', 'k-held');
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ ok: true, duplicate: true, sessionKey: 'hook:held' });

    // one run for the key, and the runtime carried on by itself: it ran
    const runs = await until(async () => {
      const all = (await store.records.listRuns({ limit: 100 })).filter((r) => r.kind === 'hook');
      return all.length === 1 && all[0]!.status === 'ok' ? all : undefined;
    });
    expect(runs[0]!.id).toBe(retry.body.runId);
    expect(serve.output()).not.toMatch(/request failed/);
  });
});
