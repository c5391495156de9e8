/**
 * The bot's access token for the Bot Connector: an OAuth 2.0
 * client-credentials grant, kept until shortly before it expires (by the
 * injected clock), shared by concurrent sends, and dropped when the
 * Connector refuses it so the next request gets a fresh one.
 */
import { ChannelError, detailOf, parseRetryAfter, post, readAnswer, shownUrl } from 'hook-intake/plugin';

/** The audience of Bot Connector tokens. */
export const BOT_FRAMEWORK_SCOPE = 'https://api.botframework.com/.default';
/** A token is renewed this long before its expiry, so a send never carries one that expires on the way. */
export const RENEW_BEFORE_MS = 5 * 60_000;

export interface TokenSource {
  get(signal: AbortSignal): Promise<string>;
  /** Forgets the cached token (the Connector answered 401 to it). */
  invalidate(token: string): void;
}

export interface TokenOptions {
  tokenUrl: string;
  appId: string;
  appPassword: string;
  timeoutMs: number;
  fetch: typeof fetch;
  clock: () => number;
}

interface Cached {
  token: string;
  renewAt: number;
}

export function createTokenSource(opts: TokenOptions): TokenSource {
  let cached: Cached | undefined;
  let pending: Promise<Cached> | undefined;
  const shown = shownUrl(opts.tokenUrl);

  async function request(signal: AbortSignal): Promise<Cached> {
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: opts.appId,
      client_secret: opts.appPassword,
      scope: BOT_FRAMEWORK_SCOPE,
    });
    const hidden = [opts.appPassword, encodeURIComponent(opts.appPassword)];
    const res = await post(
      opts.fetch,
      opts.tokenUrl,
      { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: body.toString() },
      { signal, timeoutMs: opts.timeoutMs, hidden, safeToRepeat: true },
    );
    const { text, json } = await readAnswer(res, hidden);
    const answer = (json ?? {}) as { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown };
    if (res.ok && typeof answer.access_token === 'string' && answer.access_token !== '') {
      const lifetimeMs = Number(answer.expires_in) > 0 ? Number(answer.expires_in) * 1000 : 3600_000;
      return { token: answer.access_token, renewAt: opts.clock() + Math.max(0, lifetimeMs - RENEW_BEFORE_MS) };
    }
    // the grant's own error code and description say what is wrong with the credentials
    const code = typeof answer.error === 'string' ? answer.error : '';
    const description = typeof answer.error_description === 'string' ? detailOf(answer.error_description) : detailOf(text);
    const reason = `token request to ${shown}: HTTP ${res.status}${code ? ` ${code}` : ''}${description ? `: ${description}` : ''}`;
    if (res.ok) throw new ChannelError(`${reason} (no access_token in the answer)`, { retryable: true });
    if (res.status === 429 || res.status === 408 || res.status >= 500) {
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), opts.clock());
      throw new ChannelError(reason, { retryable: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    }
    throw new ChannelError(reason, { retryable: false });
  }

  return {
    async get(signal) {
      if (cached && opts.clock() < cached.renewAt) return cached.token;
      pending ??= request(signal).finally(() => {
        pending = undefined;
      });
      cached = await pending;
      return cached.token;
    },
    invalidate(token) {
      if (cached?.token === token) cached = undefined;
    },
  };
}
