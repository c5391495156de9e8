/**
 * Who may push: Pub/Sub proves itself either with the push token in the endpoint's query
 * (`?token=`, compared in constant time) or with a Google-signed OIDC token in
 * `Authorization: Bearer`. The OIDC token must verify against Google's keys (fetched from
 * `jwksUrl` and cached), be unexpired, come from Google's issuer, carry `push.audience`, and name
 * `push.serviceAccountEmail` as a verified email. Both `push` keys are needed for OIDC: anyone can
 * get a Google-signed token for any audience, so the sender's email is what identifies Pub/Sub.
 */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { createTokenMatcher, type TokenMatcher } from '../auth/token.ts';
import type { Deps } from './settings.ts';

const ISSUERS = ['https://accounts.google.com', 'accounts.google.com'];
/** How long fetched keys are used when the answer names no max-age. */
const KEYS_TTL_MS = 60 * 60_000;
/** An unknown key id refetches the keys, at most this often. */
const REFETCH_MIN_MS = 30_000;

export interface PushAuthOptions {
  pushToken?: string;
  audience?: string;
  serviceAccountEmail?: string;
  jwksUrl: string;
}

/** Google's signing keys, fetched on first use and kept for their max-age. */
export class KeyCache {
  private keys: ReturnType<typeof createLocalJWKSet> | undefined;
  private fetchedAt = -Infinity;
  private ttl = KEYS_TTL_MS;
  fetches = 0;

  private readonly deps: Deps;
  private readonly url: string;

  constructor(deps: Deps, url: string) {
    this.deps = deps;
    this.url = url;
  }
  async get(force = false): Promise<ReturnType<typeof createLocalJWKSet>> {
    const age = this.deps.now() - this.fetchedAt;
    if (this.keys && age < this.ttl && !(force && age >= REFETCH_MIN_MS)) return this.keys;
    const res = await this.deps.fetch(this.url, { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`keys at jwksUrl answered HTTP ${res.status}`);
    const jwks = (await res.json()) as JSONWebKeySet;
    const maxAge = /max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1];
    this.ttl = maxAge ? Number(maxAge) * 1000 : KEYS_TTL_MS;
    this.keys = createLocalJWKSet(jwks);
    this.fetchedAt = this.deps.now();
    this.fetches++;
    return this.keys;
  }
}

export type PushAuthResult = { ok: true; via: 'token' | 'oidc' } | { ok: false; reason: string };

export class PushAuth {
  private readonly token: TokenMatcher | undefined;
  private readonly keys: KeyCache;

  private readonly deps: Deps;
  private readonly opts: PushAuthOptions;

  constructor(deps: Deps, opts: PushAuthOptions) {
    this.deps = deps;
    this.opts = opts;
    this.token = opts.pushToken ? createTokenMatcher(opts.pushToken) : undefined;
    this.keys = new KeyCache(deps, opts.jwksUrl);
  }

  get oidcEnabled(): boolean {
    return !!(this.opts.audience && this.opts.serviceAccountEmail);
  }

  /** Checks a push's `?token=` and `Authorization` header. Reasons name no secret. */
  async check(queryToken: string | null, authorization: string | undefined): Promise<PushAuthResult> {
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (bearer && this.oidcEnabled) return this.checkOidc(bearer);
    if (queryToken !== null && this.token) {
      return this.token.matches(queryToken) ? { ok: true, via: 'token' } : { ok: false, reason: 'wrong push token' };
    }
    if (bearer) return { ok: false, reason: 'OIDC token given but hooks.gmail.push.audience and serviceAccountEmail are not both set' };
    return { ok: false, reason: 'no push token and no OIDC token' };
  }

  private async checkOidc(jwt: string): Promise<PushAuthResult> {
    const verify = async (force: boolean) =>
      jwtVerify(jwt, await this.keys.get(force), {
        issuer: ISSUERS,
        audience: this.opts.audience!,
        algorithms: ['RS256'],
        currentDate: new Date(this.deps.now()),
        clockTolerance: 30,
        requiredClaims: ['exp', 'iat'],
      });
    let payload;
    try {
      try {
        ({ payload } = await verify(false));
      } catch (err) {
        // a key Google rotated in since the keys were fetched
        if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err;
        ({ payload } = await verify(true));
      }
    } catch (err) {
      return { ok: false, reason: `OIDC token refused (${(err as { code?: string }).code ?? 'invalid'})` };
    }
    if (payload.email !== this.opts.serviceAccountEmail || payload.email_verified !== true) {
      return { ok: false, reason: 'OIDC token is not from hooks.gmail.push.serviceAccountEmail' };
    }
    return { ok: true, via: 'oidc' };
  }
}
