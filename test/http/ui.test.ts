/**
 * The console's sign-in and the session cookie on the read API, through
 * `createApp(deps)` with an injected clock: the exchange of the gateway token
 * for an HttpOnly, SameSite=Strict cookie, the failure throttle on a wrong
 * token or an unknown session, expiry and sign-out, CSRF on state-changing
 * calls, the page and its assets, and the console's endpoints (stats, try).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/http/app.ts';
import { FailureThrottle } from '../../src/auth/throttle.ts';
import { ConsoleSessions, DEFAULT_SESSION_LIMITS, readCookie, SESSION_COOKIE } from '../../src/auth/sessions.ts';
import { overTls } from '../../src/http/ui.ts';
import { RequestTally } from '../../src/http/metrics.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { createLogger } from '../../src/log.ts';
import { GATEWAY_TOKEN, testGeneration } from '../helpers/generation.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { MappingsAnswer, SessionAnswer, StatsAnswer, TryAnswer } from '../../src/http/ui-schemas.ts';

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
/** Asserts that `body` passes `schema` (the one the OpenAPI document shows). */
function conforms(schema: object, body: unknown): void {
  const validate = ajv.compile(schema);
  expect(validate(body), ajv.errorsText(validate.errors)).toBe(true);
}

const dir = tempDir('hook-intake-console-');
const store = new SqliteStore({ path: join(dir, 'hook-intake.db') });
const generations = new GenerationRef(await testGeneration({ gateway: { auth: { token: GATEWAY_TOKEN } } }));
let now = 1_000_000;
const throttle = new FailureThrottle({ max: 3, windowMs: 60_000 });
const sessions = new ConsoleSessions();
const tally = new RequestTally(() => now);

let server: Server;
let base = '';
let host = '';
beforeAll(async () => {
  const app = createApp({
    generations,
    store,
    throttle,
    sessions,
    tally,
    clock: () => now,
    ready: () => true,
    status: () => ({}),
    runner: () => ({ queued: 0, running: 0 }),
    logger: createLogger('silent'),
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  base = `http://${host}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await store.close();
  cleanup(dir);
});
beforeEach(() => {
  throttle.succeed('127.0.0.1');
});

async function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Signs in; returns the cookie header to send and the CSRF token. */
async function signIn() {
  const r = await call('/ui/session', { method: 'POST', headers: { authorization: `Bearer ${GATEWAY_TOKEN}` } });
  expect(r.status).toBe(200);
  const id = readCookie(r.headers.get('set-cookie') ?? '', SESSION_COOKIE)!;
  return { cookie: `${SESSION_COOKIE}=${id}`, csrf: r.body.csrfToken as string, setCookie: r.headers.get('set-cookie')! };
}

describe('sign-in', () => {
  it('exchanges the gateway token for an HttpOnly, SameSite=Strict session cookie and a CSRF token', async () => {
    const s = await signIn();
    expect(s.setCookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict; Max-Age=\\d+$`));
    expect(s.setCookie).not.toContain('Secure'); // plain HTTP here
    expect(s.csrf).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(s.setCookie).not.toContain(GATEWAY_TOKEN);
    conforms(SessionAnswer, (await call('/ui/session', { headers: { cookie: s.cookie } })).body);
    expect((await call('/api/runs', { headers: { cookie: s.cookie } })).status).toBe(200);
    expect(await call('/ui/session', { headers: { cookie: s.cookie } })).toMatchObject({
      status: 200,
      body: { ok: true, csrfToken: s.csrf },
    });
  });

  it('refuses a wrong token with 401, and counts it in the failure throttle shared with the read API', async () => {
    for (let i = 0; i < 3; i++)
      expect((await call('/ui/session', { method: 'POST', headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const r = await call('/ui/session', { method: 'POST', headers: { authorization: 'Bearer wrong' } });
    expect(r.status).toBe(429);
    expect(r.headers.get('set-cookie')).toBeNull();
    // blocked everywhere, the right token included
    expect((await call('/api/runs', { headers: { authorization: `Bearer ${GATEWAY_TOKEN}` } })).status).toBe(429);
    expect(r.text).not.toContain('wrong');
  });

  it('counts an unknown session cookie like a wrong token', async () => {
    for (let i = 0; i < 3; i++) expect((await call('/api/stats', { headers: { cookie: `${SESSION_COOKIE}=forged` } })).status).toBe(401);
    expect((await call('/api/stats', { headers: { cookie: `${SESSION_COOKIE}=forged` } })).status).toBe(429);
  });

  it('ends a session unused for the idle time, and any session at its maximum age', async () => {
    const s = await signIn();
    now += DEFAULT_SESSION_LIMITS.idleMs - 1;
    expect((await call('/api/runs', { headers: { cookie: s.cookie } })).status).toBe(200);
    now += DEFAULT_SESSION_LIMITS.idleMs; // unused since the last call
    expect((await call('/api/runs', { headers: { cookie: s.cookie } })).status).toBe(401);

    const t = await signIn();
    for (let used = 0; used < DEFAULT_SESSION_LIMITS.maxAgeMs; used += DEFAULT_SESSION_LIMITS.idleMs / 2) {
      now += DEFAULT_SESSION_LIMITS.idleMs / 2;
      const r = await call('/api/runs', { headers: { cookie: t.cookie } });
      expect(r.status).toBe(used + DEFAULT_SESSION_LIMITS.idleMs / 2 < DEFAULT_SESSION_LIMITS.maxAgeMs ? 200 : 401);
      throttle.succeed('127.0.0.1');
    }
  });

  it('signs out: the cookie is cleared and the session no longer holds', async () => {
    const s = await signIn();
    const out = await call('/ui/session', { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, origin: base } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0$`));
    expect((await call('/api/runs', { headers: { cookie: s.cookie } })).status).toBe(401);
  });

  it('sets Secure when the request came over TLS, per a trusted proxy', () => {
    const req = (h: Record<string, string>) => ({ headers: h, socket: {} }) as never;
    expect(overTls(req({ 'x-forwarded-proto': 'https' }), true)).toBe(true);
    expect(overTls(req({ 'x-forwarded-proto': 'https' }), false)).toBe(false);
    expect(overTls(req({}), true)).toBe(false);
  });
});

describe('CSRF', () => {
  const tryBody = { hook: 'wake', body: '{"text":"hello"}' };

  it('refuses a state-changing cookie call without the session CSRF token, or from another origin', async () => {
    const s = await signIn();
    expect(await call('/api/try', { method: 'POST', headers: { cookie: s.cookie }, body: tryBody })).toMatchObject({
      status: 403,
      body: { code: 'CSRF_REFUSED' },
    });
    expect((await call('/api/try', { method: 'POST', headers: { cookie: s.cookie, 'x-csrf-token': 'guess' }, body: tryBody })).status).toBe(
      403,
    );
    const evil = { cookie: s.cookie, 'x-csrf-token': s.csrf, origin: 'https://evil.example' };
    expect((await call('/api/try', { method: 'POST', headers: evil, body: tryBody })).status).toBe(403);
    const crossSite = { cookie: s.cookie, 'x-csrf-token': s.csrf, 'sec-fetch-site': 'cross-site' };
    expect((await call('/api/try', { method: 'POST', headers: crossSite, body: tryBody })).status).toBe(403);
    expect((await call('/ui/session', { method: 'DELETE', headers: { cookie: s.cookie } })).status).toBe(403);
    // the session survives a refused call
    const ok = { cookie: s.cookie, 'x-csrf-token': s.csrf, origin: base, 'sec-fetch-site': 'same-origin' };
    expect((await call('/api/try', { method: 'POST', headers: ok, body: tryBody })).status).toBe(200);
  });

  it('does not ask a bearer caller for a CSRF token (a browser never sends the header by itself)', async () => {
    const r = await call('/api/try', { method: 'POST', headers: { authorization: `Bearer ${GATEWAY_TOKEN}` }, body: tryBody });
    expect(r.status).toBe(200);
  });
});

describe('the page', () => {
  it('serves /ui and its assets with a strict content security policy, and nothing outside ui/', async () => {
    const page = await call('/ui');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.text).toContain('<script type="module" src="/ui/js/app.js">');
    const js = await call('/ui/js/app.js');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await call('/ui/console.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await call('/ui/../package.json')).status).toBe(404);
    expect((await call('/ui/%2e%2e/package.json')).status).toBe(404);
    expect((await call('/ui/nothing.js')).status).toBe(404);
  });

  it('names its icon, served from ui/ (else the browser asks for /favicon.ico, a 404)', async () => {
    const page = await call('/ui');
    const href = /<link rel="icon" href="([^"]+)"/.exec(page.text)?.[1];
    expect(href).toBe('/ui/favicon.svg');
    const icon = await call(href!);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.text).toContain('<svg');
  });
});

describe('the console endpoints', () => {
  it('GET /api/stats answers hook requests per minute by status, the queue and the generation', async () => {
    now = 60_000 * 1000 + 5_000;
    tally.count('wake', 200);
    tally.count('wake', 200);
    tally.count(undefined, 401);
    const r = await call('/api/stats', { headers: { authorization: `Bearer ${GATEWAY_TOKEN}` } });
    expect(r.status).toBe(200);
    conforms(StatsAnswer, r.body);
    expect(r.body.requestsPerMinute).toHaveLength(60);
    expect(r.body.requestsPerMinute.at(-1)).toEqual({ at: new Date(60_000 * 1000).toISOString(), byStatus: { '200': 2, '401': 1 } });
    expect(r.body.requestsPerMinute[0].byStatus).toEqual({});
    expect(r.body).toMatchObject({
      runs: { queued: 0, running: 0 },
      runner: { queued: 0, running: 0 },
      generation: { id: generations.current.id },
      lastReloadError: null,
    });
  });

  it('POST /api/try shows what try shows, and names the field at fault', async () => {
    const auth = { authorization: `Bearer ${GATEWAY_TOKEN}` };
    const r = await call('/api/try', { method: 'POST', headers: auth, body: { hook: 'wake', body: '{"text":"hi","mode":"now"}' } });
    expect(r.body).toMatchObject({ ok: true, result: { hook: 'wake', status: 200, actions: [{ kind: 'wake', mode: 'now' }] } });
    expect(r.body.text).toContain('would answer 200 and dispatch 1 action(s):');
    conforms(TryAnswer, r.body);
    const mappings = await call('/api/mappings', { headers: auth });
    conforms(MappingsAnswer, mappings.body);
    const bad = await call('/api/try', { method: 'POST', headers: auth, body: { hook: 'wake', body: '{"txt":"hi"}' } });
    expect(bad.body).toMatchObject({ ok: true, result: { status: 400, code: 'INVALID_PAYLOAD' } });
    conforms(TryAnswer, bad.body);
    expect(await call('/api/try', { method: 'POST', headers: auth, body: { hook: '', body: '{}' } })).toMatchObject({
      status: 400,
      body: { field: 'hook' },
    });
    expect(await call('/api/try', { method: 'POST', headers: auth, body: { hook: 'wake', body: {} } })).toMatchObject({
      status: 400,
      body: { field: 'body' },
    });
    expect(await call('/api/try', { method: 'POST', headers: auth, body: { hook: 'wake', headers: { a: 1 } } })).toMatchObject({
      status: 400,
      body: { field: 'headers.a' },
    });
    // nothing was stored
    expect((await store.records.counts()).events.pending).toBe(0);
  });
});
