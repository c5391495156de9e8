/**
 * The `/hooks` listener: the HTTP adapter of the intake pipeline (src/intake/pipeline.ts). It does what
 * only HTTP can — method, the hook token with its failure throttle, reading the body — builds the
 * `HookRequest` and hands it to the pipeline. Checks run in the order of docs/http.md, "Order of checks":
 * method → auth → empty name → body (size, read timeout, media type, parse) → a named hook's mapping and
 * its credential → idempotency → validation → dispatch.
 *
 * Plain node:http, no framework on the hot path: Koa's per-request context was a large share of a
 * wake's CPU (measured: docs/performance.md, "Keeping the speed").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { BearerAuth } from '../auth/bearer.ts';
import type { FailureThrottle } from '../auth/throttle.ts';
import { errors, HookError } from '../errors.ts';
import type { GenerationRef } from '../generation/ref.ts';
import type { Generation } from '../generation/types.ts';
import { handshakeOwner } from '../intake/credential.ts';
import type { Answer } from '../intake/idempotency.ts';
import { requireIdentityEncoding } from '../intake/parse.ts';
import type { Intake } from '../intake/pipeline.ts';
import type { Refused, RefusalLog } from '../intake/refusals.ts';
import { type HookRequest, parseBody, queryWithoutToken, urlWithoutToken } from '../intake/request.ts';
import type { RejectionEvents } from '../callbacks/rejections.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import { isBuiltInHook } from '../names.ts';
import type { DirectAnswer } from '../plugins/define.ts';
import { readBody } from './body.ts';
import type { RequestTally } from './metrics.ts';
import { closeIfBodyUnread, errorBody, logFailure, requestLogger, sendJson, toHookError } from './respond.ts';
import type { RequestState } from './state.ts';
import { clientAddress, hookName, type Target, target } from './target.ts';

export interface HooksDeps {
  generations: GenerationRef;
  intake: Intake;
  throttle: FailureThrottle;
  logger: Logger;
  clock: () => number;
  /** Counts answers by hook and status for /metrics. */
  tally?: RequestTally;
  /** Makes the `request.rejected` events of refused credentials (docs/callbacks.md); none without it. */
  rejections?: RejectionEvents;
  /** Keeps refused requests in the request log; none are kept without it. */
  refusals?: RefusalLog;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The listener of paths under the hook prefix (`isHookPath`). */
export function createHookListener(deps: HooksDeps): (req: IncomingMessage, res: ServerResponse, parsed?: Target) => void {
  return new HookListener(deps).onRequest;
}

class HookListener {
  private readonly deps: HooksDeps;
  private readonly auth: BearerAuth;
  private readonly logRequest: ReturnType<typeof requestLogger>;

  constructor(deps: HooksDeps) {
    this.deps = deps;
    this.auth = new BearerAuth({ throttle: deps.throttle, logger: deps.logger, gatewayHeader: true });
    this.logRequest = requestLogger(deps.logger);
  }

  readonly onRequest = (req: IncomingMessage, res: ServerResponse, parsed?: Target): void => {
    const { deps } = this;
    const start = performance.now();
    const t = parsed ?? target(req.url ?? '/');
    const state: RequestState = {};
    const out: Record<string, string> = {};
    // the generation the request runs on to the end
    const gen = deps.generations.acquire();
    this.handle(req, res, t, state, out, gen).then(
      (answer) => {
        deps.generations.release(gen);
        if (!res.writableEnded) sendJson(res, answer.status, answer.body, out);
        this.logRequest(req.method ?? '', t.path, answer.status, start, state);
        deps.tally?.count(state.hook, answer.status);
      },
      (err) => {
        const e = toHookError(err);
        if (e.status === 401) deps.rejections?.report(gen, hookName(gen, t.path), e, deps.clock());
        deps.generations.release(gen);
        Object.assign(out, e.headers);
        if (closeIfBodyUnread(req)) out.Connection = 'close';
        if (!res.writableEnded && !res.headersSent) sendJson(res, e.status, errorBody(e), out);
        logFailure(deps.logger, e, t.path, state);
        this.logRequest(req.method ?? '', t.path, e.status, start, state);
        deps.tally?.count(state.hook, e.status);
        if (deps.refusals && state.asked && req.method === 'POST') deps.refusals.keep(gen, refused(req, t, state, this.deps.clock()), e);
      },
    );
  };

  /** Authenticates and reads a request, then hands it to the pipeline. */
  private async handle(
    req: IncomingMessage,
    res: ServerResponse,
    t: Target,
    state: RequestState,
    out: Record<string, string>,
    gen: Generation,
  ): Promise<Answer> {
    const hc = gen.config.hooks;
    const now = this.deps.clock();
    if (req.method !== 'POST') {
      if (req.method === 'GET') return this.handshake(req, res, t, state, gen, now);
      throw errors.methodNotAllowed();
    }

    const client = clientAddress(req, gen.config.gateway.trustProxy);
    const name = hookName(gen, t.path);
    state.asked = name;
    const signedName = !isBuiltInHook(name) && (gen.signed.anyPath || gen.signed.paths.has(name));
    // a name a signature-verified mapping may own gets its verdict from that mapping (authorize)
    const authenticated = this.auth.authenticate(req.headers, gen.hookToken, client, now, !signedName, t.query, hc.allowQueryToken, out);
    if (!name) throw errors.notFound();
    state.hook = name;
    state.credentialPassed = authenticated;

    const body = await readBody(req, { maxBytes: hc.maxBodyBytes, timeoutMs: hc.bodyTimeoutMs }, res);
    state.bytes = body.length;
    requireIdentityEncoding(header(req, 'content-encoding') || undefined, header(req, 'transfer-encoding') || undefined);
    const { payload, json } = parseBody(name, header(req, 'content-type') || undefined, body);
    const hookReq: HookRequest = {
      name,
      payload,
      headers: req.headers,
      query: queryWithoutToken(t.query),
      path: t.path,
      url: urlWithoutToken(t.path, t.query, t.search),
      rawBody: body,
      json,
      receivedAt: now,
      authenticated,
    };
    state.request = hookReq;
    const owner = this.authorize(gen, hookReq, client, now);
    state.credentialPassed = true;
    if (owner) state.mapping = owner.id;
    if (hookReq.answer) return sendDirect(res, hookReq.answer);
    const answer = await this.deps.intake.accept(gen, hookReq, owner);

    const b = answer.body;
    if (typeof b.runId === 'string') state.runId = b.runId;
    else if (Array.isArray(b.runIds) && b.runIds.length) state.runId = (b.runIds as string[]).join(',');
    if (typeof b.eventId === 'string') state.eventId = b.eventId;
    return answer;
  }

  /**
   * The pipeline's credential step, counted by the failure throttle: a signed hook's credential is judged
   * only there, so its failures count like a wrong token and its success like a right one.
   */
  private authorize(gen: Generation, hookReq: HookRequest, client: string, now: number): Pipeline | undefined {
    let owner: Pipeline | undefined;
    try {
      owner = this.deps.intake.authorize(gen, hookReq);
    } catch (err) {
      if (err instanceof HookError && (err.code === 'UNAUTHORIZED' || err.code === 'INVALID_SIGNATURE'))
        throw this.auth.fail(client, now, err);
      throw err;
    }
    if (!hookReq.authenticated) this.auth.succeed(client);
    return owner;
  }

  /**
   * A `GET` to a named hook: a provider's subscription handshake, answered by the verifier of the mapping
   * `handshakeOwner` finds; `405` when none can. Nothing is stored and no mapping runs. A refused
   * handshake counts as a failed authentication.
   */
  private handshake(req: IncomingMessage, res: ServerResponse, t: Target, state: RequestState, gen: Generation, now: number): Answer {
    const { deps } = this;
    const name = hookName(gen, t.path);
    const owner = handshakeOwner(gen, name);
    if (!owner) throw errors.methodNotAllowed();
    state.hook = name;
    state.mapping = owner.id;
    const client = clientAddress(req, gen.config.gateway.trustProxy);
    const retry = deps.throttle.blocked(client, now);
    if (retry !== undefined) throw errors.rateLimited(retry);
    const r = owner.verify!.handshake!({ name, headers: req.headers, query: queryWithoutToken(t.query), receivedAt: now });
    if (!r.ok) {
      deps.logger.warn({ mapping: owner.id, scheme: owner.verifyType, reason: r.reason }, 'handshake refused');
      throw this.auth.fail(client, now, errors.forbidden());
    }
    this.auth.succeed(client);
    return sendDirect(res, r.answer);
  }
}

/** Sends a verifier's direct answer; a JSON one is left to the caller like any answer. */
function sendDirect(res: ServerResponse, a: DirectAnswer): Answer {
  if (!('text' in a)) return a;
  res.writeHead(a.status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(a.text),
    'x-content-type-options': 'nosniff',
  });
  res.end(a.text);
  return { status: a.status, body: {} };
}

/** A refused request as the request log keeps it: its body only when its credential had passed. */
function refused(req: IncomingMessage, t: Target, state: RequestState, now: number): Refused {
  const r = state.request;
  const declared = Number(req.headers['content-length']);
  return {
    hook: state.asked!,
    mappingId: state.mapping ?? null,
    url: r?.url ?? urlWithoutToken(t.path, t.query, t.search),
    headers: req.headers,
    body: r && state.credentialPassed ? r.rawBody : undefined,
    bodyBytes: state.bytes ?? (Number.isFinite(declared) ? declared : 0),
    receivedAt: r?.receivedAt ?? now,
  };
}
