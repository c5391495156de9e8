/**
 * The `/hooks` handler. Checks run in the order of SPEC §4.2:
 * method → auth → empty name → body (size, read timeout, media type, parse)
 * → idempotency → route → validation → dispatch.
 *
 * It is one middleware on purpose: the hot path runs a fixed sequence of
 * prepared functions instead of a chain of generic middleware.
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { GenerationRef, Generation } from '../runtime/generation.ts';
import type { Dispatcher } from '../runtime/dispatcher.ts';
import { errors, HookError } from '../errors.ts';
import { readBody } from './body.ts';
import { mediaKind, parseForm, parseJson, requireIdentityEncoding } from './parse.ts';
import { idempotencyKey, type Answer, type IdempotencyGuard } from './idempotency.ts';
import { FailureThrottle, OncePer } from '../auth/throttle.ts';
import { resolveRequest, type HookRequest, type NamedResolver } from '../runtime/intake.ts';
import type { RequestState } from './state.ts';

export interface HooksDeps {
  generations: GenerationRef;
  dispatcher: Dispatcher;
  idempotency: IdempotencyGuard;
  throttle: FailureThrottle;
  logger: Logger;
  clock: () => number;
  named?: NamedResolver;
}

const QUERY_TOKEN_WARN_MS = 60 * 60 * 1000;

/** The client address: the socket peer, or with `gateway.trustProxy` the address the nearest proxy appended. */
export function clientAddress(ctx: { ip: string; get(h: string): string; socket: { remoteAddress?: string | undefined } }, trustProxy: boolean): string {
  if (trustProxy) {
    const xff = ctx.get('x-forwarded-for');
    if (xff) {
      const last = xff.slice(xff.lastIndexOf(',') + 1).trim();
      if (last) return last;
    }
  }
  return ctx.socket.remoteAddress ?? 'unknown';
}

export function hooksMiddleware(deps: HooksDeps): Middleware<RequestState> {
  const queryWarnings = new OncePer(QUERY_TOKEN_WARN_MS);

  /**
   * Checks the hook token. `required: false` is for names a signature-verified
   * mapping may own: the verdict then waits for the owning mapping, and a
   * missing or wrong token is not yet a failure. Returns whether a valid token
   * came with the request.
   */
  function authenticate(ctx: Parameters<Middleware<RequestState>>[0], gen: Generation, client: string, now: number, required: boolean): boolean {
    const retry = deps.throttle.blocked(client, now);
    if (retry !== undefined) throw errors.rateLimited(retry);
    let token: string | undefined;
    const authz = ctx.get('authorization');
    if (authz) {
      const m = /^Bearer\s+(.+)$/i.exec(authz);
      if (m) token = m[1]!.trim();
    }
    token ??= ctx.get('x-gateway-token') || undefined;
    let viaQuery = false;
    if (token === undefined && ctx.querystring.includes('token=')) {
      const q = ctx.query.token;
      const t = Array.isArray(q) ? q[0] : q;
      if (t) {
        if (!gen.config.hooks.allowQueryToken) {
          if (!required) return false;
          throw fail(client, now, errors.queryTokenRefused());
        }
        token = t;
        viaQuery = true;
      }
    }
    if (token === undefined || !gen.hookToken || !gen.hookToken.matches(token)) {
      if (!required) return false;
      throw fail(client, now, errors.unauthorized());
    }
    deps.throttle.succeed(client);
    if (viaQuery) {
      ctx.set('Deprecation', 'true');
      if (queryWarnings.take(client, now))
        deps.logger.warn({ client }, 'hook token sent as ?token= query parameter (deprecated); send Authorization: Bearer instead');
    }
    return true;
  }

  /** Counts a failed authentication; the one that crosses the limit answers 429 instead. */
  function fail(client: string, now: number, err: HookError): HookError {
    const blockedFor = deps.throttle.fail(client, now);
    return blockedFor !== undefined ? errors.rateLimited(blockedFor) : err;
  }

  return async function hooks(ctx, next) {
    const hc = deps.generations.current.config.hooks;
    if (!hc.enabled) return next();
    const path = ctx.path;
    if (!path.startsWith(hc.path) || (path.length > hc.path.length && path.charCodeAt(hc.path.length) !== 47 /* / */)) return next();
    // same tick as the check above: this is the generation the request runs on to the end
    const gen = deps.generations.acquire();
    try {
      await handle(ctx, gen);
    } finally {
      deps.generations.release(gen);
    }
  };

  async function handle(ctx: Parameters<Middleware<RequestState>>[0], gen: Generation): Promise<void> {
    const hc = gen.config.hooks;
    const path = ctx.path;
    const state = ctx.state;
    const now = deps.clock();
    if (ctx.method !== 'POST') throw errors.methodNotAllowed();

    const client = clientAddress(ctx, gen.config.gateway.trustProxy);
    const name = path.slice(hc.path.length).replace(/^\/+|\/+$/g, '');
    const signedName = name !== 'wake' && name !== 'agent' && (gen.signed.anyPath || gen.signed.paths.has(name));
    const authenticated = authenticate(ctx, gen, client, now, !signedName);
    if (!name) throw errors.notFound();
    state.hook = name;

    const body = await readBody(ctx.req, { maxBytes: hc.maxBodyBytes, timeoutMs: hc.bodyTimeoutMs }, ctx.res);
    state.bytes = body.length;
    requireIdentityEncoding(ctx.get('content-encoding') || undefined, ctx.get('transfer-encoding') || undefined);
    const kind = mediaKind(ctx.get('content-type') || undefined, name === 'wake' || name === 'agent');
    const payload = kind === 'json' ? parseJson(body) : parseForm(body);

    const req: HookRequest = {
      name,
      payload,
      headers: ctx.headers,
      query: queryWithoutToken(ctx.query),
      path,
      url: ctx.querystring.includes('token=') ? path : ctx.url,
      rawBody: body,
      receivedAt: now,
      authenticated,
    };

    const idemKey = idempotencyKey(ctx.headers);
    const scoped = `${name}\n${idemKey ?? ''}`;
    const work = async (): Promise<Answer> => {
      let resolution;
      try {
        resolution = await resolveRequest(gen, req, deps.named);
      } catch (err) {
        // a signed hook's credential is judged only now: count its failures like a wrong token
        if (err instanceof HookError && (err.code === 'UNAUTHORIZED' || err.code === 'INVALID_SIGNATURE')) throw fail(client, now, err);
        throw err;
      }
      if (!authenticated) deps.throttle.succeed(client);
      if (resolution.mappingId) state.mapping = resolution.mappingId;
      if (resolution.kind === 'skip') return { status: 204, body: {} };
      return deps.dispatcher.dispatch(resolution.actions, {
        agentStatus: hc.agentStatus,
        maxQueuedRuns: hc.maxQueuedRuns,
        ...(idemKey ? { idempotency: { key: scoped, ttlSeconds: hc.idempotencyTtlSeconds } } : {}),
      });
    };
    const answer = idemKey ? await deps.idempotency.once(scoped, now, work) : await work();

    const b = answer.body;
    if (typeof b.runId === 'string') state.runId = b.runId;
    else if (Array.isArray(b.runIds) && b.runIds.length) state.runId = (b.runIds as string[]).join(',');
    if (typeof b.eventId === 'string') state.eventId = b.eventId;
    ctx.status = answer.status;
    if (answer.status !== 204) ctx.body = b;
  }
}

function queryWithoutToken(q: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(q)) {
    if (k === 'token') continue;
    const v = q[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v[0]! : v;
  }
  return out;
}
