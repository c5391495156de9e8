/**
 * The storage contract, in small roles: a caller depends on the role it uses (the outbox on
 * `OutboxRecords`, retention on `RetentionRecords`), not on the whole store. A `Store` is its records
 * (`store.records`, the roles below composed), its two queues (`runs`, `tasks`), its counters, its
 * console sessions and its kept requests, and what a driver says of itself (`capabilities`).
 *
 * Every call is async so that a networked driver fits the same roles. A write resolves only once what
 * it wrote is durable: callers answer 2xx after `await`, never before. A call that fails because the
 * store cannot read or write for now rejects with `StorageUnavailableError`, one that would create
 * what exists with `ConflictError` (errors.ts); anything else is a bug.
 */
import type {
  AcceptBatch,
  Accepted,
  Claim,
  Delivery,
  DeliveryAttempt,
  EventStatus,
  IdempotencyRecord,
  KeptRequest,
  KeptRequestSummary,
  ListOptions,
  NewDelivery,
  NewRun,
  PendingBacklog,
  PruneBefore,
  PruneCounts,
  RequestListOptions,
  Run,
  RunListOptions,
  RunOutcome,
  SessionMessage,
  StoreCounts,
  StoreHistogram,
  SystemEvent,
  Task,
} from './types.ts';

/** The one atomic write of an accepted request. */
export interface AcceptRecords {
  /**
   * Commits an accepted request's events, runs, idempotency record, kept request and callback entries
   * atomically, and its runs' entries in the run queue with them. Rejects with `IdempotencyTakenError` when another request
   * (on this or another process sharing the store) stored the key first, with `ConflictError` when a run
   * id or a callback entry's id is taken: then nothing of the batch is stored. Resolves with the id the driver gave the kept
   * request (a UUIDv7 string, time-ordered by `receivedAt`).
   */
  accept(batch: AcceptBatch): Promise<Accepted>;
}

export interface RunRecords {
  getRun(id: string): Promise<Run | undefined>;
  /** The run as accepted, while it is `queued` (fewer columns than getRun; a claim of the run queue carries it too). */
  queuedRun(id: string): Promise<NewRun | undefined>;
  /** Newest first. */
  listRuns(opts: RunListOptions): Promise<Run[]>;
  /** Runs of kind `hook` left `queued` or `running`, oldest first. */
  unfinishedRuns(): Promise<Run[]>;
  /** Inserts a heartbeat run directly in state `running`. */
  insertHeartbeat(run: NewRun, startedAt: number): Promise<void>;
  startRun(id: string, at: number): Promise<void>;
  /** Back to `queued`. `refundAttempt` for a graceful shutdown, which is not the run's fault. */
  requeueRun(id: string, opts: { refundAttempt: boolean }): Promise<void>;
  /**
   * The run's outcome: its status and texts, transcript lines, summary event, delivery, consumed events and
   * callback entries, together; `ConflictError` when a callback entry's id is taken, and then none of it.
   */
  finishRun(outcome: RunOutcome): Promise<void>;
  /**
   * Marks heartbeat runs left `running` by a crash as `error` with `reason`
   * (their events were not consumed, so the next heartbeat sees them again).
   */
  failInterruptedHeartbeats(at: number, reason: string): Promise<number>;
}

export interface EventRecords {
  listEvents(opts: ListOptions & { status?: EventStatus }): Promise<SystemEvent[]>;
  /**
   * The event with this id, consumed or not, while it is kept. The dispatcher names events with UUIDv7 ids
   * made at their `createdAt`, which a driver may use to find one quickly; any other id may cost a scan.
   */
  getEvent(id: string): Promise<SystemEvent | undefined>;
  /** Oldest first. */
  pendingEvents(limit: number): Promise<SystemEvent[]>;
  /** The newest `limit` pending events and the older ones counted, however many are pending; counting does not hold the event loop. */
  pendingBacklog(limit: number): Promise<PendingBacklog>;
}

/** The sessions' conversations. */
export interface Transcripts {
  /** Newest first. */
  listMessages(sessionKey: string, opts: ListOptions): Promise<SessionMessage[]>;
  /** Oldest first; what an agent sees as its conversation: at most `limit` messages and, beyond the newest one, at most `maxBytes` of content. */
  transcript(sessionKey: string, limit: number, maxBytes?: number): Promise<SessionMessage[]>;
}

/** The delivery outbox. */
export interface OutboxRecords {
  dueDeliveries(now: number, limit: number): Promise<Delivery[]>;
  /** When the earliest pending delivery is due; with `after`, the earliest due strictly later than it. */
  nextDeliveryAt(after?: number): Promise<number | undefined>;
  /**
   * Records an attempt, with the callback entries it carries (`attempt.callbacks`) in the same write;
   * `ConflictError` when an entry's id is taken, and then none of it.
   */
  recordDelivery(attempt: DeliveryAttempt): Promise<void>;
  /**
   * A finished run's reply sent again (`POST /api/runs/<id>/redeliver`): a new pending outbox entry, which
   * becomes the run's delivery; the earlier entry stays as it was.
   */
  redeliver(entry: NewDelivery): Promise<void>;
  /** The entries that send a run's lifecycle events to callbacks (`Delivery.event`), oldest first. */
  runCallbacks(runId: string): Promise<Delivery[]>;
}

export interface IdempotencyRecords {
  getIdempotency(key: string, now: number): Promise<IdempotencyRecord | undefined>;
  pruneIdempotency(now: number): Promise<number>;
}

export interface RetentionRecords {
  /**
   * One small batch of pruning: removes at most `limit` rows of each kind older than `before` (see PruneBefore),
   * in one short write. `more` is false once every kind was looked through to its cutoff, so a caller loops
   * while it is true. A driver may keep the newest row of each kind whatever its age (SQLite does, so that its
   * keys never go back; Redis does not need to); `countPrunable` counts by the driver's own rules.
   */
  prune(before: PruneBefore, limit: number): Promise<PruneCounts & { more: boolean }>;
  /** What pruning everything now would remove (`hook-intake prune --dry-run`); may read whole tables. */
  countPrunable(before: PruneBefore): Promise<PruneCounts>;
}

/** Small settings the service keeps beside its records (the main route, `mainRoute`). */
export interface MetaRecords {
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
}

export interface RecordCounts {
  counts(): Promise<StoreCounts>;
}

/** Every record of the store (`Store.records`): the roles above, kept by one driver. */
export interface Records
  extends AcceptRecords,
    RunRecords,
    EventRecords,
    Transcripts,
    OutboxRecords,
    IdempotencyRecords,
    RetentionRecords,
    MetaRecords,
    RecordCounts {}

/**
 * The end of a claim, for either queue: a worker ends each claim with `complete`, `fail` or `release`.
 * A lease that runs out makes its item claimable again (the worker stopped or crashed); a worker whose
 * lease another claim has taken over gets `false`. Times are the driver's clock, in epoch milliseconds.
 */
export interface Leases {
  /** The work is done (its result already stored): the item leaves the queue, and the next of its key is due. */
  complete(id: string, worker: string): Promise<boolean>;
  /** This attempt failed: the item is due again at `retryAt` (now when absent), counted as an attempt. */
  fail(id: string, worker: string, opts: { retryAt?: number; error: string }): Promise<boolean>;
  /** The worker gives the item back unworked (it is stopping): due at once, and this claim is not counted. */
  release(id: string, worker: string): Promise<boolean>;
  /** The lease runs `leaseMs` from now (a long agent call). */
  extend(id: string, worker: string, leaseMs: number): Promise<boolean>;
}

/**
 * The runs to be worked on (`Store.runs`): every run `accept` stores is enqueued in the same atomic
 * write, keyed by its session key. A run of a key waits while an earlier one of the same key is claimed
 * or waits for its retry, so one session's runs are worked on in order, one at a time.
 */
export interface RunQueue extends Leases {
  /** Up to `limit` runs due now, each leased to `worker` for `leaseMs`, oldest first. */
  claim(worker: string, leaseMs: number, limit: number): Promise<Claim<NewRun>[]>;
  /** Runs waiting (due or not) and runs claimed, as this process sees them. */
  size(): { waiting: number; claimed: number };
  /** When the next run waiting for a time (a retry, a lease) becomes due; undefined when none does. */
  nextAt(): Promise<number | undefined>;
}

/** Work the runtime enqueues itself (`Store.tasks`): a session's heartbeat. */
export interface TaskQueue extends Leases {
  /**
   * Enqueues a task due at `runAt`. While a task of the same kind and key waits unclaimed, the two are
   * one: it stays, due at the earlier time. One enqueued while its key's task is claimed waits for that
   * one to end, as a run waits for the run of its key. Resolves with when the waiting task is due.
   */
  enqueue(task: Task, runAt: number): Promise<number>;
  /** Up to `limit` tasks of `kind` due now, each leased to `worker` for `leaseMs`: one per kind and key at a time. */
  claim(kind: Task['kind'], worker: string, leaseMs: number, limit: number): Promise<Claim<Task>[]>;
  /** When the next task of `kind` becomes claimable (due, or its lease runs out); undefined when there is none. */
  nextAt(kind: Task['kind']): Promise<number | undefined>;
}

/**
 * Counters in fixed windows (`Store.counters`): failed authentications and mapping rate limits. On a
 * store several processes share, every process counts in the same windows; on one a process owns, the
 * windows are in its memory.
 */
export interface Counters {
  /**
   * Counts one event for `key` and gives the window's count and start. A window starts with the first
   * event after the last one ended (`windowMs` after its start).
   */
  countInWindow(key: string, windowMs: number, now: number): Promise<{ count: number; start: number }>;
  /** Ends `key`'s window (a success after authentication failures). */
  resetCount(key: string): Promise<void>;
}

/**
 * The console's sessions (`Store.sessions`, src/auth/sessions.ts): values under keys, each gone after its
 * time to live. On a store several processes share, any of them takes a session another made.
 */
export interface Sessions {
  /** Sets `key`, gone after `ttlMs`; with `onlyIfKept`, only when it is still there (a use must not bring back a session signed out meanwhile). */
  put(key: string, value: string, ttlMs: number, onlyIfKept: boolean): Promise<void>;
  get(key: string): Promise<string | undefined>;
  delete(key: string): Promise<void>;
}

/** The request log (`Store.requests`): requests kept by `accept`. */
export interface KeptRequests {
  get(id: string): Promise<KeptRequest | undefined>;
  /** Newest first, without headers and bodies (a page of large bodies would be read whole only to be counted). */
  list(opts: RequestListOptions): Promise<KeptRequestSummary[]>;
}

/**
 * Word of runs that ended (`Store.ends`): a run finished, or its delivery ended (sent, skipped, failed), on
 * this process or, on a store several processes share, on any of them. A request waiting for its run's
 * outcome reads the run again when told; the word itself carries only the run's id.
 */
export interface RunEnds {
  /**
   * Calls `fn` with a run's id each time the run finishes or its delivery ends, once the promise has
   * resolved; with undefined when word may have been missed (a connection was lost meanwhile), so that every
   * run of interest is read again. A run may be told more than once. Resolves with a function that stops the calls.
   */
  listen(fn: (runId: string | undefined) => void): Promise<() => void>;
}

/**
 * A store read by a process that does not serve from it (`hook-intake replay` beside a running service,
 * docs/shadow.md): the request log and the runs and events its requests name. Nothing of it writes, and
 * opening it takes no lock a serving process would wait for.
 */
export interface StoreReader {
  readonly driver: string;
  readonly requests: KeptRequests;
  readonly records: Pick<RunRecords, 'getRun'> & Pick<EventRecords, 'getEvent'>;
  close(): Promise<void>;
}

/** What a driver is, for the parts of the service that differ with it. */
export interface StoreCapabilities {
  /**
   * Several processes share the store (Redis): each takes over what another left (`pollTakeovers`), and
   * counters and sessions are the service's, not the process's.
   */
  readonly sharedByProcesses: boolean;
}

export interface Store {
  readonly driver: string;
  readonly capabilities: StoreCapabilities;
  readonly records: Records;
  readonly runs: RunQueue;
  readonly tasks: TaskQueue;
  readonly counters: Counters;
  readonly sessions: Sessions;
  readonly requests: KeptRequests;
  readonly ends: RunEnds;
  /**
   * Calls `onWork` every so often while several processes share the store, so that this process takes
   * over what another one left when it stopped (claims whose lease ran out, deliveries it held). Returns a
   * function that stops the calls. A store one process owns never calls it.
   */
  pollTakeovers(onWork: () => void): () => void;
  /** What the operator should know of the store's settings at start (a Redis server that does not persist what it acknowledges). */
  startupWarnings(): Promise<string[]>;
  /** The driver's own figures for `/metrics` (none when it keeps none). */
  histograms(): StoreHistogram[];
  close(): Promise<void>;
}
