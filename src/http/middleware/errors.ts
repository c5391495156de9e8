/**
 * First in the Koa chain (read API, health, everything but `/hooks`): turns
 * every error into the one JSON error shape and writes the one log line per
 * request. The pieces are shared with the `/hooks` listener (../respond.ts).
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { errors, HookError } from '../../errors.ts';
import type { RequestState } from '../state.ts';
import { closeIfBodyUnread, errorBody, logFailure, requestLogger, toHookError } from '../respond.ts';

export function errorsAndLog(logger: Logger): Middleware<RequestState> {
  const logRequest = requestLogger(logger);
  return async function errorsAndLog(ctx, next) {
    const start = performance.now();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HookError(404, 'NOT_FOUND', 'not found');
      // the router answers a known path with a wrong method by status and Allow header alone
      if (ctx.status === 405 && ctx.body === undefined) throw errors.methodNotAllowed(ctx.response.get('Allow') || 'GET, HEAD');
    } catch (err) {
      const e = toHookError(err);
      ctx.status = e.status;
      if (e.headers) ctx.set(e.headers);
      if (closeIfBodyUnread(ctx.req)) ctx.set('Connection', 'close');
      ctx.body = errorBody(e);
      logFailure(logger, e, ctx.path, ctx.state);
    } finally {
      logRequest(ctx.method, ctx.path, ctx.status, start, ctx.state);
    }
  };
}
