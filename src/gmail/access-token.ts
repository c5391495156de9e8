/**
 * Access tokens from the refresh token (`grant_type=refresh_token` at `tokenUrl`), kept until a
 * minute before they expire, or until the Gmail API refuses one (401).
 */
import type { Deps } from './settings.ts';

export class OAuthError extends Error {
  readonly permanent: boolean;

  constructor(
    message: string,
    /** `invalid_grant` and the like: the operator must run `gmail auth` again. */
    permanent: boolean,
  ) {
    super(message);
    this.permanent = permanent;
  }
}

export interface Credentials {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

/** Posts a form to the token endpoint; the answer's `error` code (never its secrets) on failure. */
export async function tokenRequest(deps: Deps, tokenUrl: string, form: Record<string, string>): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await deps.fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
    });
  } catch (err) {
    throw new OAuthError(`token endpoint unreachable (${(err as Error).message})`, false);
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const code = typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
    throw new OAuthError(`token endpoint refused the request: ${code}`, res.status === 400 || res.status === 401);
  }
  return body;
}

export class AccessTokens {
  private token: string | undefined;
  private expiresAt = 0;
  private pending: Promise<string> | undefined;
  /** How many times a token was fetched (for status and tests). */
  refreshes = 0;
  /** The scopes Google named with the last token (its `scope`), when it named them. */
  scopes: string[] | undefined;

  private readonly deps: Deps;
  private readonly tokenUrl: string;
  private readonly creds: Credentials;

  constructor(deps: Deps, tokenUrl: string, creds: Credentials) {
    this.deps = deps;
    this.tokenUrl = tokenUrl;
    this.creds = creds;
  }
  /** A valid access token, refreshed when absent or within a minute of expiry. */
  async get(): Promise<string> {
    if (this.token && this.deps.now() < this.expiresAt - 60_000) return this.token;
    return (this.pending ??= this.refresh().finally(() => (this.pending = undefined)));
  }

  /** Forgets the token (the API answered 401): the next `get` refreshes. */
  invalidate(): void {
    this.token = undefined;
  }

  private async refresh(): Promise<string> {
    const body = await tokenRequest(this.deps, this.tokenUrl, {
      grant_type: 'refresh_token',
      client_id: this.creds.clientId,
      client_secret: this.creds.clientSecret,
      refresh_token: this.creds.refreshToken,
    });
    if (typeof body.access_token !== 'string') throw new OAuthError('token endpoint answered without access_token', false);
    this.refreshes++;
    this.token = body.access_token;
    if (typeof body.scope === 'string') this.scopes = body.scope.split(' ').filter(Boolean);
    this.expiresAt = this.deps.now() + (typeof body.expires_in === 'number' ? body.expires_in : 3600) * 1000;
    return this.token;
  }
}
