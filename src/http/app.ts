/**
 * The HTTP application, not listening. `/hooks/*` goes to the hook listener
 * (plain node:http: the hot path); everything else — read API, health, 404s —
 * to a Koa app. `createApp` is the Koa part alone (tests drive it through
 * `app.callback()`); `createListener` is what `serve` puts behind
 * `http.createServer`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { Logger } from 'pino';
import { errorsAndLog } from './middleware/errors.ts';
import { createHookListener, type HooksDeps } from './hooks.ts';
import { isHookPath, target } from './target.ts';
import { apiBearer, apiRouter, type ApiDeps } from './api.ts';
import { uiRouter } from './ui.ts';
import { consoleRouter, type ConsoleDeps } from './console-api.ts';
import type { RequestState } from './state.ts';

/** What the admin API needs beyond the read API's deps (absent: no admin API, as in tests of the read API alone). */
export type AdminDeps = Pick<ConsoleDeps, 'dispatcher' | 'notifyOutbox'>;

/** The parts of the store the routes read and write: the read API's and the admin API's. */
type AppStore = ApiDeps['store'] & ConsoleDeps['store'];

export type AppDeps = HooksDeps & ApiDeps & { store: AppStore; logger: Logger; admin?: AdminDeps };

export function createApp(
  deps: ApiDeps & { store: AppStore; logger: Logger; admin?: AdminDeps; intake?: HooksDeps['intake'] },
): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.silent = true; // errors are logged once, by errorsAndLog
  // one token check (and one failure throttle) for the read API and the console's sign-in
  const bearer = apiBearer(deps);
  const api = apiRouter(deps, bearer);
  app.use(errorsAndLog(deps.logger));
  app.use(api.routes());
  app.use(api.allowedMethods());
  if (deps.sessions) {
    const ui = uiRouter({ generations: deps.generations, sessions: deps.sessions, bearer, clock: deps.clock });
    app.use(ui.routes());
    app.use(ui.allowedMethods());
  }
  if (deps.admin && deps.intake) {
    const admin = consoleRouter({ ...deps, ...deps.admin, intake: deps.intake, bearer });
    app.use(admin.routes());
    app.use(admin.allowedMethods());
  }
  return app;
}

export function createListener(deps: AppDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const koa = createApp(deps).callback();
  const hooks = createHookListener(deps);
  return (req, res) => {
    const t = target(req.url ?? '/');
    if (isHookPath(deps.generations.current, t.path)) hooks(req, res, t);
    else void koa(req, res);
  };
}
