/**
 * The read API's endpoints for the console (gateway token or console
 * session): `GET /api/stats` (the overview's figures), `GET /api/mappings`
 * (what the tester can pick), `POST /api/try` (a dry run, as `hook-intake
 * try`: nothing is dispatched, stored or logged) and `GET /api/stream`
 * (server-sent events: the figures whenever they change).
 */
import type Router from '@koa/router';
import { basename } from 'node:path';
import type { Context } from 'koa';
import { createLogger } from '../log.ts';
import type { GenerationRef } from '../generation/ref.ts';
import type { Generation } from '../generation/types.ts';
import type { RecordCounts } from '../store/roles.ts';
import { errors } from '../errors.ts';
import { readBody } from './body.ts';
import { jsonText, parseJsonText } from '../intake/parse.ts';
import { dryRun, renderDryRun } from '../intake/dry-run.ts';
import { compileBody } from '../config/ajv.ts';
import { TryRequest, type TryRequestInput } from './ui-schemas.ts';
import type { RequestTally } from './metrics.ts';
import type { ConsoleFeed } from './stream.ts';
import type { RequestState } from './state.ts';

export interface UiApiDeps {
  generations: GenerationRef;
  /** The counts of the overview (`Store.records`). */
  store: { readonly records: RecordCounts };
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
  const counts = await deps.store.records.counts();
  const err = deps.generations.lastReloadError;
  return {
    requestsPerMinute: (deps.tally?.perMinute(deps.clock()) ?? []).map((m) => ({ at: new Date(m.at).toISOString(), byStatus: m.byStatus })),
    runs: { queued: counts.runs.queued, running: counts.runs.running },
    runner: deps.runner?.() ?? null,
    outbox: counts.outbox,
    events: counts.events,
    generation: { id: gen.id, loadedAt: new Date(gen.loadedAt).toISOString(), mappings: gen.pipelines.length },
    hooks: hooksOf(gen),
    lastReloadError: err ? { at: new Date(err.at).toISOString(), issues: err.issues } : null,
  };
}

/**
 * The hooks the serving configuration answers, for the overview: each mapping with a path, its
 * endpoint, the preset it comes from, its credential and the event types it takes.
 */
function hooksOf(gen: Generation): Record<string, unknown>[] {
  const base = gen.config.hooks.path;
  return gen.pipelines.map((p) => ({
    endpoint: p.path !== undefined ? `${base}/${p.path}` : `${base}/…`,
    mapping: p.id,
    preset: p.preset ?? null,
    credential: p.verifyType ? `signature: ${p.verifyType}` : 'hook token',
    events: p.events ? [...p.events] : null,
  }));
}

const checkTry = compileBody<TryRequestInput>(TryRequest);

/** The tester's request, checked against its schema: `hook`, `body` (the raw text), `headers`, `skipVerify`. */
function tryInput(raw: Buffer): { hook: string; body: string; headers: Record<string, string>; skipVerify: boolean } {
  const input = parseJsonText(jsonText(raw));
  if (!checkTry(input)) {
    const e = checkTry.errors?.[0];
    const p = (e?.params ?? {}) as Record<string, unknown>;
    const at = (e?.instancePath ?? '').slice(1).split('/').join('.');
    if (e?.keyword === 'additionalProperties')
      throw errors.invalidPayload(String(p.additionalProperty), 'is not a field of a try request (hook, body, headers, skipVerify)');
    if (e?.keyword === 'required') throw errors.invalidPayload(String(p.missingProperty), 'is required');
    if (!at) throw errors.invalidPayload('', 'the body must be a JSON object {hook, body, headers}');
    throw errors.invalidPayload(at, e?.keyword === 'minLength' ? 'must not be empty' : (e?.message ?? 'is invalid'));
  }
  const hook = input.hook.replace(/^\/+|\/+$/g, '');
  if (!hook) throw errors.invalidPayload('hook', 'must be a hook name such as wake, agent or a mapping path');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(input.headers ?? {})) headers[k.trim().toLowerCase()] = v.trim();
  return { hook, body: input.body ?? '{}', headers, skipVerify: input.skipVerify === true };
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
      const result = await dryRun(gen, input.hook, Buffer.from(input.body), input.headers, SILENT, deps.clock(), {
        skipVerify: input.skipVerify,
      });
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
