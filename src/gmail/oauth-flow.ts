/**
 * Google's OAuth flow for installed apps: a consent URL for the operator to open, the redirect
 * caught on a loopback address (127.0.0.1, a free port), the code exchanged at `tokenUrl` for a
 * refresh token. PKCE (S256) and a random `state` tie the redirect to this run.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuthError, tokenRequest } from './access-token.ts';
import type { Deps } from './settings.ts';

export const GMAIL_SCOPE = 'https://www.googleapis.com/auth/gmail.readonly';
const WAIT_MS = 10 * 60_000;

export interface FlowOptions {
  authUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** The OAuth scopes to ask for. */
  scopes: string[];
  /** Gets the consent URL to show the operator. */
  show: (url: string) => void;
  deps: Deps;
}

/** The client of a Google "Desktop app" credentials file (`{installed: {client_id, client_secret}}`). */
export function readClientFile(text: string): { clientId: string; clientSecret: string } {
  let data: Record<string, { client_id?: unknown; client_secret?: unknown }>;
  try {
    data = JSON.parse(text) as typeof data;
  } catch {
    throw new Error(
      'the client secret file is not JSON (download it from Google Cloud: APIs & Services, Credentials, OAuth client, Desktop app)',
    );
  }
  const c = data.installed ?? data.web;
  if (typeof c?.client_id !== 'string' || typeof c.client_secret !== 'string') {
    throw new Error('the client secret file has no installed.client_id and installed.client_secret');
  }
  return { clientId: c.client_id, clientSecret: c.client_secret };
}

/** Runs the flow; resolves with the refresh token. */
export async function installedAppFlow(opts: FlowOptions): Promise<string> {
  const state = randomBytes(16).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');

  let settle!: { resolve: (code: string) => void; reject: (err: Error) => void };
  const codeArrived = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const done = (status: number, text: string) =>
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end(text);
    if (url.pathname !== '/' || !url.searchParams.has('state')) return done(404, 'not found');
    if (url.searchParams.get('state') !== state)
      return done(400, 'This answer is not for this sign-in; run hook-intake webhooks gmail auth again.');
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    if (error || !code) {
      done(400, 'Sign-in was not completed. You can close this window.');
      return settle.reject(new OAuthError(`Google did not grant access (${error ?? 'no code'})`, true));
    }
    done(200, 'hook-intake has access to the mailbox. You can close this window.');
    settle.resolve(code);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cancel = opts.deps.schedule(() => settle.reject(new OAuthError('no answer from the browser within 10 minutes', false)), WAIT_MS);
  try {
    const consent = new URL(opts.authUrl);
    const params = {
      client_id: opts.clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: opts.scopes.join(' '),
      access_type: 'offline',
      // a refresh token comes only with a fresh consent
      prompt: 'consent',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) consent.searchParams.set(k, v);
    opts.show(consent.toString());
    const code = await codeArrived;
    const body = await tokenRequest(opts.deps, opts.tokenUrl, {
      grant_type: 'authorization_code',
      code,
      client_id: opts.clientId,
      client_secret: opts.clientSecret,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });
    if (typeof body.refresh_token !== 'string')
      throw new OAuthError(
        "Google answered without a refresh token (remove the app from the account's third-party access and run auth again)",
        true,
      );
    return body.refresh_token;
  } finally {
    cancel();
    server.closeAllConnections();
    server.close();
  }
}
