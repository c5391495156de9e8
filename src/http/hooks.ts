/**
 * The `/hooks` handler. Checks run in the order of docs/http.md, "Order of checks":
 * method → auth → empty name → body (size, read timeout, media type, parse)
 * → a named hook's mapping and its credential → idempotency → validation
 * → dispatch.
 *
 * It is one middleware on purpose: the hot path runs a fixed sequence of
 * prepared functions instead of a chain of generic middleware.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { GenerationRef, Generation } from '../generation/build.ts';
import type { Dispatcher } from '../intake/dispatch.ts';
import { errors, HookError } from '../errors.ts';
import { readBody } from './body.ts';
import { jsonText, mediaKind, parseForm, parseJsonText, parseNamedForm, requireIdentityEncoding } from '../intake/parse.ts';
import { idempotencyKey, type Answer, type IdempotencyGuard } from '../intake/idempotency.ts';
import type { FailureThrottle } from '../auth/throttle.ts';
import { BearerAuth } from '../auth/bearer.ts';
import { authorizeRequest, resolveRequest, RESERVED_NAMES, type HookRequest, type NamedResolver } from '../intake/resolve.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import type { RequestState } from './state.ts';
import { closeIfBodyUnread, errorBody, logFailure, requestLogger, sendJson, toHookError } from './respond.ts';
import type { RequestTally } from './metrics.ts';
import type { DirectAnswer } from '../plugins/define.ts';
import type { KeepRequest } from '../intake/dispatch.ts';
import { credentialHeaders, keptHeaders, keptUrl } from '../intake/keep.ts';

export interface HooksDeps {
  generations: GenerationRef;
  dispatcher: Dispatcher;
  idempotency: IdempotencyGuard;
  throttle: FailureThrottle;
  logger: Logger;
  clock: () => number;
  named?: NamedResolver;
  /** Counts answers by hook and status for /metrics. */
  tally?: RequestTally;
}

/** The client address: the socket peer, or with `gateway.trustProxy` the address the nearest proxy appended. */
export function clientAddress(req: Pick<IncomingMessage, 'headers' | 'socket'>, trustProxy: boolean): string {
  if (trustProxy) {
    const h = req.headers['x-forwarded-for'];
    const xff = Array.isArray(h) ? h.join(', ') : h;
    if (xff) {
      const last = xff.slice(xff.lastIndexOf(',') + 1).trim();
      if (last) return last;
    }
  }
  return req.socket.remoteAddress ?? 'unknown';
}

/** The parts of a request URL the handler reads; the query is parsed only when there is one. */
export interface Target {
  path: string;
  query: URLSearchParams | undefined;
}

/** Splits a request target into path and query, as Koa's parser would (absolute form accepted, fragment dropped). */
export function target(url: string): Target {
  if (url.charCodeAt(0) !== 47 /* / */) {
    // absolute form (`POST http://host/hooks/wake`) or something stranger: let the URL parser decide
    try {
      const u = new URL(url);
      return { path: u.pathname, query: u.search ? u.searchParams : undefined };
    } catch {
      return { path: url, query: undefined };
    }
  }
  const hash = url.indexOf('#');
  const clean = hash === -1 ? url : url.slice(0, hash);
  const q = clean.indexOf('?');
  if (q === -1) return { path: clean, query: undefined };
  return { path: clean.slice(0, q), query: new URLSearchParams(clean.slice(q + 1)) };
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** True when `path` is under the hook prefix of the current generation. */
export function isHookPath(gen: Generation, path: string): boolean {
  const hc = gen.config.hooks;
  return hc.enabled && path.startsWith(hc.path) && (path.length === hc.path.length || path.charCodeAt(hc.path.length) === 47) /* / */;
}

/**
 * The `/hooks` listener: plain node:http, no framework on the hot path (Koa's
 * per-request context was a large share of a wake's CPU; measured: docs/performance.md,
 * "Keeping the speed"). Call it only
 * for paths under the prefix (`isHookPath`).
 */
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
        deps.generations.release(gen);
        const e = toHookError(err);
        Object.assign(out, e.headers);
        if (closeIfBodyUnread(req)) out.Connection = 'close';
        if (!res.writableEnded && !res.headersSent) sendJson(res, e.status, errorBody(e), out);
        logFailure(deps.logger, e, t.path, state);
        this.logRequest(req.method ?? '', t.path, e.status, start, state);
        deps.tally?.count(state.hook, e.status);
      },
    );
  };

  /** Authenticates and reads a request, then stores what it asks for (`accept`). */
  private async handle(
    req: IncomingMessage,
    res: ServerResponse,
    t: Target,
    state: RequestState,
    out: Record<string, string>,
    gen: Generation,
  ): Promise<Answer> {
    const hc = gen.config.hooks;
    const path = t.path;
    const now = this.deps.clock();
    if (req.method !== 'POST') {
      if (req.method === 'GET') return this.handshake(req, res, t, state, gen, now);
      throw errors.methodNotAllowed();
    }

    const client = clientAddress(req, gen.config.gateway.trustProxy);
    const name = path.slice(hc.path.length).replace(/^\/+|\/+$/g, '');
    const signedName = name !== 'wake' && name !== 'agent' && (gen.signed.anyPath || gen.signed.paths.has(name));
    // a name a signature-verified mapping may own gets its verdict from that mapping (authorizeNamed)
    const authenticated = this.auth.authenticate(req.headers, gen.hookToken, client, now, !signedName, t.query, hc.allowQueryToken, out);
    if (!name) throw errors.notFound();
    state.hook = name;

    const body = await readBody(req, { maxBytes: hc.maxBodyBytes, timeoutMs: hc.bodyTimeoutMs }, res);
    state.bytes = body.length;
    requireIdentityEncoding(header(req, 'content-encoding') || undefined, header(req, 'transfer-encoding') || undefined);
    const reserved = name === 'wake' || name === 'agent';
    const kind = mediaKind(header(req, 'content-type') || undefined);
    const json = kind === 'json' ? jsonText(body) : undefined;
    const payload = json !== undefined ? parseJsonText(json) : reserved ? parseForm(body) : parseNamedForm(body);

    const hookReq: HookRequest = {
      name,
      payload,
      headers: req.headers,
      query: queryWithoutToken(t.query),
      path,
      url: t.query?.has('token') ? path : (req.url ?? path),
      rawBody: body,
      // only a mapping's transform reads it: the built-in endpoints do not keep a large body's text alive
      json: reserved ? undefined : json,
      receivedAt: now,
      authenticated,
    };
    // a named hook's credential (its mapping's signature, or the token) passes before anything stored is consulted
    const owner = reserved ? undefined : this.authorizeNamed(gen, hookReq, client, now);
    if (owner) state.mapping = owner.id;
    if (hookReq.answer) return sendDirect(res, hookReq.answer);
    const answer = await this.accept(gen, hookReq, t, owner);

    const b = answer.body;
    if (typeof b.runId === 'string') state.runId = b.runId;
    else if (Array.isArray(b.runIds) && b.runIds.length) state.runId = (b.runIds as string[]).join(',');
    if (typeof b.eventId === 'string') state.eventId = b.eventId;
    return answer;
  }

  /**
   * Finds the mapping that owns a named hook's request and checks its
   * credential. A signed hook's credential is judged only here: its failures
   * count like a wrong token, its success like a right one.
   */
  private authorizeNamed(gen: Generation, hookReq: HookRequest, client: string, now: number): Pipeline | undefined {
    let owner;
    try {
      owner = authorizeRequest(gen, hookReq, this.deps.named);
    } catch (err) {
      if (err instanceof HookError && (err.code === 'UNAUTHORIZED' || err.code === 'INVALID_SIGNATURE'))
        throw this.auth.fail(client, now, err);
      throw err;
    }
    if (!hookReq.authenticated) this.auth.succeed(client);
    return owner;
  }

  /** Resolves the request into actions and stores them, with the request kept in the same commit; once per idempotency key. */
  private accept(gen: Generation, hookReq: HookRequest, t: Target, owner: Pipeline | undefined): Promise<Answer> {
    const { deps } = this;
    const hc = gen.config.hooks;
    const { name, path, receivedAt: now } = hookReq;
    const idemKey = idempotencyKey(hookReq.headers);
    const scoped = `${name}\n${idemKey ?? ''}`;
    const work = async (): Promise<Answer> => {
      const resolution = await resolveRequest(gen, hookReq, deps.named, owner);
      // kept in the same commit as what it stores (the request log)
      const keep: KeepRequest | undefined =
        gen.config.retention.requestsDays > 0
          ? {
              hook: name,
              mappingId: owner?.id ?? null,
              url: keptUrl(path, t.query),
              headers: keptHeaders(hookReq.headers, credentialHeaders(gen)),
              body: keptBody(owner, hookReq),
              receivedAt: now,
              replayOf: null,
            }
          : undefined;
      if (resolution.kind === 'skip') {
        if (keep) await deps.dispatcher.keepSkipped(keep);
        return { status: 204, body: {} };
      }
      return deps.dispatcher.dispatch(resolution.actions, {
        agentStatus: hc.agentStatus,
        maxQueuedRuns: hc.maxQueuedRuns,
        ...(idemKey ? { idempotency: { key: scoped, ttlSeconds: hc.idempotencyTtlSeconds } } : {}),
        ...(keep ? { keep } : {}),
      });
    };
    return idemKey ? deps.idempotency.once(scoped, now, work) : work();
  }

  /**
   * A `GET` to a named hook: a provider's subscription handshake (Meta's
   * `hub.challenge`), answered by the verifier of the first mapping on that
   * path that can answer one; `405` when none can. Nothing is stored and no
   * mapping runs. A refused handshake counts as a failed authentication.
   */
  private handshake(req: IncomingMessage, res: ServerResponse, t: Target, state: RequestState, gen: Generation, now: number): Answer {
    const { deps } = this;
    const hc = gen.config.hooks;
    const name = t.path.slice(hc.path.length).replace(/^\/+|\/+$/g, '');
    const owner = name && !RESERVED_NAMES.has(name) ? handshakeOwner(gen, name) : undefined;
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

/** The body the request log keeps: as received, unless the owner's verifier takes a credential out of it. */
function keptBody(owner: Pipeline | undefined, req: HookRequest): Uint8Array {
  const keep = owner?.verify?.keptBody;
  return keep ? keep.call(owner.verify, req.rawBody, req.payload) : req.rawBody;
}

/** The first mapping that may own `name` (its `match.path` is the name, or it has none) and whose verifier answers handshakes. */
function handshakeOwner(gen: Generation, name: string): Pipeline | undefined {
  return gen.pipelines.find((p) => typeof p.verify?.handshake === 'function' && (p.path === undefined || p.path === name));
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

/** Query parameters for templates and transforms: the first value of each, never the token. */
function queryWithoutToken(q: URLSearchParams | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!q) return out;
  for (const [k, v] of q) if (k !== 'token' && !Object.hasOwn(out, k)) out[k] = v;
  return out;
}
