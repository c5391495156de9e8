/**
 * The Gmail watch: `users.watch` at start and again every `renewEveryMinutes` (Gmail ends a watch
 * after 7 days). A failed renewal is retried after a minute, so a short outage does not let the
 * watch lapse.
 */
import type { Logger } from '../log.ts';
import { OAuthError } from './access-token.ts';
import type { GmailApi } from './api.ts';
import type { Deps } from './settings.ts';

const RETRY_MS = 60_000;

export class WatchRenewal {
  private cancel: (() => void) | undefined;
  private stopped = false;
  renewals = 0;

  private readonly deps: Deps;
  private readonly api: GmailApi;
  private readonly topic: string;
  private readonly label: string;
  private readonly everyMs: number;
  private readonly log: Logger;
  private readonly onWatch: (historyId: string | undefined) => void;

  constructor(
    deps: Deps,
    api: GmailApi,
    topic: string,
    label: string,
    everyMs: number,
    log: Logger,
    /** Gets each watch's historyId (the bridge takes the first as its starting point). */
    onWatch: (historyId: string | undefined) => void,
  ) {
    this.deps = deps;
    this.api = api;
    this.topic = topic;
    this.label = label;
    this.everyMs = everyMs;
    this.log = log;
    this.onWatch = onWatch;
  }
  /**
   * Calls `users.watch` now and schedules the next call. A first call that fails is retried a
   * minute later (the network or the topic's grant may not be ready yet), except when Google
   * refuses the credentials: that needs the operator, so it is thrown.
   */
  async start(): Promise<void> {
    try {
      await this.renew();
      this.next(this.everyMs);
    } catch (err) {
      if (err instanceof OAuthError && err.permanent) throw err;
      this.log.error({ err: (err as Error).message }, 'gmail: users.watch failed; retrying in a minute');
      this.next(RETRY_MS);
    }
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
  }

  private async renew(): Promise<void> {
    const r = await this.api.watch(this.topic, [this.label]);
    this.renewals++;
    this.log.info({ expiration: r.expiration ? new Date(Number(r.expiration)).toISOString() : undefined }, 'gmail: watch renewed');
    this.onWatch(r.historyId);
  }

  private next(ms: number): void {
    if (this.stopped) return;
    this.cancel = this.deps.schedule(() => {
      this.renew().then(
        () => this.next(this.everyMs),
        (err: Error) => {
          this.log.error({ err: err.message }, 'gmail: watch renewal failed; retrying in a minute');
          this.next(RETRY_MS);
        },
      );
    }, ms);
  }
}
