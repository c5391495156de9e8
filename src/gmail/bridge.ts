/**
 * From a Pub/Sub notice (`{emailAddress, historyId}`) to accepted hook requests. The history
 * since the last processed historyId is listed, each new message fetched and posted to the hook
 * on its own (`Idempotency-Key: gmail:<id>`, so a repeat runs nothing twice). The stored
 * historyId advances only when the hook accepted every message; otherwise the outcome is `retry`
 * (a push answered 5xx, a pulled message left unacknowledged) and Pub/Sub delivers it again.
 * Notices are handled one at a time, in arrival order; one at or below the stored historyId was
 * covered already (notices arrive late and more than once).
 */
import type { Logger } from '../log.ts';
import { GmailApiError, type GmailApi } from './api.ts';
import { messageItem, type MessageItem } from './message.ts';
import { newer, readState, writeState, type BridgeState } from './state.ts';
import type { Deps } from './settings.ts';

/** How many recent messages a resync lists when the stored historyId is too old. */
export const RESYNC_MESSAGES = 10;
const HOOK_TIMEOUT_MS = 10_000;

export interface BridgeOptions {
  account: string;
  label: string;
  includeBody: boolean;
  maxBytes: number;
  hookUrl: string;
  hookToken: string;
  stateFile: string;
}

export interface Notice {
  emailAddress: string;
  historyId: string;
}

/** `done`: the push gets 2xx, a pulled message is acknowledged; `retry`: Pub/Sub delivers it again. */
export type Outcome = 'done' | 'retry';

export class Bridge {
  private queue: Promise<unknown> = Promise.resolve();

  private readonly deps: Deps;
  private readonly api: GmailApi;
  private readonly opts: BridgeOptions;
  private readonly log: Logger;

  constructor(deps: Deps, api: GmailApi, opts: BridgeOptions, log: Logger) {
    this.deps = deps;
    this.api = api;
    this.opts = opts;
    this.log = log;
  }
  /** Handles one notice after the ones before it. */
  handle(notice: Notice): Promise<Outcome> {
    const next = this.queue.then(() => this.process(notice));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Takes `historyId` (from `users.watch`) as the starting point when none is stored yet. */
  baseline(historyId: string | undefined): void {
    const state = readState(this.opts.stateFile);
    if (state.historyId || !historyId) return;
    writeState(this.opts.stateFile, { ...state, historyId });
    this.log.info({ historyId }, 'gmail: starting from the watch historyId');
  }

  private async process(notice: Notice): Promise<Outcome> {
    if (notice.emailAddress.toLowerCase() !== this.opts.account.toLowerCase()) {
      this.log.warn('gmail: notice for another mailbox ignored');
      return 'done';
    }
    const state = readState(this.opts.stateFile);
    if (!state.historyId) {
      writeState(this.opts.stateFile, { ...state, historyId: notice.historyId });
      this.log.warn(
        { historyId: notice.historyId },
        'gmail: no stored historyId (users.watch has not answered yet); starting from this notice',
      );
      return 'done';
    }
    if (!newer(notice.historyId, state.historyId)) {
      this.log.debug({ historyId: notice.historyId }, 'gmail: notice already covered');
      return 'done';
    }
    try {
      return await this.catchUp(state, notice.historyId);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'gmail: notice not processed; Pub/Sub will deliver it again');
      return 'retry';
    }
  }

  private async catchUp(state: BridgeState, pushed: string): Promise<Outcome> {
    let found: { ids: string[]; latest: string };
    try {
      found = await this.since(state.historyId!);
    } catch (err) {
      if (!(err instanceof GmailApiError && err.status === 404)) throw err;
      this.log.warn(
        { historyId: state.historyId },
        `gmail: stored historyId is too old for history.list; posting the ${RESYNC_MESSAGES} latest messages not posted yet`,
      );
      const list = await this.api.recent(this.opts.label, RESYNC_MESSAGES);
      found = { ids: (list.messages ?? []).map((m) => m.id).reverse(), latest: pushed };
    }
    const posted = new Set(state.posted);
    const ids = found.ids.filter((id) => !posted.has(id));
    let failed = false;
    for (const id of ids) {
      const item = await this.fetchItem(id);
      if (item && !(await this.post(item, found.latest))) {
        failed = true;
        break;
      }
      state.posted.push(id);
    }
    const latest = newer(pushed, found.latest) ? pushed : found.latest;
    if (!failed && newer(latest, state.historyId)) state.historyId = latest;
    writeState(this.opts.stateFile, state);
    this.log.info({ messages: ids.length, historyId: state.historyId, complete: !failed }, 'gmail: notice processed');
    return failed ? 'retry' : 'done';
  }

  /** Ids of the messages added to the label since `start` (all pages, first seen first). */
  private async since(start: string): Promise<{ ids: string[]; latest: string }> {
    const ids: string[] = [];
    const seen = new Set<string>();
    let latest = start;
    let pageToken: string | undefined;
    do {
      const page = await this.api.history(start, this.opts.label, pageToken);
      for (const h of page.history ?? []) {
        for (const added of h.messagesAdded ?? []) {
          const m = added.message;
          if (!m?.id || seen.has(m.id)) continue;
          if (m.labelIds && !m.labelIds.includes(this.opts.label)) continue;
          seen.add(m.id);
          ids.push(m.id);
        }
      }
      if (page.historyId && newer(page.historyId, latest)) latest = page.historyId;
      pageToken = page.nextPageToken;
    } while (pageToken);
    return { ids, latest };
  }

  /** The message as a payload item; undefined when it was deleted meanwhile. */
  private async fetchItem(id: string): Promise<MessageItem | undefined> {
    try {
      return messageItem(await this.api.message(id, this.opts.includeBody), this.opts.includeBody, this.opts.maxBytes);
    } catch (err) {
      if (err instanceof GmailApiError && err.status === 404) {
        this.log.info({ messageId: id }, 'gmail: message gone before it was fetched; skipped');
        return undefined;
      }
      throw err;
    }
  }

  /** Posts one message; true when the hook accepted it (any 2xx, a repeat included). */
  private async post(item: MessageItem, historyId: string): Promise<boolean> {
    const body = JSON.stringify({ source: 'gmail', account: this.opts.account, historyId, messages: [item] });
    try {
      const res = await this.deps.fetch(this.opts.hookUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${this.opts.hookToken}`,
          'idempotency-key': `gmail:${item.id}`,
        },
        body,
        signal: AbortSignal.timeout(HOOK_TIMEOUT_MS),
      });
      await res.body?.cancel();
      if (res.ok) return true;
      this.log.warn({ messageId: item.id, status: res.status }, 'gmail: the hook refused a message');
    } catch (err) {
      this.log.warn({ messageId: item.id, err: (err as Error).name }, 'gmail: the hook is unreachable');
    }
    return false;
  }
}
