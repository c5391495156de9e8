/**
 * The two Pub/Sub REST v1 calls pull mode makes, over plain `fetch`:
 * `projects.subscriptions.pull` and `projects.subscriptions.acknowledge`. The access token is the
 * mailbox's (the refresh token must carry the Pub/Sub scope); a 401 refreshes it once and retries.
 * A failure keeps what the caller needs to wait well: the status, `Retry-After`, and whether
 * Google said the token lacks a scope.
 */
import type { AccessTokens } from './access-token.ts';
import { joinUrl, type Deps } from './settings.ts';

/** The OAuth scope the pull and acknowledge calls need (Gmail's scope does not cover them). */
export const PUBSUB_SCOPE = 'https://www.googleapis.com/auth/pubsub';
/** Also enough for Pub/Sub (a token granted it may be used instead). */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

const TIMED_OUT = 'timed out';

export class PubSubError extends Error {
  /** 0: no answer (network, timeout). */
  readonly status: number;
  /** From `Retry-After`, when the answer had one. */
  readonly retryAfterMs: number | undefined;
  /** Google said the access token lacks the scope (403 `insufficient_scope`). */
  readonly scopeMissing: boolean;
  /** No answer within the call's time limit. */
  readonly timedOut: boolean;

  constructor(method: string, status: number, reason: string, retryAfterMs?: number, scopeMissing = false) {
    super(`Pub/Sub ${method} failed: ${status ? `HTTP ${status}` : 'unreachable'}${reason ? ` (${reason})` : ''}`);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    this.scopeMissing = scopeMissing;
    this.timedOut = status === 0 && reason === TIMED_OUT;
  }
}

/** A `ReceivedMessage` of a pull answer (the fields read here). */
export interface ReceivedMessage {
  ackId: string;
  message?: { data?: string; messageId?: string; publishTime?: string };
  deliveryAttempt?: number;
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from `now`. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class PubSubApi {
  private readonly deps: Deps;
  private readonly baseUrl: string;
  private readonly tokens: AccessTokens;

  constructor(deps: Deps, baseUrl: string, tokens: AccessTokens) {
    this.deps = deps;
    this.baseUrl = baseUrl;
    this.tokens = tokens;
  }

  /** Up to `maxMessages` messages; waits (a long poll) while there are none. */
  async pull(subscription: string, maxMessages: number, signal: AbortSignal): Promise<ReceivedMessage[]> {
    const r = await this.call<{ receivedMessages?: ReceivedMessage[] }>('pull', subscription, { maxMessages }, signal);
    return (r.receivedMessages ?? []).filter((m) => typeof m?.ackId === 'string');
  }

  async acknowledge(subscription: string, ackIds: string[]): Promise<void> {
    await this.call('acknowledge', subscription, { ackIds }, AbortSignal.timeout(30_000));
  }

  private async call<T>(method: string, subscription: string, body: unknown, signal: AbortSignal, retried = false): Promise<T> {
    // `{+subscription}` in the API's path: the name keeps its slashes
    const url = joinUrl(this.baseUrl, `v1/${subscription}:${method}`);
    const token = await this.tokens.get();
    let res: Response;
    try {
      res = await this.deps.fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      throw new PubSubError(method, 0, (err as Error).name === 'TimeoutError' ? TIMED_OUT : (err as Error).message);
    }
    if (res.status === 401 && !retried) {
      await res.body?.cancel();
      this.tokens.invalidate();
      return this.call(method, subscription, body, signal, true);
    }
    const json = (await res.json().catch(() => undefined)) as (T & { error?: { status?: string } }) | undefined;
    if (!res.ok) {
      const scopeMissing = res.status === 403 && /insufficient_scope/.test(res.headers.get('www-authenticate') ?? '');
      throw new PubSubError(
        method,
        res.status,
        json?.error?.status ?? '',
        retryAfterMs(res.headers.get('retry-after'), this.deps.now()),
        scopeMissing,
      );
    }
    return (json ?? {}) as T;
  }
}
