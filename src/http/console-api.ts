/**
 * The admin API of the operator console (docs/http.md, "Kept requests" and "Admin actions"), behind the gateway token: the request log
 * (`/api/requests`, a request's detail, replay) and the admin actions on runs (retry, redeliver). Each
 * action is logged with who (the token's fingerprint and the client address) and what.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { BearerAuth, bearerToken } from '../auth/bearer.ts';
import { tokenFingerprint } from '../auth/token.ts';
import type { FailureThrottle } from '../auth/throttle.ts';
import { errors } from '../errors.ts';
import type { Dispatcher } from '../intake/dispatch.ts';
import type { Intake } from '../intake/pipeline.ts';
import type { GenerationRef } from '../generation/ref.ts';
import type { KeptRequests, MetaRecords, OutboxRecords, RunRecords } from '../store/roles.ts';
import type { KeptRequest, KeptRequestSummary, NewDelivery, NewRun } from '../store/types.ts';
import { uuidv7 } from '../util/uuid7.ts';
import { parseLimit } from './api.ts';
import { clientAddress } from './target.ts';
import { jsonList } from './json-pieces.ts';
import { replayRequest } from './replay.ts';
import { requestHost } from './ui.ts';
import type { RequestState } from './state.ts';
import { redeliveryOf } from '../runtime/redeliver.ts';

export interface ConsoleDeps {
  generations: GenerationRef;
  /** The kept requests, and the records a redelivery reads and writes (`Store.records`, `Store.requests`). */
  store: { readonly records: RunRecords & OutboxRecords & MetaRecords; readonly requests: KeptRequests };
  throttle: FailureThrottle;
  clock: () => number;
  logger: Logger;
  /** The intake pipeline, which a replay goes through. */
  intake: Intake;
  /** Where a retry's run is stored (under the cap on queued runs). */
  dispatcher: Dispatcher;
  /** Tells the outbox a delivery is waiting (a redelivery). */
  notifyOutbox: (entry: NewDelivery) => void;
  /** The read API's token check (it takes the console's session cookie too); one of its own when absent. */
  bearer?: BearerAuth;
}

export { tokenFingerprint };

/** A kept request as lists show it: what it stored, the body's size, no headers or body. */
export function requestSummaryView(r: KeptRequestSummary): Record<string, unknown> {
  return {
    id: r.id,
    hook: r.hook,
    mappingId: r.mappingId,
    url: r.url,
    receivedAt: r.receivedAt,
    status: r.status,
    replayOf: r.replayOf,
    reason: r.reason,
    bodyBytes: r.bodyBytes,
    runIds: r.actions.flatMap((a) => (a.kind === 'agent' ? [a.runId] : [])),
    eventIds: r.actions.flatMap((a) => (a.kind === 'wake' ? [a.eventId] : [])),
  };
}

/** A kept request as the API shows it: the body as text when it is UTF-8, else base64, and what it stored. */
export function requestView(r: KeptRequest): Record<string, unknown> {
  const buf = Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(buf);
  const utf8 = Buffer.byteLength(text) === buf.length && !text.includes('\uFFFD');
  return {
    ...requestSummaryView(r),
    // a refused request's body is kept only when its credential had passed
    bodyKept: buf.length === r.bodyBytes,
    headers: r.headers,
    actions: r.actions,
    body: utf8 ? text : buf.toString('base64'),
    bodyEncoding: utf8 ? 'utf8' : 'base64',
  };
}

const first = (raw: unknown) => (Array.isArray(raw) ? raw[0] : raw) as string | undefined;

export function consoleRouter(deps: ConsoleDeps): Router<RequestState> {
  const router = new Router<RequestState>();
  const bearer = deps.bearer ?? new BearerAuth({ throttle: deps.throttle, gatewayHeader: false });
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
  /** Logs an admin action: who (the token's fingerprint, or the one a console session signed in with; the address) and what. */
  const audit = (ctx: Context, action: string, what: Record<string, unknown>) => {
    const caller = ctx.state.caller;
    const fingerprint = caller?.kind === 'session' ? caller.session.fingerprint : tokenFingerprint(bearerToken(ctx.headers.authorization));
    const address = clientAddress(ctx, deps.generations.current.config.gateway.trustProxy);
    deps.logger.info(
      { admin: action, by: { fingerprint, address, ...(caller?.kind === 'session' ? { via: 'console' } : {}) }, ...what },
      'admin action',
    );
  };

  router.get('/api/requests', auth, async (ctx) => {
    const limit = parseLimit(ctx.query.limit);
    const hook = first(ctx.query.hook);
    const rawStatus = first(ctx.query.status);
    const status = rawStatus === undefined ? undefined : Number(rawStatus);
    if (status !== undefined && !(Number.isInteger(status) && status >= 100 && status <= 599))
      throw errors.invalidPayload('status', 'must be an HTTP status code');
    const before = first(ctx.query.before);
    const list = await deps.store.requests.list({
      limit,
      ...(hook ? { hook } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(before ? { before } : {}),
    });
    ctx.type = 'application/json';
    ctx.body = jsonList({ ok: true }, 'requests', list.map(requestSummaryView));
  });

  router.get('/api/requests/:id', auth, async (ctx) => {
    const r = await deps.store.requests.get(ctx.params.id!);
    if (!r) throw errors.notFound();
    ctx.body = { ok: true, request: requestView(r) };
  });

  router.post('/api/requests/:id/replay', auth, async (ctx) => {
    const kept = await deps.store.requests.get(ctx.params.id!);
    if (!kept) throw errors.notFound();
    if (kept.body.byteLength !== kept.bodyBytes)
      throw errors.conflict('the body of this refused request was not kept (its credential had not passed): it cannot be replayed');
    const answer = await replayRequest(kept, { generations: deps.generations, intake: deps.intake, clock: deps.clock });
    audit(ctx, 'replay', { requestId: kept.id, hook: kept.hook, status: answer.status, newRequestId: answer.requestId ?? null });
    // a skip (204 to a sender) is 200 here, so the answer can say what happened and of what it is a replay
    const skipped = answer.status === 204;
    ctx.status = skipped ? 200 : answer.status;
    ctx.body = {
      ...(skipped ? { ok: true, skipped: true } : answer.body),
      replayOf: kept.id,
      ...(answer.requestId ? { requestId: answer.requestId } : {}),
    };
  });

  router.post('/api/runs/:id/retry', auth, async (ctx) => {
    const run = await deps.store.records.getRun(ctx.params.id!);
    if (!run) throw errors.notFound();
    if (run.kind !== 'hook') throw errors.conflict('only a hook run can be retried; a heartbeat runs again on its own');
    if (run.status === 'queued' || run.status === 'running')
      throw errors.conflict(`the run is ${run.status}; retry it once it has finished`);
    const now = deps.clock();
    const {
      status: _s,
      attempts: _a,
      startedAt: _st,
      finishedAt: _f,
      reply: _r,
      summary: _su,
      error: _e,
      usage: _u,
      delivery: _d,
      forwarded: _fw,
      ...input
    } = run;
    const retry: NewRun = { ...input, id: uuidv7(now), createdAt: now };
    await deps.dispatcher.requeue(retry, deps.generations.current.config.hooks.maxQueuedRuns);
    audit(ctx, 'retry', { runId: run.id, newRunId: retry.id });
    ctx.status = 202;
    ctx.body = { ok: true, runId: retry.id, sessionKey: retry.sessionKey, retryOf: run.id };
  });

  router.post('/api/runs/:id/redeliver', auth, async (ctx) => {
    const run = await deps.store.records.getRun(ctx.params.id!);
    if (!run) throw errors.notFound();
    const entry = await redeliveryOf(run, deps.generations.current, deps.store.records, deps.clock());
    await deps.store.records.redeliver(entry);
    deps.notifyOutbox(entry);
    audit(ctx, 'redeliver', { runId: run.id, deliveryId: entry.id, channel: entry.channel });
    ctx.status = 202;
    ctx.body = { ok: true, runId: run.id, deliveryId: entry.id, channel: entry.channel, to: entry.to };
  });

  return router;
}
