/**
 * First in the chain: turns every error into the one JSON error shape, keeps
 * 5xx internals out of responses, and writes the one log line per request
 * (method, path without query string, hook, status, bytes, duration, runId).
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { errors, HookError, isHookError } from '../../errors.ts';
import type { RequestState } from '../state.ts';
import { lingerAfterAnswer } from '../connection.ts';

const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export function errorsAndLog(logger: Logger): Middleware<RequestState> {
  // The request line is built below from fixed fields that never hold a secret
  // (the path is logged without its query string), so it skips the logger's
  // wildcard redaction, which costs more than the rest of the line.
  const requestLog = logger.child({}, { redact: [] });
  return async function errorsAndLog(ctx, next) {
    const start = performance.now();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HookError(404, 'NOT_FOUND', 'not found');
      // the router answers a known path with a wrong method by status and Allow header alone
      if (ctx.status === 405 && ctx.body === undefined) throw errors.methodNotAllowed(ctx.response.get('Allow') || 'GET, HEAD');
    } catch (err) {
      const e = isHookError(err) ? err : fromUnknown(err);
      ctx.status = e.status;
      if (e.headers) ctx.set(e.headers);
      if (!ctx.req.readableEnded && hasBody(ctx.req.headers)) {
        ctx.set('Connection', 'close');
        lingerAfterAnswer(ctx.req);
      }
      ctx.body = e.field !== undefined && e.field !== ''
        ? { ok: false, error: e.expose ? e.message : 'internal error', code: e.code, field: e.field }
        : { ok: false, error: e.expose ? e.message : 'internal error', code: e.code };
      // unexpected failures are logged here; the expected 5xx (transform failed, queue full) were logged where they happened
      if (e.status >= 500 && !e.expose) logger.error({ err: e.cause ?? e, code: e.code, path: ctx.path, hook: ctx.state.hook, mapping: ctx.state.mapping }, 'request failed');
    } finally {
      const s = ctx.state;
      const line = {
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round((performance.now() - start) * 100) / 100,
        hook: s.hook,
        mapping: s.mapping,
        bytes: s.bytes,
        runId: s.runId,
        eventId: s.eventId,
      };
      if (QUIET_PATHS.has(ctx.path)) requestLog.debug(line, 'request');
      else requestLog.info(line, 'request');
    }
  };
}

function hasBody(h: Record<string, string | string[] | undefined>): boolean {
  return (h['content-length'] !== undefined && h['content-length'] !== '0') || h['transfer-encoding'] !== undefined;
}

/** Errors not raised by this service (Koa's own, bugs) get a generic answer. */
function fromUnknown(err: unknown): HookError {
  const status = (err as { status?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = status === 404 ? 'NOT_FOUND' : status === 405 ? 'METHOD_NOT_ALLOWED' : 'BAD_REQUEST';
    return new HookError(status, code, (err as Error).message || 'bad request');
  }
  return new HookError(500, 'INTERNAL', 'internal error', { cause: err });
}
