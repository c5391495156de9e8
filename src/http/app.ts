/**
 * `createApp(deps)`: the Koa application, not listening. Tests drive it through
 * `app.callback()`; `serve` puts it behind `http.createServer`.
 */
import Koa from 'koa';
import type { Logger } from 'pino';
import { errorsAndLog } from './middleware/errors.ts';
import { hooksMiddleware, type HooksDeps } from './hooks.ts';
import { apiRouter, type ApiDeps } from './api.ts';
import type { RequestState } from './state.ts';

export type AppDeps = HooksDeps & ApiDeps & { logger: Logger };

export function createApp(deps: AppDeps): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.silent = true; // errors are logged once, by errorsAndLog
  const api = apiRouter(deps);
  app.use(errorsAndLog(deps.logger));
  app.use(hooksMiddleware(deps));
  app.use(api.routes());
  app.use(api.allowedMethods());
  return app;
}
