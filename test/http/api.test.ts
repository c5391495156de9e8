/**
 * The read API and health endpoints (docs/http.md, "Read API" and "Health") through `createApp(deps)` on an
 * ephemeral port: the gateway token, limits and filters, session keys with
 * `/` and `:`, and the one JSON error shape.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/http/app.ts';
import { FailureThrottle } from '../../src/auth/throttle.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { createLogger } from '../../src/log.ts';
import { GATEWAY_TOKEN, testGeneration } from '../helpers/generation.ts';
import { newEvent, newMessage, newRun, okOutcome } from '../helpers/records.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-api-');
const store = new SqliteStore({ path: join(dir, 'hook-intake.db') });
const generations = new GenerationRef(await testGeneration({ gateway: { auth: { token: GATEWAY_TOKEN } } }));
let ready = true;
let now = 1_000_000;
const throttle = new FailureThrottle({ max: 3, windowMs: 60_000 });

let server: Server;
let base = '';
beforeAll(async () => {
  const app = createApp({
    generations,
    store,
    throttle,
    clock: () => now,
    ready: () => ready,
    status: () => ({ runner: { queued: 0, running: 0 } }),
    logger: createLogger('silent'),
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await store.close();
  cleanup(dir);
});
beforeEach(() => {
  throttle.succeed('127.0.0.1'); // each test starts with a clean failure count
  ready = true;
});

const AUTH = { authorization: `Bearer ${GATEWAY_TOKEN}` };
async function call(path: string, init: { method?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${base}${path}`, { method: init.method ?? 'GET', headers: init.headers ?? AUTH });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe('health endpoints', () => {
  it('GET /healthz answers 200 without a token', async () => {
    expect(await call('/healthz', { headers: {} })).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('GET /readyz answers 200 when ready and 503 when not, without a token', async () => {
    expect(await call('/readyz', { headers: {} })).toMatchObject({ status: 200, body: { ok: true } });
    ready = false;
    expect(await call('/readyz', { headers: {} })).toMatchObject({ status: 503, body: { ok: false, code: 'UNAVAILABLE' } });
  });
});

describe('gateway token', () => {
  it.each([
    ['no Authorization header', {}],
    ['a wrong token', { authorization: 'Bearer nope' }],
    ['the right token in another scheme', { authorization: `Basic ${GATEWAY_TOKEN}` }],
    ['the token in x-gateway-token (hooks only)', { 'x-gateway-token': GATEWAY_TOKEN }],
  ])('answers 401 UNAUTHORIZED for %s', async (_what, headers) => {
    const r = await call('/api/runs', { headers });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ ok: false, error: 'missing or invalid token', code: 'UNAUTHORIZED' });
  });

  it('accepts the token with any case of "Bearer" and surrounding spaces', async () => {
    expect((await call('/api/runs', { headers: { authorization: `bearer   ${GATEWAY_TOKEN} ` } })).status).toBe(200);
  });

  it.each(['/api/runs', '/api/runs/x', '/api/main/events', '/api/sessions/s/messages', '/api/status'])('guards %s', async (path) => {
    expect((await call(path, { headers: {} })).status).toBe(401);
  });

  it('throttles repeated failures with 429 and Retry-After, even for the right token', async () => {
    for (let i = 0; i < 3; i++) expect((await call('/api/runs', { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    const limited = await call('/api/runs', { headers: { authorization: 'Bearer nope' } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toBe('60');
    expect((await call('/api/runs')).status).toBe(429);
    now += 60_000;
    expect((await call('/api/runs')).status).toBe(200);
  });

  it('refuses everything when no gateway token is configured', async () => {
    const configured = generations.current;
    generations.swap(await testGeneration({}));
    try {
      expect((await call('/api/runs')).status).toBe(401);
      expect((await call('/healthz', { headers: {} })).status).toBe(200);
    } finally {
      generations.swap(configured);
    }
  });
});

describe('lists', () => {
  const runs = [newRun({ hookName: 'GitHub', sessionKey: 'hook:gh:1' }), newRun(), newRun()];
  beforeAll(async () => {
    await store.records.accept({ events: Array.from({ length: 105 }, (_, i) => newEvent({ text: `e${i}` })), runs });
    await store.records.startRun(runs[0]!.id, 1);
  });

  it('GET /api/runs lists newest first and filters by status', async () => {
    const all = await call('/api/runs');
    expect(all.body.runs.map((r: { id: string }) => r.id)).toEqual([runs[2]!.id, runs[1]!.id, runs[0]!.id]);
    const running = await call('/api/runs?status=running');
    expect(running.body.runs.map((r: { id: string }) => r.id)).toEqual([runs[0]!.id]);
  });

  it('GET /api/runs filters by a part of the hook name and of the session key', async () => {
    for (const q of ['hook=github', 'hook=HUB', 'session=hook%3Agh%3A', 'hook=git&session=gh&status=running']) {
      expect(
        (await call(`/api/runs?${q}`)).body.runs.map((r: { id: string }) => r.id),
        q,
      ).toEqual([runs[0]!.id]);
    }
    expect((await call('/api/runs?hook=nothing')).body.runs).toEqual([]);
    for (const field of ['hook', 'session']) {
      for (const v of ['', 'x'.repeat(513)])
        expect(await call(`/api/runs?${field}=${v}`)).toMatchObject({ status: 400, body: { code: 'INVALID_PAYLOAD', field } });
    }
  });

  it('GET /api/runs/<id> answers the run, or 404 NOT_FOUND', async () => {
    expect((await call(`/api/runs/${runs[1]!.id}`)).body).toMatchObject({ ok: true, run: { id: runs[1]!.id, status: 'queued' } });
    expect(await call('/api/runs/no-such-run')).toMatchObject({ status: 404, body: { ok: false, code: 'NOT_FOUND' } });
  });

  it('GET /api/main/events defaults to 100, takes ?limit= and ?status=', async () => {
    expect((await call('/api/main/events')).body.events).toHaveLength(100);
    const two = await call('/api/main/events?limit=2');
    expect(two.body.events.map((e: { text: string }) => e.text)).toEqual(['e104', 'e103']);
    expect((await call('/api/main/events?limit=10000&status=pending')).body.events).toHaveLength(105);
    expect((await call('/api/main/events?status=consumed')).body.events).toEqual([]);
  });

  it('answers a list as JSON written in pieces, the same text as the whole list serialised at once', async () => {
    const res = await fetch(`${base}/api/main/events?limit=10000`, { headers: AUTH });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await res.text();
    expect(text).toBe(JSON.stringify({ ok: true, events: await store.records.listEvents({ limit: 10_000 }) }));
  });

  it.each(['0', '-1', '1.5', 'abc', '', '10001', '1e9'])('answers 400 INVALID_PAYLOAD with field "limit" for ?limit=%s', async (limit) => {
    const r = await call(`/api/runs?limit=${limit}`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ ok: false, error: 'limit: must be an integer from 1 to 10000', code: 'INVALID_PAYLOAD', field: 'limit' });
  });

  it.each([
    ['/api/runs?status=done', 'queued, running, ok, error, timeout'],
    ['/api/main/events?status=queued', 'pending, consumed'],
  ])('answers 400 with field "status" for %s', async (path, allowed) => {
    const r = await call(path);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'INVALID_PAYLOAD', field: 'status', error: `status: must be one of ${allowed}` });
  });
});

describe('GET /api/sessions/<key>/messages', () => {
  const key = 'hook:gmail/18c2f:thread.1';
  beforeAll(async () => {
    const run = newRun({ sessionKey: key });
    await store.records.accept({ events: [], runs: [run] });
    await store.records.finishRun(
      okOutcome(run.id, {
        messages: [
          newMessage({ sessionKey: key, content: 'question' }),
          newMessage({ sessionKey: key, role: 'assistant', content: 'answer' }),
        ],
      }),
    );
  });

  it.each([
    ['raw', `/api/sessions/${key}/messages`],
    ['percent-encoded', `/api/sessions/${encodeURIComponent(key)}/messages`],
    ['partly encoded', '/api/sessions/hook%3Agmail%2F18c2f:thread.1/messages'],
  ])('finds a key with "/" and ":" given %s', async (_how, path) => {
    const r = await call(path);
    expect(r.status).toBe(200);
    expect(r.body.sessionKey).toBe(key);
    expect(r.body.messages.map((m: { content: string }) => m.content)).toEqual(['answer', 'question']);
  });

  it('takes ?limit=', async () => {
    const r = await call(`/api/sessions/${encodeURIComponent(key)}/messages?limit=1`);
    expect(r.body.messages.map((m: { content: string }) => m.content)).toEqual(['answer']);
    expect((await call(`/api/sessions/${key}/messages?limit=0`)).body.field).toBe('limit');
  });

  it('answers an unknown session with an empty list', async () => {
    expect((await call('/api/sessions/hook:none/messages')).body).toEqual({ ok: true, sessionKey: 'hook:none', messages: [] });
  });

  it('answers 400 with field "sessionKey" for broken percent-encoding', async () => {
    const r = await call('/api/sessions/%E0%A4%A/messages');
    expect(r).toMatchObject({ status: 400, body: { code: 'INVALID_PAYLOAD', field: 'sessionKey' } });
  });
});

describe('GET /api/status', () => {
  it('reports the generation, hooks, counts and runtime figures', async () => {
    const r = await call('/api/status');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      generation: { id: generations.current.id, file: null, warnings: [] },
      lastReloadError: null,
      hooks: { enabled: false, path: '/hooks', mappings: 0 },
      counts: { events: expect.any(Object), runs: expect.any(Object), outbox: expect.any(Object) },
      runner: { queued: 0, running: 0 },
    });
  });
});

describe('unknown paths and methods', () => {
  it('answers 404 with the JSON error shape', async () => {
    for (const path of ['/nope', '/api', '/api/runs/a/b', '/api/sessions//messages', '/hooks/wake']) {
      const r = await call(path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ ok: false, error: 'not found', code: 'NOT_FOUND' });
    }
  });

  it.each([
    ['POST', '/api/runs'],
    ['DELETE', '/api/runs/x'],
    ['PUT', '/api/main/events'],
    ['POST', '/healthz'],
  ])('answers %s %s with 405 METHOD_NOT_ALLOWED, Allow and the JSON error shape', async (method, path) => {
    const r = await call(path, { method });
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ ok: false, error: expect.stringContaining('GET'), code: 'METHOD_NOT_ALLOWED' });
    expect(r.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD']);
  });
});
