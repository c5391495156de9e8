/**
 * Intake while the store cannot write (a full disk): `503 STORAGE_UNAVAILABLE`
 * with `Retry-After`, nothing answered 2xx that is not on disk, and normal
 * answers again once the disk has room, without a restart.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureThrottle } from '../../src/auth/throttle.ts';
import { createListener } from '../../src/http/app.ts';
import { Intake } from '../../src/intake/pipeline.ts';
import { createRateLimiter } from '../../src/intake/rate-limit.ts';
import { IdempotencyGuard } from '../../src/intake/idempotency.ts';
import { captureLogger } from '../helpers/runtime.ts';
import { createDispatcher } from '../../src/intake/dispatch.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { GATEWAY_TOKEN, HOOK_TOKEN, testGeneration } from '../helpers/generation.ts';
import { fillableDisk } from '../helpers/storage.ts';

const store = new SqliteStore({ path: ':memory:' });
const disk = fillableDisk(store);
const log = captureLogger('info');
let accepted = 0;
let server: Server;
let base = '';

beforeAll(async () => {
  const generations = new GenerationRef(
    await testGeneration({ hooks: { enabled: true, token: HOOK_TOKEN }, gateway: { auth: { token: GATEWAY_TOKEN } } }),
  );
  const listener = createListener({
    generations,
    store,
    intake: new Intake({
      dispatcher: createDispatcher({
        records: store.records,
        runsAccepted: () => accepted++,
        queuedRuns: () => 0,
        requestHeartbeat: () => {},
      }),
      idempotency: new IdempotencyGuard(store.records),
      rateLimiter: createRateLimiter(store.counters),
      logger: log.logger,
    }),
    throttle: new FailureThrottle({ max: 100, windowMs: 60_000 }),
    logger: log.logger,
    clock: Date.now,
    ready: () => true,
    status: () => ({}),
  });
  server = createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await store.close();
});

async function hook(name: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/hooks/${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${HOOK_TOKEN}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe('intake on a full disk', () => {
  it('answers 503 STORAGE_UNAVAILABLE with Retry-After while the store cannot write, and 2xx again once it can', async () => {
    disk.full = true;
    for (const [name, body] of [
      ['wake', { text: 'disk full wake' }],
      ['agent', { message: 'disk full agent' }],
    ] as const) {
      const r = await hook(name, body, { 'idempotency-key': `k-${name}` });
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('30');
      expect(r.body).toEqual({
        ok: false,
        error: 'storage is unavailable; nothing was stored; try again later',
        code: 'STORAGE_UNAVAILABLE',
      });
    }
    expect(disk.failedCommits()).toBeGreaterThan(0);
    expect([accepted, store.runs.size().waiting]).toEqual([0, 0]);
    expect(await store.records.listEvents({ limit: 10 })).toEqual([]);
    expect(await store.records.listRuns({ limit: 10 })).toEqual([]);
    // the cause reaches the log, the request's body does not
    expect(log.text()).toContain('database or disk is full');
    expect(log.text()).toContain('STORAGE_UNAVAILABLE');
    expect(log.text()).not.toContain('disk full wake');

    disk.full = false;
    // the same idempotency keys are fresh: the refused requests left nothing behind
    const wake = await hook('wake', { text: 'disk full wake' }, { 'idempotency-key': 'k-wake' });
    expect(wake.status).toBe(200);
    expect(wake.body.duplicate).toBeUndefined();
    const agent = await hook('agent', { message: 'disk full agent' }, { 'idempotency-key': 'k-agent' });
    expect(agent.status).toBe(202);
    expect(accepted).toBe(1);
    expect((await store.runs.claim('w', 1000, 10)).map((c) => c.id)).toEqual([agent.body.runId]);
    expect((await store.records.listEvents({ limit: 10 })).map((e) => e.id)).toEqual([wake.body.eventId]);
  });
});
