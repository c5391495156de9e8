/**
 * The read API's endpoints for the console (gateway token or console
 * session): `GET /api/stats` (the overview's figures), `GET /api/mappings`
 * (what the tester can pick), `POST /api/try` (a dry run, as `hook-intake
 * try`: nothing is dispatched, stored or logged) and `GET /api/stream`
 * (server-sent events: the figures whenever they change).
 */
import Router from '@koa/router';
import { basename } from 'node:path';
import type { Context } from 'koa';
import { createLogger } from '../log.ts';
import type { GenerationRef } from '../runtime/generation.ts';
import type { Store } from '../store/types.ts';
import { errors } from '../errors.ts';
import { readBody } from './body.ts';
import { jsonText, parseJsonText } from './parse.ts';
import { dryRun, renderDryRun } from '../runtime/dry-run.ts';
import type { RequestTally } from './metrics.ts';
import type { ConsoleFeed } from './stream.ts';
import type { RequestState } from './state.ts';

export interface UiApiDeps {
  generations: GenerationRef;
  store: Store;
  clock: () => number;
  tally?: RequestTally;
  /** This process's runner: runs waiting for it and running in it. */
  runner?: () => { queued: number; running: number };
  feed?: ConsoleFeed;
}

// a dry run logs nothing: what is tried is neither stored nor logged
const SILENT = createLogger('silent');

type Auth = (ctx: Context, next: () => Promise<unknown>) => Promise<unknown>;

/** The overview's figures: answers per minute by status, the run queue, the outbox, the configuration. */
export async function consoleStats(deps: UiApiDeps): Promise<Record<string, unknown>> {
  const gen = deps.generations.current;
  const counts = await deps.store.counts();
  const err = deps.generations.lastReloadError;
  return {
    requestsPerMinute: (deps.tally?.perMinute(deps.clock()) ?? []).map((m) => ({ at: new Date(m.at).toISOString(), byStatus: m.byStatus })),
    runs: { queued: counts.runs.queued, running: counts.runs.running },
    runner: deps.runner?.() ?? null,
    outbox: counts.outbox,
    events: counts.events,
    generation: { id: gen.id, loadedAt: new Date(gen.loadedAt).toISOString(), mappings: gen.pipelines.length },
    lastReloadError: err ? { at: new Date(err.at).toISOString(), issues: err.issues } : null,
  };
}

/** The tester's request: `hook` (a name under the hooks path), `body` (the raw text), `headers`. */
function tryInput(raw: Buffer): { hook: string; body: string; headers: Record<string, string> } {
  const input = parseJsonText(jsonText(raw)) as Record<string, unknown> | null;
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw errors.invalidPayload('', 'must be a JSON object {hook, body, headers}');
  for (const k of Object.keys(input)) if (!['hook', 'body', 'headers'].includes(k)) throw errors.invalidPayload(k, 'is not a field of a try request (hook, body, headers)');
  const hook = typeof input.hook === 'string' ? input.hook.replace(/^\/+|\/+$/g, '') : '';
  if (!hook) throw errors.invalidPayload('hook', 'must be a hook name such as wake, agent or a mapping path');
  const body = input.body ?? '{}';
  if (typeof body !== 'string') throw errors.invalidPayload('body', 'must be the request body as text');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const given = input.headers ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw errors.invalidPayload('headers', 'must be an object of header names and values');
  for (const [k, v] of Object.entries(given)) {
    if (typeof v !== 'string') throw errors.invalidPayload(`headers.${k}`, 'must be a string');
    headers[k.trim().toLowerCase()] = v.trim();
  }
  return { hook, body, headers };
}

export function uiApiRoutes(router: Router<RequestState>, auth: Auth, deps: UiApiDeps): void {
  router.get('/api/stats', auth, async (ctx) => {
    ctx.body = { ok: true, ...(await consoleStats(deps)) };
  });
  router.get('/api/mappings', auth, (ctx) => {
    const gen = deps.generations.current;
    const mappings = gen.pipelines.map((p) => ({
      id: p.id,
      origin: p.origin,
      path: p.path ?? null,
      action: p.action,
      transform: p.transform ? basename(p.transform.file) : null,
      verify: p.verifyType ?? null,
    }));
    ctx.body = { ok: true, hooksPath: gen.config.hooks.path, mappings };
  });
  router.post('/api/try', auth, async (ctx) => {
    const hc = deps.generations.current.config.hooks;
    // the request body plus room for the JSON around it
    const raw = await readBody(ctx.req, { maxBytes: hc.maxBodyBytes * 2 + 64 * 1024, timeoutMs: hc.bodyTimeoutMs });
    const input = tryInput(raw);
    // the generation the dry run runs on to the end (a reload does not dispose it meanwhile)
    const gen = deps.generations.acquire();
    try {
      const result = await dryRun(gen, input.hook, Buffer.from(input.body), input.headers, SILENT, deps.clock());
      ctx.set('cache-control', 'no-store');
      ctx.body = { ok: true, result, text: renderDryRun(result, gen.pipelines.length) };
    } finally {
      deps.generations.release(gen);
    }
  });
  router.get('/api/stream', auth, (ctx) => {
    if (!deps.feed) throw errors.notFound();
    deps.feed.open(ctx, ctx.state.caller?.kind === 'session' ? ctx.state.caller.session : undefined);
  });
}
