/**
 * Pull mode (`hooks.gmail.mode: "pull"`): instead of serving the push endpoint, long-polls the
 * Pub/Sub subscription and hands each notice to the bridge, one after the other. A message is
 * acknowledged only when the bridge is done with it (the hook accepted every new message, or it
 * was covered already); one whose posting failed is left alone, and Pub/Sub hands it out again
 * after the ack deadline. Failed pulls wait before the next: `Retry-After` when the answer has
 * one, else 1 s doubling to a minute. Stopping ends the wait or the pull at once, lets the notice
 * in hand finish, acknowledges what was done and leaves the rest of the batch unacknowledged.
 */
import type { Logger } from '../log.ts';
import { OAuthError } from './access-token.ts';
import type { Bridge } from './bridge.ts';
import { PubSubError, type PubSubApi, type ReceivedMessage } from './pubsub.ts';
import { noticeFromData } from './push-server.ts';
import type { Deps } from './settings.ts';

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;
/** The longest wait a `Retry-After` may ask for. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** A pull unanswered this long is given up and made again (a quiet long poll, or a dead connection). */
export const PULL_TIMEOUT_MS = 120_000;

export interface PullOptions {
  subscription: string;
  maxMessages: number;
  /** Default `PULL_TIMEOUT_MS`. */
  timeoutMs?: number;
}

export class PullLoop {
  /** Counters for status and tests. */
  pulls = 0;
  acknowledged = 0;

  private stopped = false;
  private failures = 0;
  private abort: AbortController | undefined;
  private wakeUp: (() => void) | undefined;
  private running: Promise<void> | undefined;

  private readonly deps: Deps;
  private readonly api: PubSubApi;
  private readonly bridge: Bridge;
  private readonly opts: PullOptions;
  private readonly log: Logger;

  constructor(deps: Deps, api: PubSubApi, bridge: Bridge, opts: PullOptions, log: Logger) {
    this.deps = deps;
    this.api = api;
    this.bridge = bridge;
    this.opts = opts;
    this.log = log;
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Ends the loop: a pull or a wait in progress is cut short, the notice in hand finishes. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wakeUp?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let received: ReceivedMessage[];
      try {
        this.abort = new AbortController();
        this.pulls++;
        received = await this.api.pull(
          this.opts.subscription,
          this.opts.maxMessages,
          AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.opts.timeoutMs ?? PULL_TIMEOUT_MS)]),
        );
        this.failures = 0;
      } catch (err) {
        if (this.stopped) break;
        if (err instanceof PubSubError && err.timedOut) {
          this.log.debug('gmail: pull unanswered; pulling again');
          continue;
        }
        await this.sleep(this.delayAfter(err as Error));
        continue;
      }
      await this.handleBatch(received);
    }
  }

  /** Hands the notices to the bridge in order; acknowledges those it is done with. */
  private async handleBatch(received: ReceivedMessage[]): Promise<void> {
    const done: string[] = [];
    for (const r of received) {
      // the rest of the batch stays unacknowledged: Pub/Sub hands it out again
      if (this.stopped) break;
      const notice = noticeFromData(r.message?.data);
      if (typeof notice === 'string') {
        // not a Gmail notice: it can never be processed, so it is not handed out again
        this.log.warn({ reason: notice, messageId: r.message?.messageId }, 'gmail: pulled message is not a Gmail notice; acknowledged');
        done.push(r.ackId);
        continue;
      }
      if ((await this.bridge.handle(notice)) === 'done') done.push(r.ackId);
    }
    if (!done.length) return;
    try {
      await this.api.acknowledge(this.opts.subscription, done);
      this.acknowledged += done.length;
    } catch (err) {
      // harmless: handed out again, each is covered by the stored historyId by then
      this.log.warn({ err: (err as Error).message, messages: done.length }, 'gmail: acknowledge failed; Pub/Sub will hand these out again');
    }
  }

  /** How long to wait after a failed pull, with a log line that says what to do. */
  private delayAfter(err: Error): number {
    this.failures++;
    const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** (this.failures - 1), MAX_BACKOFF_MS);
    const retryAfter = err instanceof PubSubError ? err.retryAfterMs : undefined;
    const ms = retryAfter !== undefined ? Math.min(Math.max(retryAfter, FIRST_BACKOFF_MS), MAX_RETRY_AFTER_MS) : backoff;
    const hint =
      err instanceof PubSubError && err.scopeMissing
        ? 'the refresh token lacks the Pub/Sub scope: run "hook-intake webhooks gmail auth" again'
        : err instanceof OAuthError && err.permanent
          ? 'Google refuses the refresh token: run "hook-intake webhooks gmail auth" again'
          : err instanceof PubSubError && (err.status === 403 || err.status === 404)
            ? 'check hooks.gmail.subscription and that the account may pull from it (roles/pubsub.subscriber)'
            : undefined;
    this.log.error({ err: err.message, retryInMs: ms, ...(hint ? { hint } : {}) }, 'gmail: pull failed');
    return ms;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.deps.schedule(() => {
        this.wakeUp = undefined;
        resolve();
      }, ms);
      this.wakeUp = () => {
        cancel();
        this.wakeUp = undefined;
        resolve();
      };
    });
  }
}
