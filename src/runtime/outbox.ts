/**
 * The delivery outbox. Entries are written in the same transaction that
 * finishes a run, so a reply is never lost between "run done" and "sent".
 * A failed send is retried with exponential backoff (`delivery.*` config,
 * honouring a channel's Retry-After), at most `MAX_ATTEMPTS` times; the
 * outcome is recorded on the run.
 *
 * Sends to one route (channel + recipient) go one at a time, so the parts
 * and replies a chat receives arrive in order. A reply split into parts
 * remembers how many were accepted, and a retry resumes after them.
 *
 * A channel's error says how to go on: rate limited (retry after its hint),
 * transient (retry with backoff), permanent (fail now with its message as the
 * reason) or ambiguous (it may have been posted: that part is retried once).
 */
import type { Logger } from 'pino';
import type { GenerationRef } from '../generation/ref.ts';
import type { OutboxRecords, RunRecords } from '../store/roles.ts';
import type { Delivery, DeliveryAttempt, NewDelivery } from '../store/types.ts';
import { RecycledMap, RecycledSet } from '../util/recycled.ts';
import { untilStored } from './until-stored.ts';
import { stopWithin } from '../util/deadline.ts';
import { attemptDelivery, type AttemptContext, type AttemptOutcome } from './delivery-attempt.ts';
import { attemptCallback } from '../callbacks/attempt.ts';
import { deliveryFailedEvents } from '../callbacks/events.ts';
import type { Resolve } from '../callbacks/send.ts';

export { MAX_ATTEMPTS, MAX_RETRY_AFTER_MS } from './delivery-attempt.ts';

export interface OutboxDeps {
  /** The outbox's records (`Store.records`), and the runs a `delivery.failed` event describes. */
  records: OutboxRecords & Pick<RunRecords, 'getRun'>;
  generations: GenerationRef;
  logger: Logger;
  clock?: () => number;
  /** Delay before attempt n+1 after n failures (n ≥ 1); default from `delivery.*` with ±20 % jitter. */
  backoffMs?: (failures: number) => number;
  /** Resolves callbacks' host names (tests); default the system's resolver. */
  resolve?: Resolve;
}

export interface Outbox {
  /**
   * A delivery is waiting. With the entry a run just committed, it is sent
   * without reading the store; without one, the store is scanned for due entries.
   */
  notify(entry?: NewDelivery): void;
  /** Sends what the store holds: entries left pending by an earlier process (recovery). */
  start(): void;
  /** Stops starting sends; waits for those in flight up to `deadlineMs`, then aborts them (they are sent again on the next start). */
  stop(deadlineMs: number): Promise<void>;
  /** Resolves when nothing is due or in flight (tests). */
  idle(): Promise<void>;
}

/** Exponential backoff from `delivery.initialBackoffMs`, capped at `delivery.maxBackoffMs`, with ±20 % jitter. */
export function backoffFor(failures: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(initialMs * 2 ** (failures - 1), maxMs);
  return Math.max(1, Math.round(base * (0.8 + random() * 0.4)));
}

/** A reply's route (channel and recipient), or a callback (its events go one at a time too). */
const routeKey = (d: Pick<Delivery, 'channel' | 'to' | 'event'>) => (d.event ? `\u0001${d.channel}` : `${d.channel}\u0000${d.to ?? ''}`);
const SCAN_ALL = Number.MAX_SAFE_INTEGER;
const SCAN_LIMIT = 100_000;

export function createOutbox(deps: OutboxDeps): Outbox {
  return new RouteOutbox(deps);
}

/**
 * Scheduling is in memory and costs the same whatever the backlog: entries
 * wait in a queue per route, the head of each idle route is sent, a retry
 * waits on its own timer. The store is read only when an entry is not known
 * in memory (at start, or a `notify()` without an entry).
 */
class RouteOutbox implements Outbox {
  private readonly records: OutboxDeps['records'];
  private readonly resolve: Resolve | undefined;
  private readonly generations: GenerationRef;
  private readonly logger: Logger;
  private readonly clock: () => number;
  /** Every entry this process is handling: queued, in flight or waiting to retry. */
  private readonly known = new RecycledSet<string>();
  private readonly queues = new RecycledMap<string, Delivery[]>();
  private readonly inFlight = new RecycledMap<string, Promise<void>>();
  private readonly retries = new RecycledMap<string, NodeJS.Timeout>();
  /** When each entry waiting to retry is due. */
  private readonly retryDue = new RecycledMap<string, number>();
  private readonly shutdown = new AbortController();
  private stopped = false;
  private scanning: Promise<void> | undefined;
  private scanAgain = false;
  private idleWaiters: (() => void)[] = [];
  /**
   * Records waiting for the store to write again (a full disk): while any waits, no send starts, so
   * the attempts on disk keep up with the sends and a restart cannot send past the attempt cap.
   */
  private waitingForStore = 0;
  private readonly attemptContext: AttemptContext;
  /** A callback's attempts are recorded as they are: a callback's failure makes no event. */
  private readonly callbackContext: AttemptContext;

  constructor(deps: OutboxDeps) {
    this.records = deps.records;
    this.generations = deps.generations;
    this.logger = deps.logger;
    this.clock = deps.clock ?? Date.now;
    const backoff =
      deps.backoffMs ??
      ((n: number) => {
        const d = this.generations.current.config.delivery;
        return backoffFor(n, d.initialBackoffMs, d.maxBackoffMs);
      });
    this.resolve = deps.resolve;
    this.attemptContext = { clock: this.clock, backoff, signal: this.shutdown.signal, record: (a, log) => this.recordReply(a, log) };
    this.callbackContext = { ...this.attemptContext, record: (a, log) => this.record(a, log) };
  }

  notify(entry?: NewDelivery): void {
    if (!entry) return void this.scan();
    const at = entry.createdAt;
    this.enqueue({
      ...entry,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: at,
      lastError: null,
      createdAt: at,
      updatedAt: at,
      parts: null,
      sentParts: 0,
      ambiguousPart: null,
      mainSession: entry.mainSession === true,
    });
  }

  start(): void {
    void this.scan();
  }

  async stop(deadlineMs: number): Promise<void> {
    this.stopped = true;
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
    if (!this.inFlight.size) return;
    await stopWithin(Promise.allSettled([...this.inFlight.values()]), deadlineMs, () =>
      this.shutdown.abort(new Error('service shutting down')),
    );
  }

  idle(): Promise<void> {
    return new Promise((r) => {
      this.idleWaiters.push(r);
      this.settle();
    });
  }

  private settle(): void {
    if (!this.idleWaiters.length || this.inFlight.size || this.scanning || [...this.queues.values()].some((q) => q.length)) return;
    // a retry due within the next moment counts as work still to do
    for (const d of this.retryDue.values()) if (d <= this.clock() + 50) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const r of w) r();
  }

  private enqueue(d: Delivery): void {
    if (this.stopped || this.known.has(d.id)) return;
    this.known.add(d.id);
    const key = routeKey(d);
    let q = this.queues.get(key);
    if (!q) this.queues.set(key, (q = []));
    q.push(d);
    if (q.length === 1) this.sendHead(key);
  }

  /** Sends the head of a route's queue; the next one goes when it is done. */
  private sendHead(key: string): void {
    const q = this.queues.get(key);
    const d = q?.[0];
    if (!q || !d || this.stopped || this.waitingForStore || this.inFlight.has(d.id)) return;
    const p = this.attempt(d).then(
      ({ retry, recorded }) => {
        // the route moves on now; the entry counts as in flight until its record is committed
        this.inFlight.set(d.id, this.afterRecord(d, key, recorded, retry !== undefined));
        this.dequeue(q, key);
        if (retry) this.waitToRetry(retry.delivery, retry.at);
        this.sendHead(key);
      },
      (err) => {
        // a store failure while recording: leave it to the next start, keep the route moving
        this.logger.error({ err, runId: d.runId }, 'delivery bookkeeping failed');
        this.inFlight.delete(d.id);
        this.dequeue(q, key);
        this.sendHead(key);
        this.settle();
      },
    );
    this.inFlight.set(d.id, p);
  }

  private dequeue(q: Delivery[], key: string): void {
    q.shift();
    if (!q.length) this.queues.delete(key);
  }

  /** Once the attempt's record is committed: the entry is no longer in flight, and its route may go on. */
  private afterRecord(d: Delivery, key: string, recorded: Promise<void>, retrying: boolean): Promise<void> {
    return recorded.then(
      () => {
        this.inFlight.delete(d.id);
        if (!retrying) this.known.delete(d.id);
        // a retry that came due while this record was committing waits at the head of its route
        this.sendHead(key);
        this.settle();
      },
      (err) => {
        // only a stop gives up on a storage failure; any other error here is a bug
        this.logger.error({ err, runId: d.runId }, 'recording a delivery failed; it is sent again after a restart');
        this.inFlight.delete(d.id);
        this.sendHead(key);
        this.settle();
      },
    );
  }

  private waitToRetry(d: Delivery, at: number): void {
    this.known.add(d.id);
    this.retryDue.set(d.id, at);
    const t = setTimeout(
      () => {
        this.retries.delete(d.id);
        this.retryDue.delete(d.id);
        this.known.delete(d.id);
        this.enqueue(d);
      },
      Math.max(0, at - this.clock()),
    );
    this.retries.set(d.id, t);
  }

  /** Reads the store for pending entries this process does not know yet. */
  private scan(): Promise<void> {
    if (this.scanning) {
      this.scanAgain = true;
      return this.scanning;
    }
    this.scanning = this.scanUntilCaughtUp()
      .catch((err) => this.logger.error({ err }, 'outbox scan failed'))
      .finally(() => {
        this.scanning = undefined;
        this.settle();
      });
    return this.scanning;
  }

  private async scanUntilCaughtUp(): Promise<void> {
    do {
      this.scanAgain = false;
      const due = await untilStored(() => this.records.dueDeliveries(SCAN_ALL, SCAN_LIMIT), {
        signal: this.shutdown.signal,
        logger: this.logger,
        what: 'read the outbox',
      });
      const now = this.clock();
      for (const d of due) {
        if (this.known.has(d.id)) continue;
        if (d.nextAttemptAt <= now) this.enqueue(d);
        else this.waitToRetry(d, d.nextAttemptAt);
      }
    } while (this.scanAgain && !this.stopped);
  }

  /** Records an attempt, again and again while the store cannot write, until it can or the outbox stops. */
  private record(a: DeliveryAttempt, log: Logger): Promise<void> {
    return untilStored(() => this.records.recordDelivery(a), {
      signal: this.shutdown.signal,
      logger: log,
      what: 'record a delivery attempt',
      onWait: () => this.waitingForStore++,
      onResume: () => {
        // the sends held meanwhile go now, each route's head first
        if (--this.waitingForStore === 0) for (const key of [...this.queues.keys()]) this.sendHead(key);
      },
    });
  }

  /**
   * A reply's attempt, recorded with the `delivery.failed` events of a failure for good in the same write
   * (docs/callbacks.md, "Delivery"); those events are then sent as any entry is.
   */
  private async recordReply(a: DeliveryAttempt, log: Logger): Promise<void> {
    const gen = this.generations.current;
    if (a.status !== 'failed' || !gen.callbacks.wants('delivery.failed')) return this.record(a, log);
    const run = await untilStored(() => this.records.getRun(a.runId), { signal: this.shutdown.signal, logger: log, what: 'read a run' });
    const callbacks = deliveryFailedEvents(gen, run, a);
    await this.record(callbacks.length ? { ...a, callbacks } : a, log);
    for (const e of callbacks) this.notify(e);
  }

  /** Holds its generation while it runs: a reload does not dispose what it is using. */
  private attempt(d: Delivery): Promise<AttemptOutcome> {
    return this.generations.use((gen) => {
      if (d.event) {
        const log = this.logger.child({ runId: d.runId, callback: d.channel, event: d.event, attempt: d.attempts + 1 });
        return attemptCallback(gen, d, log, this.callbackContext, this.resolve);
      }
      const log = this.logger.child({ runId: d.runId, channel: d.channel, attempt: d.attempts + 1 });
      return attemptDelivery(gen, d, log, this.attemptContext);
    });
  }
}
