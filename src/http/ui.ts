/**
 * The console at `/ui` (docs/console.md, "The console at /ui"): its page and assets, read from `ui/` once
 * at start and served as they are (no build step), and sign-in and sign-out.
 * Sign-in takes the gateway token in `Authorization: Bearer` (the page sends
 * it once, never in a URL or a body) and answers a session cookie and the
 * session's CSRF token; every later call of the page goes to `/api` with the
 * cookie (src/auth/bearer.ts `authenticateApi`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { IncomingMessage } from 'node:http';
import type { GenerationRef } from '../generation/ref.ts';
import { SESSION_COOKIE, type ConsoleSessions } from '../auth/sessions.ts';
import { errors } from '../errors.ts';
import { bearerToken, type BearerAuth } from '../auth/bearer.ts';
import { tokenFingerprint } from '../auth/token.ts';
import { clientAddress } from './target.ts';
import type { RequestState } from './state.ts';
import { PACKAGE_ROOT } from '../package-root.ts';

export const UI_DIR = join(PACKAGE_ROOT, 'ui');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * What every console answer carries: only this origin's scripts, styles and connections, no
 * framing, no referrer, no sniffing.
 */
export const UI_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

interface Asset {
  type: string;
  body: Buffer;
}

/** Every file under `dir` by its path below it (with `/`), read once. */
export function loadAssets(dir = UI_DIR): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && TYPES[extname(e.name)])
        out.set(relative(dir, p).split(sep).join('/'), { type: TYPES[extname(e.name)]!, body: readFileSync(p) });
    }
  };
  walk(dir);
  return out;
}

export interface UiDeps {
  generations: GenerationRef;
  sessions: ConsoleSessions;
  bearer: BearerAuth;
  clock: () => number;
}

/** True when the request came over TLS, or through a trusted proxy that says it did. */
export function overTls(req: IncomingMessage, trustProxy: boolean): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  const h = req.headers['x-forwarded-proto'];
  const proto = (Array.isArray(h) ? h[0] : h)?.split(',')[0]?.trim().toLowerCase();
  return trustProxy && proto === 'https';
}

/** The host the browser addressed: `Host`, or through a trusted proxy `X-Forwarded-Host`. */
export function requestHost(req: IncomingMessage, trustProxy: boolean): string | undefined {
  const fwd = trustProxy ? req.headers['x-forwarded-host'] : undefined;
  const h = (Array.isArray(fwd) ? fwd[0] : fwd)?.split(',')[0]?.trim();
  return h || req.headers.host;
}

function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export function uiRouter(deps: UiDeps, assets = loadAssets()): Router<RequestState> {
  const router = new Router<RequestState>();
  const serve = (ctx: Context, name: string) => {
    const a = assets.get(name);
    if (!a) throw errors.notFound();
    ctx.set(UI_HEADERS);
    ctx.type = a.type;
    ctx.body = a.body;
  };
  router.get('/ui', (ctx) => serve(ctx, 'index.html'));

  const trust = () => deps.generations.current.config.gateway.trustProxy;
  const sessionAnswer = (ctx: Context, s: { csrf: string }, expiresAt: number) => {
    ctx.set('cache-control', 'no-store');
    ctx.body = { ok: true, csrfToken: s.csrf, expiresAt: new Date(expiresAt).toISOString() };
  };

  // sign-in: the gateway token, checked like any read API call (throttle included)
  router.post('/ui/session', async (ctx) => {
    const gen = deps.generations.current;
    const now = deps.clock();
    deps.bearer.authenticate(ctx.headers, gen.gatewayToken, clientAddress(ctx.req, trust()), now);
    const s = await deps.sessions.create(now, tokenFingerprint(bearerToken(ctx.headers.authorization)));
    const expiresAt = deps.sessions.expiresAt(s);
    ctx.set('set-cookie', sessionCookie(s.id, Math.floor((expiresAt - now) / 1000), overTls(ctx.req, trust())));
    sessionAnswer(ctx, s, expiresAt);
  });
  // the page asks at load whether its cookie still holds a session, and for the session's CSRF token
  router.get('/ui/session', async (ctx) => {
    const caller = await authenticate(ctx);
    if (caller.kind !== 'session') throw errors.invalidPayload('cookie', 'this endpoint is for the console: sign in with POST /ui/session');
    sessionAnswer(ctx, caller.session, deps.sessions.expiresAt(caller.session));
  });
  // sign-out: a state change, so the CSRF token is needed
  router.delete('/ui/session', async (ctx) => {
    const caller = await authenticate(ctx);
    if (caller.kind === 'session') await deps.sessions.end(caller.session.id);
    ctx.set('set-cookie', sessionCookie('', 0, overTls(ctx.req, trust())));
    ctx.status = 204;
  });

  // after /ui/session: the page's files
  router.get(/^\/ui\/(.*)$/, (ctx) => serve(ctx, ctx.path.slice('/ui/'.length) || 'index.html'));

  function authenticate(ctx: Context) {
    const gen = deps.generations.current;
    return deps.bearer.authenticateApi(
      ctx.headers,
      ctx.method,
      gen.gatewayToken,
      clientAddress(ctx.req, trust()),
      deps.clock(),
      requestHost(ctx.req, trust()),
    );
  }
  return router;
}
