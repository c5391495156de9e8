/**
 * The read API (docs/http.md, "Read API"), behind the gateway token, and the unauthenticated
 * health endpoints. Lists are newest first and take `?limit=` (default 100,
 * at most 10,000).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { GenerationRef } from '../generation/ref.ts';
import type { EventRecords, OutboxRecords, RecordCounts, RunRecords, Transcripts } from '../store/roles.ts';
import type { Delivery, RunStatus, EventStatus } from '../store/types.ts';
import type { FailureThrottle } from '../auth/throttle.ts';
import { BearerAuth } from '../auth/bearer.ts';
import { errors } from '../errors.ts';
import { clientAddress } from './target.ts';
import type { RequestState } from './state.ts';
import { jsonList } from './json-pieces.ts';
import type { ConsoleSessions } from '../auth/sessions.ts';
import type { RequestTally } from './metrics.ts';
import type { ConsoleFeed } from './stream.ts';
import { uiApiRoutes } from './ui-api.ts';
import { requestHost } from './ui.ts';

export interface ApiDeps {
  generations: GenerationRef;
  /** What the read API reads: runs, events, transcripts and the counts (`Store.records`). */
  store: { readonly records: RunRecords & EventRecords & Transcripts & RecordCounts & Pick<OutboxRecords, 'runCallbacks'> };
  throttle: FailureThrottle;
  clock: () => number;
  /** Runtime figures for `/api/status`. */
  status: () => Record<string, unknown>;
  ready: () => boolean;
  /** The Prometheus exposition of /metrics. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** The console's sessions: their cookie is taken in place of the gateway token. */
  sessions?: ConsoleSessions;
  /** Hook answers counted by status and minute, for `/api/stats`. */
  tally?: RequestTally;
  /** This process's runner, for `/api/stats`. */
  runner?: () => { queued: number; running: number };
  /** The server-sent events of `/api/stream`. */
  feed?: ConsoleFeed;
}

const RUN_STATUSES = new Set<RunStatus>(['queued', 'running', 'ok', 'error', 'timeout']);
const EVENT_STATUSES = new Set<EventStatus>(['pending', 'consumed']);

export function parseLimit(raw: unknown): number {
  if (raw === undefined) return 100;
  const s = Array.isArray(raw) ? raw[0] : raw;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw errors.invalidPayload('limit', 'must be an integer from 1 to 10000');
  return n;
}

function oneOf<T extends string>(raw: unknown, allowed: Set<T>, field: string): T | undefined {
  if (raw === undefined) return undefined;
  const s = String(Array.isArray(raw) ? raw[0] : raw);
  if (!allowed.has(s as T)) throw errors.invalidPayload(field, `must be one of ${[...allowed].join(', ')}`);
  return s as T;
}

/** A text filter: absent, or a non-empty string of at most 512 characters. */
function textFilter(raw: unknown, field: string): string | undefined {
  if (raw === undefined) return undefined;
  const s = String(Array.isArray(raw) ? raw[0] : raw);
  if (s === '' || s.length > 512) throw errors.invalidPayload(field, 'must be 1 to 512 characters');
  return s;
}

/** A list answer, serialised in pieces (json-pieces.ts). */
/** A run's callback entry as the API shows it (docs/callbacks.md, "Delivery"): not its body. */
function runCallback(d: Delivery) {
  return {
    id: d.id,
    callback: d.channel,
    type: d.event,
    status: d.status,
    attempts: d.attempts,
    lastError: d.lastError,
    nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

function answerList(ctx: Context, head: Record<string, unknown>, key: string, items: readonly unknown[]): void {
  ctx.type = 'application/json';
  ctx.body = jsonList(head, key, items);
}

/** The read API's token check: the gateway token in `Authorization: Bearer` only, or a console session's cookie. */
export function apiBearer(deps: Pick<ApiDeps, 'throttle' | 'sessions'>): BearerAuth {
  return new BearerAuth({ throttle: deps.throttle, gatewayHeader: false, ...(deps.sessions ? { sessions: deps.sessions } : {}) });
}

export function apiRouter(deps: ApiDeps, bearer = apiBearer(deps)): Router<RequestState> {
  const router = new Router<RequestState>();

  const auth = async (ctx: Context, next: () => Promise<unknown>) => {
    const gen = deps.generations.current;
    const trust = gen.config.gateway.trustProxy;
    ctx.state.caller = await bearer.authenticateApi(
      ctx.headers,
      ctx.method,
      gen.gatewayToken,
      clientAddress(ctx, trust),
      deps.clock(),
      requestHost(ctx.req, trust),
    );
    return next();
  };

  router.get('/healthz', (ctx) => {
    ctx.body = { ok: true };
  });
  router.get('/readyz', (ctx) => {
    const ok = deps.ready();
    ctx.status = ok ? 200 : 503;
    ctx.body = ok ? { ok: true } : { ok: false, error: 'not ready', code: 'UNAVAILABLE' };
  });

  // the document describes the service, not its configuration (only hooks.path): no token needed
  let doc: { path: string; text: string } | undefined;
  router.get('/api/openapi.json', async (ctx) => {
    const hooksPath = deps.generations.current.config.hooks.path;
    if (doc?.path !== hooksPath) {
      // loaded on first use: the schemas of every answer need not sit in a server nobody asks
      const [{ openApiDocument }, { version }] = await Promise.all([
        import('./openapi/document.ts'),
        import('../plugin-api/user-agent.ts'),
      ]);
      doc = { path: hooksPath, text: JSON.stringify(openApiDocument({ hooksPath, version })) };
    }
    ctx.type = 'application/json';
    ctx.body = doc.text;
  });

  router.get('/api/runs/:id', auth, async (ctx) => {
    const id = ctx.params.id!;
    const [run, callbacks] = await Promise.all([deps.store.records.getRun(id), deps.store.records.runCallbacks(id)]);
    if (!run) throw errors.notFound();
    ctx.body = { ok: true, run, callbacks: callbacks.map(runCallback) };
  });
  router.get('/api/runs', auth, async (ctx) => {
    const limit = parseLimit(ctx.query.limit);
    const status = oneOf(ctx.query.status, RUN_STATUSES, 'status');
    const hook = textFilter(ctx.query.hook, 'hook');
    const session = textFilter(ctx.query.session, 'session');
    const filters = {
      ...(status ? { status } : {}),
      ...(hook !== undefined ? { hook } : {}),
      ...(session !== undefined ? { session } : {}),
    };
    answerList(ctx, { ok: true }, 'runs', await deps.store.records.listRuns({ limit, ...filters }));
  });
  // session keys may contain "/", so the key is everything between the prefix and "/messages"
  router.get(/^\/api\/sessions\/(.+)\/messages$/, auth, async (ctx) => {
    const raw = ctx.path.slice('/api/sessions/'.length, -'/messages'.length);
    let key: string;
    try {
      key = decodeURIComponent(raw);
    } catch {
      throw errors.invalidPayload('sessionKey', 'is not validly percent-encoded');
    }
    const limit = parseLimit(ctx.query.limit);
    answerList(ctx, { ok: true, sessionKey: key }, 'messages', await deps.store.records.listMessages(key, { limit }));
  });
  router.get('/api/main/events', auth, async (ctx) => {
    const limit = parseLimit(ctx.query.limit);
    const status = oneOf(ctx.query.status, EVENT_STATUSES, 'status');
    answerList(ctx, { ok: true }, 'events', await deps.store.records.listEvents({ limit, ...(status ? { status } : {}) }));
  });
  router.get('/metrics', auth, async (ctx) => {
    if (!deps.metrics) throw errors.notFound();
    const m = await deps.metrics();
    ctx.type = m.contentType;
    ctx.body = m.body;
  });
  router.get('/api/status', auth, async (ctx) => {
    const gen = deps.generations.current;
    ctx.body = {
      ok: true,
      generation: { id: gen.id, loadedAt: new Date(gen.loadedAt).toISOString(), file: gen.file ?? null, warnings: gen.warnings },
      lastReloadError: deps.generations.lastReloadError
        ? { at: new Date(deps.generations.lastReloadError.at).toISOString(), issues: deps.generations.lastReloadError.issues }
        : null,
      hooks: { enabled: gen.config.hooks.enabled, path: gen.config.hooks.path, mappings: gen.pipelines.length },
      counts: await deps.store.records.counts(),
      ...deps.status(),
    };
  });
  uiApiRoutes(router, auth, deps);
  return router;
}
