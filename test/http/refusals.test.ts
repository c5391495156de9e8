/**
 * Every state-changing route refuses a caller without the right credential (docs/console.md, sign-in
 * and CSRF; docs/http.md, authentication): a console session's cookie without its CSRF token, with a
 * wrong one, or from another site's page, and a call with no credential at all. Each refusal changes
 * nothing in the store. The table below names every POST and DELETE route; the first test fails when
 * the routers or the OpenAPI document have one the table does not, so a new route cannot be missed.
 */
import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSessions, readCookie, SESSION_COOKIE } from '../../src/auth/sessions.ts';
import { FailureThrottle } from '../../src/auth/throttle.ts';
import { createApp } from '../../src/http/app.ts';
import { operations } from '../../src/http/openapi/paths.ts';
import { createLogger } from '../../src/log.ts';
import { startService, type Service } from '../../src/service.ts';
import { cleanup, tempDir, until } from '../helpers/cli.ts';
import { testConfig } from '../helpers/runtime.ts';

const random = (n: number) => randomBytes(n).toString('base64url');
const HOOK = `hk_${random(24)}`;
const GW = `gw_${random(24)}`;

const dir = tempDir('hook-intake-refusals-');
const raw = {
  gateway: { auth: { token: GW } },
  hooks: {
    enabled: true,
    token: HOOK,
    // every case below fails once per route: no address may be blocked meanwhile
    authFailures: { max: 1000, windowSeconds: 60 },
    mappings: [{ id: 'named', match: { path: 'named' }, action: 'wake', textTemplate: 'hello', wakeMode: 'next-heartbeat' }],
  },
  agents: { defaults: { heartbeat: { every: '0' } } },
  channels: { console: {} },
  session: { defaultRoute: { channel: 'console' } },
};

let svc: Service;
/** A kept request, a finished run and a signed-in console session: what a refused call would change. */
let requestId = '';
let runId = '';
let session = { cookie: '', csrf: '' };

/** The refusal a route gives a session cookie (with no, a wrong or another site's CSRF) and no credential. */
interface Route {
  url: () => string;
  body?: string;
  /** The status for a cookie call: 403 where the cookie is a credential (then CSRF decides), else 401. */
  cookie: 401 | 403;
}

const json = JSON.stringify;
const table: Record<string, Route> = {
  'post /hooks/wake': { url: () => '/hooks/wake', body: json({ text: 'refused' }), cookie: 401 },
  'post /hooks/agent': { url: () => '/hooks/agent', body: json({ message: 'refused' }), cookie: 401 },
  'post /hooks/{name}': { url: () => '/hooks/named', body: json({}), cookie: 401 },
  'post /api/requests/{id}/replay': { url: () => `/api/requests/${requestId}/replay`, cookie: 403 },
  'post /api/runs/{id}/retry': { url: () => `/api/runs/${runId}/retry`, cookie: 403 },
  'post /api/runs/{id}/redeliver': { url: () => `/api/runs/${runId}/redeliver`, cookie: 403 },
  'post /api/try': { url: () => '/api/try', body: json({ hook: 'wake', body: '{"text":"hi"}' }), cookie: 403 },
  // sign-in takes the gateway token only; a cookie is no credential there
  'post /ui/session': { url: () => '/ui/session', cookie: 401 },
  'delete /ui/session': { url: () => '/ui/session', cookie: 403 },
};

const isChange = (method: string) => !['get', 'head', 'options'].includes(method.toLowerCase());

/** The routes of the Koa side, read from its routers: `method /path/{param}`. */
function routerRoutes(): string[] {
  const app = createApp({
    generations: svc.generations,
    store: svc.store,
    throttle: new FailureThrottle({ max: 1, windowMs: 1 }),
    sessions: new ConsoleSessions(),
    clock: Date.now,
    ready: () => true,
    status: () => ({}),
    logger: createLogger('silent'),
    admin: { dispatcher: {} as never, notifyOutbox: () => {} },
    intake: {} as never,
  });
  type Routed = Koa.Middleware & { router?: { stack: { methods: string[]; path: string | RegExp }[] } };
  const layers = (app.middleware as Routed[]).flatMap((m) => m.router?.stack ?? []);
  return layers.flatMap((l) => l.methods.filter(isChange).map((m) => `${m.toLowerCase()} ${String(l.path).replace(/:(\w+)/g, '{$1}')}`));
}

async function call(method: string, url: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(`${svc.url}${url}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  return { status: res.status, setCookie: res.headers.get('set-cookie'), body: text ? JSON.parse(text) : undefined };
}
const gateway = { authorization: `Bearer ${GW}` };

/** What any of the routes would change: runs, events, deliveries, accepted kept requests, the session. */
async function snapshot() {
  const counts = await svc.store.records.counts();
  const kept = await svc.store.requests.list({ limit: 1000 });
  const runs = await svc.store.records.listRuns({ limit: 1000 });
  const signedIn = await call('GET', '/ui/session', { cookie: session.cookie });
  return {
    counts,
    // a refused request may be kept for the console with its status; an accepted one is a change
    accepted: kept.filter((k) => k.status < 400).map((k) => k.id),
    runs: runs.map((r) => `${r.id} ${r.status} ${r.delivery.status}`),
    session: signedIn.status,
  };
}

beforeAll(async () => {
  svc = await startService({ load: () => testConfig(raw, dir), logger: createLogger('silent'), port: 0, bind: '127.0.0.1', watch: false });
  const accepted = await call(
    'POST',
    '/hooks/agent',
    { authorization: `Bearer ${HOOK}` },
    json({ message: 'to retry', deliver: false, wakeMode: 'next-heartbeat' }),
  );
  expect(accepted.status).toBe(202);
  runId = accepted.body.runId;
  await until(async () => (await svc.store.records.getRun(runId))?.finishedAt);
  requestId = (await svc.store.requests.list({ limit: 1 }))[0]!.id;
  const signIn = await call('POST', '/ui/session', gateway);
  session = { cookie: `${SESSION_COOKIE}=${readCookie(signIn.setCookie ?? '', SESSION_COOKIE)}`, csrf: signIn.body.csrfToken };
});
afterAll(async () => {
  await svc?.stop();
  cleanup(dir);
});

describe('state-changing routes', () => {
  it('the table names every POST and DELETE route of the routers and the OpenAPI document', () => {
    const listed = operations.filter((op) => isChange(op.method)).map((op) => `${op.method} ${op.path.replace('{hooks}', '/hooks')}`);
    const routed = routerRoutes();
    expect(routed.length).toBeGreaterThan(0);
    expect(Object.keys(table).sort()).toEqual([...new Set([...listed, ...routed])].sort());
  });

  /** What is sent, and whether it carries the session's cookie. */
  const cases: [string, () => Record<string, string>, boolean][] = [
    ['a session cookie without the CSRF token', () => ({ cookie: session.cookie }), true],
    ['a session cookie with a wrong CSRF token', () => ({ cookie: session.cookie, 'x-csrf-token': random(24) }), true],
    [
      "a session cookie and its CSRF token from another site's page",
      () => ({ cookie: session.cookie, 'x-csrf-token': session.csrf, origin: 'https://evil.example' }),
      true,
    ],
    ['no credential at all', () => ({}), false],
  ];
  for (const [name, route] of Object.entries(table)) {
    const [method, template] = name.split(' ') as [string, string];
    it.each(cases)(`${method.toUpperCase()} ${template}: refuses %s, and changes nothing`, async (_what, headers, withCookie) => {
      const before = await snapshot();
      expect(before.session).toBe(200);
      const r = await call(method.toUpperCase(), route.url(), headers(), route.body);
      const status = withCookie ? route.cookie : 401;
      expect(r.status).toBe(status);
      expect(r.body?.code).toBe(status === 403 ? 'CSRF_REFUSED' : 'UNAUTHORIZED');
      expect(r.setCookie).toBeNull();
      expect(await snapshot()).toEqual(before);
    });
  }

  it('takes each admin call with the gateway token (the ids above are ones a call would change)', async () => {
    expect((await call('POST', `/api/requests/${requestId}/replay`, gateway)).status).toBe(202);
    expect((await call('POST', `/api/runs/${runId}/retry`, gateway)).status).toBe(202);
    expect((await call('POST', `/api/runs/${runId}/redeliver`, gateway)).status).toBe(202);
  });
});
