/**
 * What intake answers when a store driver fails, by the storage contract's errors alone
 * (src/store/errors.ts), with a driver that fails on demand (test/helpers/faulty-store.ts):
 * `503 STORAGE_UNAVAILABLE` with the driver's `Retry-After` for `/hooks/wake`, `/hooks/agent` and the
 * read API (docs/http.md), and nothing answered 2xx that was not stored.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FailureThrottle } from '../../src/auth/throttle.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { createListener } from '../../src/http/app.ts';
import { createDispatcher } from '../../src/intake/dispatch.ts';
import { IdempotencyGuard } from '../../src/intake/idempotency.ts';
import { Intake } from '../../src/intake/pipeline.ts';
import { createRateLimiter } from '../../src/intake/rate-limit.ts';
import { StorageUnavailableError } from '../../src/store/errors.ts';
import { faultyStore } from '../helpers/faulty-store.ts';
import { GATEWAY_TOKEN, HOOK_TOKEN, testGeneration } from '../helpers/generation.ts';
import { captureLogger } from '../helpers/runtime.ts';

const store = faultyStore();
const log = captureLogger('info');
let accepted = 0;
let server: Server;
let base = '';

beforeAll(async () => {
  const generations = new GenerationRef(
    await testGeneration({
      hooks: { enabled: true, token: HOOK_TOKEN },
      gateway: { auth: { token: GATEWAY_TOKEN } },
      storage: { timeoutSeconds: 1 },
    }),
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
beforeEach(async () => {
  store.heal();
  await store.release();
});

async function hook(name: 'wake' | 'agent', n: number, headers: Record<string, string> = {}) {
  const body = name === 'wake' ? { text: `wake ${n}` } : { message: `agent ${n}` };
  const res = await fetch(`${base}/hooks/${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${HOOK_TOKEN}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
}

const UNAVAILABLE = { ok: false, error: 'storage is unavailable; nothing was stored; try again later', code: 'STORAGE_UNAVAILABLE' };

describe('a driver that fails with StorageUnavailableError', () => {
  it('gets 503 STORAGE_UNAVAILABLE with its Retry-After for a wake and an agent request, and nothing is stored', async () => {
    store.fail(new StorageUnavailableError('the server went away', { retryAfterSeconds: 7 }));
    for (const name of ['wake', 'agent'] as const) {
      const r = await hook(name, 0, { 'idempotency-key': `down-${name}` });
      expect(r).toEqual({ status: 503, retryAfter: '7', body: UNAVAILABLE });
    }
    // the idempotency check was refused first: the write was never tried
    expect(store.refused()).toBeGreaterThanOrEqual(2);
    store.heal();
    expect(accepted).toBe(0);
    expect(await store.inner.records.counts()).toMatchObject({ events: { pending: 0 }, runs: { queued: 0 } });
    expect(log.text()).toContain('the server went away');
  });

  it('gets 503 when only the write fails, after the idempotency key was looked up', async () => {
    store.fail(new StorageUnavailableError('full'), ['records']);
    const r = await hook('agent', 1);
    expect(r).toMatchObject({ status: 503, retryAfter: '30', body: UNAVAILABLE });
    store.heal();
    expect(await store.inner.records.listRuns({ limit: 10 })).toEqual([]);
  });

  it('answers the read API 503 while the store cannot be read', async () => {
    store.fail(new StorageUnavailableError('down', { retryAfterSeconds: 5 }), ['records']);
    const res = await fetch(`${base}/api/runs`, { headers: { authorization: `Bearer ${GATEWAY_TOKEN}` } });
    expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([503, '5', UNAVAILABLE]);
  });

  it('answers 2xx only for what was stored, while the store fails on and off', async () => {
    const answered: { name: 'wake' | 'agent'; id: unknown }[] = [];
    let refused = 0;
    for (let i = 0; i < 12; i++) {
      if (i % 3 === 1) store.fail();
      else store.heal();
      const name = i % 2 ? 'agent' : 'wake';
      const r = await hook(name, i);
      if (r.status === 503) refused++;
      else answered.push({ name, id: name === 'wake' ? r.body.eventId : r.body.runId });
    }
    store.heal();
    expect(refused).toBe(4);
    const events = (await store.inner.records.listEvents({ limit: 100 })).map((e) => e.id);
    const runs = (await store.inner.records.listRuns({ limit: 100 })).map((r) => r.id);
    expect(events.sort()).toEqual(
      answered
        .filter((a) => a.name === 'wake')
        .map((a) => a.id)
        .sort(),
    );
    expect(runs.sort()).toEqual(
      answered
        .filter((a) => a.name === 'agent')
        .map((a) => a.id)
        .sort(),
    );
  });

  it('lets any other failure of a driver be a 500, not an outage', async () => {
    store.fail(new Error('a bug in the driver'), ['records']);
    const r = await hook('wake', 99);
    expect(r).toMatchObject({ status: 500, body: { ok: false, error: 'internal error', code: 'INTERNAL' } });
  });
});

describe('a driver that holds its calls (docs/redis.md, "Timeouts")', () => {
  it('answers 503 once storage.timeoutSeconds is spent; the held write is not committed past its deadline, and the retry stores it once', async () => {
    const held = async () => (await store.inner.records.listRuns({ limit: 100 })).filter((r) => r.message.includes('agent 200'));
    store.hold(['records'], ['accept']);
    const before = accepted;
    const late = await hook('agent', 200, { 'idempotency-key': 'held' });
    expect(late).toEqual({
      status: 503,
      retryAfter: '30',
      body: {
        ok: false,
        error: 'storage did not answer in time; try again later with the same idempotency key',
        code: 'STORAGE_UNAVAILABLE',
      },
    });
    // the store lets go: the write reaches SQLite's group commit past its deadline and is refused there
    const [landed] = await store.release();
    expect(landed).toMatchObject({ status: 'rejected', reason: expect.any(StorageUnavailableError) });
    expect(await held()).toEqual([]);
    expect(accepted).toBe(before);
    const retry = await hook('agent', 200, { 'idempotency-key': 'held' });
    expect(retry).toMatchObject({ status: 202, body: { ok: true } });
    expect(retry.body.duplicate).toBeUndefined();
    expect(await held()).toHaveLength(1);
    expect(accepted).toBe(before + 1);
  });
});
