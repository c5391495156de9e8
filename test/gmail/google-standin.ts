/**
 * A stand-in for Google on 127.0.0.1: the OAuth token endpoint and consent page, the Gmail API
 * calls the bridge makes over an in-memory mailbox, and a JWKS of a locally generated RSA key for
 * Pub/Sub's OIDC tokens. Every Gmail request is checked against Google's discovery document
 * (`test/fixtures/specs/gmail/gmail-v1.json`): method and path, each query parameter's name,
 * type, enum and repetition, the request body's fields, and each canned answer's fields.
 * A mismatch is answered 400 and kept in `mismatches` (tests expect it empty).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { discoveryChecker } from './discovery.ts';

const DISCOVERY = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/specs/gmail/gmail-v1.json'), 'utf8'));

const gmail = discoveryChecker(DISCOVERY);
/** Problems of `value` against a Gmail discovery schema (unknown fields, wrong types, enums). */
export const shapeProblems = gmail.shapeProblems;
/** The Gmail discovery method a request is for and the problems of its parameters and body. */
export const checkRequest = gmail.checkRequest;

export const GMAIL_READONLY = 'https://www.googleapis.com/auth/gmail.readonly';
export const PUBSUB_SCOPE = 'https://www.googleapis.com/auth/pubsub';

/** Google's answer to a valid access token without the scope a method needs. */
export function insufficientScope(): [number, unknown, Record<string, string>] {
  return [
    403,
    {
      error: {
        code: 403,
        message: 'Request had insufficient authentication scopes.',
        status: 'PERMISSION_DENIED',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', domain: 'googleapis.com' },
        ],
      },
    },
    { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="insufficient_scope"' },
  ];
}

/** One RSA key pair for every stand-in of a test file: generating one takes a while. */
let keyPair: ReturnType<typeof generateKeyPair> | undefined;

export interface MailboxMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  snippet: string;
  payload: Record<string, unknown>;
  historyId?: string;
  internalDate?: string;
}

export interface GoogleStandIn {
  url: string;
  /** Gmail API calls, by discovery method id, in order. */
  calls: string[];
  mismatches: string[];
  /** Token endpoint grants (`refresh_token`, `authorization_code`). */
  grants: string[];
  /** Every access token handed out (to check none reaches any output). */
  issued: string[];
  /** Gmail methods (discovery ids) to answer 503, once per entry. */
  failures: string[];
  client: { id: string; secret: string; refreshToken: string };
  /** The scopes the refresh token carries: those the last consent asked for (default Gmail's and Pub/Sub's). */
  grantedScopes: string[];
  /** The scopes of a valid access token; undefined for a token not handed out or expired. */
  scopesOf(accessToken: string): string[] | undefined;
  /** The mailbox. */
  messages: Map<string, MailboxMessage>;
  historyId: bigint;
  /** history.list answers 404 for a startHistoryId below this. */
  historyFloor: bigint;
  /** Adds messages (one history record each); returns the new historyId. */
  deliver(...msgs: MailboxMessage[]): string;
  /** Access tokens handed out so far stop working (the next API call gets 401). */
  expireAccessTokens(): void;
  jwks: { keys: JWK[] };
  /** How many times the keys were fetched. */
  certFetches: number;
  /** Google rotates: a new signing key joins the published keys and signs from now on. */
  rotateKey(): Promise<void>;
  /** A Pub/Sub OIDC token signed with the stand-in's key (or `key`). */
  oidc(claims: Record<string, unknown>, opts?: { key?: CryptoKey; expiresInSeconds?: number; iatSeconds?: number }): Promise<string>;
  /** What the token endpoint last got from a code exchange, for the auth test. */
  close(): Promise<void>;
}

export async function startGoogle(opts: { now?: () => number } = {}): Promise<GoogleStandIn> {
  const now = opts.now ?? Date.now;
  const { privateKey, publicKey } = await (keyPair ??= generateKeyPair('RS256'));
  const jwk = { ...(await exportJWK(publicKey)), kid: 'standin-1', alg: 'RS256', use: 'sig' };
  let signing = { key: privateKey, kid: 'standin-1' };
  const history: { id: bigint; messageId: string }[] = [];
  const validTokens = new Map<string, string[]>();
  const codes = new Map<string, { challenge: string; redirect: string }>();
  const g: GoogleStandIn = {
    url: '',
    calls: [],
    mismatches: [],
    grants: [],
    issued: [],
    failures: [],
    client: {
      id: 'client-1.apps.googleusercontent.com',
      secret: `GOCSPX-${randomBytes(12).toString('hex')}`,
      refreshToken: `1//rt-${randomBytes(16).toString('hex')}`,
    },
    grantedScopes: [GMAIL_READONLY, PUBSUB_SCOPE],
    scopesOf: (token) => validTokens.get(token),
    messages: new Map(),
    historyId: 1000n,
    historyFloor: 0n,
    deliver(...msgs) {
      for (const m of msgs) {
        g.historyId += 7n;
        g.messages.set(m.id, { ...m, historyId: String(g.historyId) });
        history.push({ id: g.historyId, messageId: m.id });
      }
      return String(g.historyId);
    },
    expireAccessTokens: () => validTokens.clear(),
    jwks: { keys: [jwk] },
    certFetches: 0,
    rotateKey: async () => {
      const next = await generateKeyPair('RS256');
      const kid = `standin-${g.jwks.keys.length + 1}`;
      g.jwks.keys.push({ ...(await exportJWK(next.publicKey)), kid, alg: 'RS256', use: 'sig' });
      signing = { key: next.privateKey, kid };
    },
    oidc: (claims, o = {}) => {
      const iat = o.iatSeconds ?? Math.floor(now() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: signing.kid, typ: 'JWT' })
        .setIssuedAt(iat)
        .setExpirationTime(iat + (o.expiresInSeconds ?? 3600))
        .sign(o.key ?? signing.key);
    },
    close: async () => undefined,
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', g.url);
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
      };
      if (url.pathname === '/certs') g.certFetches++;
      if (url.pathname === '/certs') return send(200, g.jwks, { 'cache-control': 'public, max-age=3600' });
      if (url.pathname === '/auth') {
        // the consent page: the user allows at once; the browser goes back to the loopback address
        const code = `4/code-${randomBytes(8).toString('hex')}`;
        const redirect = url.searchParams.get('redirect_uri') ?? '';
        const ok =
          url.searchParams.get('client_id') === g.client.id &&
          url.searchParams.get('code_challenge_method') === 'S256' &&
          /^http:\/\/127\.0\.0\.1:\d+$/.test(redirect) &&
          url.searchParams.get('access_type') === 'offline';
        if (!ok) g.mismatches.push(`auth: unexpected consent URL parameters`);
        codes.set(code, { challenge: url.searchParams.get('code_challenge') ?? '', redirect });
        g.grantedScopes = (url.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
        res
          .writeHead(302, {
            location: `${redirect}/?code=${encodeURIComponent(code)}&state=${encodeURIComponent(url.searchParams.get('state') ?? '')}&scope=x`,
          })
          .end();
        return;
      }
      if (url.pathname === '/token') {
        const form = new URLSearchParams(raw);
        if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') g.mismatches.push('token: not a form');
        if (form.get('client_id') !== g.client.id || form.get('client_secret') !== g.client.secret)
          return send(401, { error: 'invalid_client' });
        const grant = form.get('grant_type') ?? '';
        g.grants.push(grant);
        if (grant === 'refresh_token') {
          if (form.get('refresh_token') !== g.client.refreshToken) return send(400, { error: 'invalid_grant' });
        } else if (grant === 'authorization_code') {
          const c = codes.get(form.get('code') ?? '');
          const challenge = createHash('sha256')
            .update(form.get('code_verifier') ?? '')
            .digest('base64url');
          if (!c || c.challenge !== challenge || c.redirect !== form.get('redirect_uri')) return send(400, { error: 'invalid_grant' });
          codes.delete(form.get('code')!);
        } else return send(400, { error: 'unsupported_grant_type' });
        const access = `ya29.${randomBytes(16).toString('hex')}`;
        validTokens.set(access, [...g.grantedScopes]);
        g.issued.push(access);
        return send(200, {
          access_token: access,
          expires_in: 3599,
          token_type: 'Bearer',
          scope: g.grantedScopes.join(' '),
          ...(grant === 'authorization_code' ? { refresh_token: g.client.refreshToken } : {}),
        });
      }
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = raw;
      }
      const { id, problems } = checkRequest(req.method ?? 'GET', url, body);
      if (id) g.calls.push(id);
      if (problems.length) {
        g.mismatches.push(...problems);
        return send(400, { error: { code: 400, message: problems.join('; '), status: 'INVALID_ARGUMENT' } });
      }
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!token || !validTokens.has(token))
        return send(401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
      if (!validTokens.get(token)!.includes(GMAIL_READONLY)) return send(...insufficientScope());
      const failure = g.failures.indexOf(id!);
      if (failure !== -1) {
        g.failures.splice(failure, 1);
        return send(503, { error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } });
      }
      const answer = (status: number, value: unknown, schema: string) => {
        const p = shapeProblems(value, { $ref: schema }, id!);
        if (p.length) g.mismatches.push(...p);
        send(status, value);
      };
      if (id === 'gmail.users.watch')
        return answer(200, { historyId: String(g.historyId), expiration: String(now() + 7 * 86400_000) }, 'WatchResponse');
      if (id === 'gmail.users.history.list') {
        const start = BigInt(url.searchParams.get('startHistoryId') ?? '0');
        if (start < g.historyFloor)
          return send(404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
        const label = url.searchParams.get('labelId');
        const after = history.filter((h) => h.id > start && (!label || g.messages.get(h.messageId)?.labelIds.includes(label)));
        // pages of two records: the bridge must follow nextPageToken
        const offset = Number(url.searchParams.get('pageToken') ?? '0');
        const page = after.slice(offset, offset + 2);
        const records = page.map((h) => {
          const m = g.messages.get(h.messageId)!;
          return {
            id: String(h.id),
            messages: [{ id: m.id, threadId: m.threadId }],
            messagesAdded: [{ message: { id: m.id, threadId: m.threadId, labelIds: m.labelIds } }],
          };
        });
        return answer(
          200,
          {
            ...(records.length ? { history: records } : {}),
            historyId: String(g.historyId),
            ...(offset + 2 < after.length ? { nextPageToken: String(offset + 2) } : {}),
          },
          'ListHistoryResponse',
        );
      }
      if (id === 'gmail.users.messages.list') {
        const label = url.searchParams.get('labelIds');
        const max = Number(url.searchParams.get('maxResults') ?? '100');
        const list = [...g.messages.values()]
          .filter((m) => !label || m.labelIds.includes(label))
          .reverse()
          .slice(0, max);
        return answer(
          200,
          { messages: list.map((m) => ({ id: m.id, threadId: m.threadId })), resultSizeEstimate: list.length },
          'ListMessagesResponse',
        );
      }
      if (id === 'gmail.users.messages.get') {
        const mid = decodeURIComponent(url.pathname.split('/').at(-1)!);
        const m = g.messages.get(mid);
        if (!m) return send(404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
        return answer(200, m, 'Message');
      }
      send(501, { error: { code: 501, message: `stand-in does not answer ${id}`, status: 'UNIMPLEMENTED' } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  g.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  g.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return g;
}

/** `hooks.gmail` keys that point every Google URL at the stand-in. */
export const googleUrls = (g: GoogleStandIn) => ({
  apiBaseUrl: g.url,
  tokenUrl: `${g.url}/token`,
  jwksUrl: `${g.url}/certs`,
  authUrl: `${g.url}/auth`,
});

/** A Pub/Sub push body for `{emailAddress, historyId}`. */
export function pushBody(emailAddress: string, historyId: string, messageId = randomBytes(6).toString('hex')): string {
  const data = Buffer.from(JSON.stringify({ emailAddress, historyId })).toString('base64');
  return JSON.stringify({
    message: { data, messageId, message_id: messageId, publishTime: '2026-11-20T19:13:55.749Z', attributes: {} },
    subscription: 'projects/p/subscriptions/hook-intake-gmail-push',
  });
}
