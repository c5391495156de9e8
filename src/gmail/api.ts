/**
 * The few Gmail API calls the bridge makes, over plain `fetch`: `users.watch`,
 * `users.history.list`, `users.messages.get` and `users.messages.list`. A 401 refreshes the
 * access token once and retries.
 */
import type { AccessTokens } from './access-token.ts';
import type { MessagePart } from './mime.ts';
import { joinUrl, type Deps } from './settings.ts';

export class GmailApiError extends Error {
  readonly status: number;
  readonly method: string;

  constructor(status: number, method: string, reason: string) {
    super(`Gmail ${method} failed: ${status ? `HTTP ${status}` : 'unreachable'}${reason ? ` (${reason})` : ''}`);
    this.status = status;
    this.method = method;
  }
}

export interface GmailMessage {
  id: string;
  threadId?: string;
  labelIds?: string[];
  snippet?: string;
  historyId?: string;
  payload?: MessagePart;
}

export interface HistoryPage {
  history?: { id?: string; messagesAdded?: { message?: { id?: string; labelIds?: string[] } }[] }[];
  nextPageToken?: string;
  historyId?: string;
}

type Query = Record<string, string | number | string[] | undefined>;

export class GmailApi {
  private readonly deps: Deps;
  private readonly baseUrl: string;
  private readonly tokens: AccessTokens;

  constructor(deps: Deps, baseUrl: string, tokens: AccessTokens) {
    this.deps = deps;
    this.baseUrl = baseUrl;
    this.tokens = tokens;
  }
  watch(topicName: string, labelIds: string[]): Promise<{ historyId?: string; expiration?: string }> {
    return this.call('users.watch', 'POST', 'gmail/v1/users/me/watch', {}, { topicName, labelIds, labelFilterBehavior: 'include' });
  }

  history(startHistoryId: string, labelId: string, pageToken?: string): Promise<HistoryPage> {
    return this.call('users.history.list', 'GET', 'gmail/v1/users/me/history', {
      startHistoryId,
      historyTypes: 'messageAdded',
      labelId,
      maxResults: 100,
      pageToken,
    });
  }

  message(id: string, full: boolean): Promise<GmailMessage> {
    const query: Query = full ? { format: 'full' } : { format: 'metadata', metadataHeaders: ['From', 'To', 'Subject', 'Date'] };
    return this.call('users.messages.get', 'GET', `gmail/v1/users/me/messages/${encodeURIComponent(id)}`, query);
  }

  recent(labelId: string, maxResults: number): Promise<{ messages?: { id: string }[] }> {
    return this.call('users.messages.list', 'GET', 'gmail/v1/users/me/messages', { labelIds: labelId, maxResults });
  }

  private async call<T>(method: string, verb: string, path: string, query: Query, body?: unknown, retried = false): Promise<T> {
    const url = new URL(joinUrl(this.baseUrl, path));
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(one));
    }
    const token = await this.tokens.get();
    let res: Response;
    try {
      res = await this.deps.fetch(url, {
        method: verb,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch (err) {
      throw new GmailApiError(0, method, (err as Error).message);
    }
    if (res.status === 401 && !retried) {
      await res.body?.cancel();
      this.tokens.invalidate();
      return this.call(method, verb, path, query, body, true);
    }
    const json = (await res.json().catch(() => undefined)) as (T & { error?: { status?: string; message?: string } }) | undefined;
    if (!res.ok) throw new GmailApiError(res.status, method, json?.error?.status ?? '');
    return (json ?? {}) as T;
  }
}
