/**
 * Bearer-token authentication with the failed-attempt throttle, the one path
 * for `/hooks` (hook token) and the read API (gateway token).
 *
 * The token is looked for in `Authorization: Bearer`, then (where the site
 * reads it) `x-gateway-token`, then (where the site passes the query)
 * `?token=`; only the first one found is checked. A failure counts against
 * the client address, a success resets its count.
 *
 * The read API also takes the console's session cookie (`authenticateApi`),
 * through the same throttle and the same 401: a sign-in with the gateway
 * token got it (./sessions.ts).
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { errors, type HookError } from '../errors.ts';
import { OncePer, type FailureThrottle } from './throttle.ts';
import type { TokenMatcher } from './token.ts';
import { CSRF_HEADER, readCookie, SESSION_COOKIE, type ConsoleSession, type ConsoleSessions } from './sessions.ts';

/** A deprecated `?token=` is warned about at most this often per client address. */
export const QUERY_TOKEN_WARN_MS = 60 * 60 * 1000;

const BEARER = /^Bearer\s+(.+)$/i;

export interface BearerOptions {
  /** Shared by every site: failures anywhere count for the address. */
  throttle: FailureThrottle;
  /** Receives the deprecation warning of a `?token=` (a site that passes no query needs none). */
  logger?: Logger;
  /** Also read `x-gateway-token` when no Bearer token came. */
  gatewayHeader: boolean;
  /** The console's sessions, whose cookie `authenticateApi` takes in place of the token. */
  sessions?: ConsoleSessions;
}

/** Who a read API call came from: a holder of the gateway token, or a signed-in console. */
export type ApiCaller = { kind: 'token' } | { kind: 'session'; session: ConsoleSession };

/** Methods that change nothing: a cookie call needs no CSRF token for them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The token of an `Authorization: Bearer` header ('' when there is none). */
export function bearerToken(authorization: string | undefined): string {
  const m = authorization ? BEARER.exec(authorization) : null;
  return m ? m[1]!.trim() : '';
}

/** The first value of a header (a repeated one arrives as an array in some typings). */
function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export class BearerAuth {
  private readonly throttle: FailureThrottle;
  private readonly logger: Logger | undefined;
  private readonly gatewayHeader: boolean;
  private readonly sessions: ConsoleSessions | undefined;
  private readonly queryWarnings = new OncePer(QUERY_TOKEN_WARN_MS);

  constructor(opts: BearerOptions) {
    this.throttle = opts.throttle;
    this.logger = opts.logger;
    this.gatewayHeader = opts.gatewayHeader;
    this.sessions = opts.sessions;
  }

  /**
   * The read API's check: `Authorization: Bearer` with the gateway token, else the console's session
   * cookie. An unknown or expired session is a failure like a wrong token (401, counted). A cookie
   * call that changes state must carry the session's CSRF token in `X-CSRF-Token` and come from the
   * service's own page (`Origin`'s host is `host`, `Sec-Fetch-Site` is `same-origin`, when the
   * browser sends them); otherwise `403 CSRF_REFUSED`, not counted (the session is valid; the page
   * that sent the call is not the console).
   */
  async authenticateApi(
    headers: IncomingHttpHeaders,
    method: string,
    expected: TokenMatcher | undefined,
    client: string,
    now: number,
    host: string | undefined,
  ): Promise<ApiCaller> {
    const cookie = this.sessions && !headers.authorization ? readCookie(first(headers.cookie), SESSION_COOKIE) : undefined;
    if (cookie === undefined) {
      this.authenticate(headers, expected, client, now);
      return { kind: 'token' };
    }
    const retry = this.throttle.blocked(client, now);
    if (retry !== undefined) throw errors.rateLimited(retry);
    // without a gateway token the read API is closed, sessions or not
    const session = expected ? await this.sessions!.use(cookie, now) : undefined;
    if (!session) throw this.fail(client, now, errors.unauthorized());
    this.throttle.succeed(client);
    if (!SAFE_METHODS.has(method) && !sameSite(headers, session, host)) throw errors.csrfRefused();
    return { kind: 'session', session };
  }

  /**
   * Checks the token of a request from `client`. Returns true when a valid
   * token came. With `required: false` (a name a signature-verified mapping
   * may own) a missing or wrong token returns false and is not yet a failure:
   * the caller gives the verdict later with `fail` or `succeed`.
   *
   * Throws `429 RATE_LIMITED` (with `Retry-After`) while the address is
   * blocked, before the token is looked at; else `401 UNAUTHORIZED`, or the
   * 429 when this failure crosses the limit. `query` is read only when no
   * header carried a token; with `allowQuery` a token there is accepted,
   * `Deprecation: true` goes into `out`, and a warning is logged.
   */
  authenticate(
    headers: IncomingHttpHeaders,
    expected: TokenMatcher | undefined,
    client: string,
    now: number,
    required = true,
    query?: URLSearchParams,
    allowQuery = false,
    out?: Record<string, string>,
  ): boolean {
    const retry = this.throttle.blocked(client, now);
    if (retry !== undefined) throw errors.rateLimited(retry);
    let token: string | undefined;
    const authz = headers.authorization;
    if (authz) {
      const m = BEARER.exec(authz);
      if (m) token = m[1]!.trim();
    }
    if (token === undefined && this.gatewayHeader) token = first(headers['x-gateway-token']) || undefined;
    let viaQuery = false;
    if (token === undefined && query?.has('token')) {
      const q = query.get('token');
      if (q) {
        if (!allowQuery) {
          if (!required) return false;
          throw this.fail(client, now, errors.queryTokenRefused());
        }
        token = q;
        viaQuery = true;
      }
    }
    if (token === undefined || !expected || !expected.matches(token)) {
      if (!required) return false;
      throw this.fail(client, now, errors.unauthorized());
    }
    this.throttle.succeed(client);
    if (viaQuery) {
      if (out) out.Deprecation = 'true';
      if (this.logger && this.queryWarnings.take(client, now))
        this.logger.warn({ client }, 'hook token sent as ?token= query parameter (deprecated); send Authorization: Bearer instead');
    }
    return true;
  }

  /** Counts a failed authentication; returns what to throw: `err`, or 429 for the failure that crosses the limit. */
  fail(client: string, now: number, err: HookError): HookError {
    const blockedFor = this.throttle.fail(client, now);
    return blockedFor !== undefined ? errors.rateLimited(blockedFor) : err;
  }

  /** A credential checked elsewhere (a signature) passed: the address's count starts over. */
  succeed(client: string): void {
    this.throttle.succeed(client);
  }
}

/** A cookie call that changes state came from the console's own page with its session's CSRF token. */
function sameSite(headers: IncomingHttpHeaders, session: ConsoleSession, host: string | undefined): boolean {
  const csrf = first(headers[CSRF_HEADER]);
  if (csrf === undefined || !timingSafeEqual(hash('sha256', csrf, 'buffer'), hash('sha256', session.csrf, 'buffer'))) return false;
  const site = first(headers['sec-fetch-site']);
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = first(headers.origin);
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
