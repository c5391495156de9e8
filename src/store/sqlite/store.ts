/**
 * The SQLite store (node:sqlite, WAL). Reads run synchronously on the one
 * connection; writes go through a group-commit queue so that many requests
 * share one transaction, and each write's promise resolves after COMMIT.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { StoreInUseError, StoreSchemaError } from '../errors.ts';
import { contractError } from './errors.ts';
import type {
  AcceptBatch,
  Accepted,
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
  RunOutcome,
  RunListOptions,
  SessionMessage,
  Store,
  StoreCounts,
  StoreHistogram,
  SystemEvent,
} from '../types.ts';
import { boundaryBytes } from './boundary.ts';
import { PendingEvents } from './events.ts';
import { RunQueue } from './queue.ts';
import { RunRows } from './runs.ts';
import { Meta } from './meta.ts';
import { KeptRequests } from './requests.ts';
import { Pruner } from './prune.ts';
import { LIST_WINDOW, newestFirst, type NewestFirst } from './pages.ts';
import { str, toDelivery, toEvent, toMessage, toNewRun, toRun, type Row } from './rows.ts';
import { openSchema } from './schema.ts';
import { statements, type Statements } from './statements.ts';
import { Tally } from './tally.ts';
import { WalPresync } from './wal-presync.ts';
import { WriteQueue } from './write-queue.ts';

export interface SqliteStoreOptions {
  path: string;
  /** `normal`: durable against process crashes (WAL); `full`: also against power loss (fsync per commit). */
  synchronous?: 'normal' | 'full';
  /**
   * `exclusive` (the default): the connection holds the file's lock from open to close, so another
   * process cannot open it and no transaction takes or releases file locks or reads shared memory.
   * `normal`: SQLite's own locking, so other processes (the sqlite3 shell, a backup) can read it live.
   */
  locking?: 'exclusive' | 'normal';
  /** How long opening waits for another process to release the file (default 5000 ms). */
  busyTimeoutMs?: number;
  /** The queue's clock, for leases and retries (default Date.now). */
  clock?: () => number;
}

const SQLITE_BUSY = 5;

export { LONG_TEXT } from './rows.ts';
export { StoreInUseError, StoreSchemaError };

export class SqliteStore implements Store {
  readonly driver = 'sqlite';
  readonly path: string;
  private readonly db: DatabaseSync;
  private readonly writes: WriteQueue;
  private readonly presync: WalPresync | undefined;
  private commitObserver: ((seconds: number) => void) | undefined;
  private readonly q: Statements;
  private readonly tally: Tally;
  private closed = false;
  private readonly meta: Meta;
  private readonly events: PendingEvents;
  private readonly runs: RunRows;
  private readonly requests: KeptRequests;
  private readonly pruner: Pruner;
  readonly queue: RunQueue;

  constructor(opts: SqliteStoreOptions) {
    this.path = opts.path;
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    this.db = new DatabaseSync(opts.path);
    // The locking mode comes before the first read: in exclusive mode SQLite then never creates the
    // shared-memory index (`-shm`) and keeps the WAL's index in this process's memory.
    this.db.exec(
      `PRAGMA busy_timeout = ${opts.busyTimeoutMs ?? 5000}; PRAGMA locking_mode = ${opts.locking === 'normal' ? 'NORMAL' : 'EXCLUSIVE'};`,
    );
    try {
      this.db.exec(
        `PRAGMA journal_mode = WAL; PRAGMA synchronous = ${opts.synchronous === 'full' ? 'FULL' : 'NORMAL'}; PRAGMA foreign_keys = OFF;`,
      );
      openSchema(this.db, opts.path);
    } catch (err) {
      this.db.close();
      if ((err as { errcode?: number }).errcode === SQLITE_BUSY)
        throw new StoreInUseError(
          `database ${opts.path} is in use by another process (is another hook-intake serving this data directory?)`,
          { cause: err },
        );
      throw err;
    }
    this.tally = new Tally(this.db);
    this.q = statements(this.db);
    this.meta = new Meta(this.q);
    this.events = new PendingEvents(this.q, this.tally, this.meta, () => this.closed);
    this.runs = new RunRows(this.q);
    this.requests = new KeptRequests(this.db);
    this.pruner = new Pruner(this.db, this.tally);
    this.queue = new RunQueue({ q: this.q, runs: this.runs, clock: opts.clock ?? Date.now, write: (fn) => this.writes.run(fn) });
    // With `full`, every commit syncs the WAL itself; in memory there is no file to sync.
    const presync = (this.presync =
      opts.path === ':memory:' || opts.synchronous === 'full' ? undefined : new WalPresync(`${opts.path}-wal`));
    this.writes = new WriteQueue(
      this.db,
      () => {
        this.meta.forget();
        this.tally.rolledBack();
        this.runs.rolledBack();
        this.queue.rolledBack();
        this.pruner.rolledBack();
      },
      (ms) => {
        this.runs.committed();
        this.queue.committed();
        this.tally.committed();
        presync?.committed();
        this.commitObserver?.(ms / 1000);
      },
    );
  }

  accept(batch: AcceptBatch): Promise<Accepted> {
    return this.writes.run(() => {
      for (const e of batch.events) this.runs.insertEvent(e);
      for (const r of batch.runs) this.queue.accepted(this.runs.insertRun(r, 'queued', null)[0]);
      const i = batch.idempotency;
      if (i) this.q.putIdem.run(i.key, i.status, i.body, i.createdAt, i.expiresAt);
      return batch.request ? { requestId: this.requests.insert(batch.request) } : {};
    });
  }

  async getIdempotency(key: string, now: number): Promise<IdempotencyRecord | undefined> {
    try {
      const r = this.q.getIdem.get(key, now) as Row | undefined;
      return r
        ? {
            key: String(r.key),
            status: Number(r.status),
            body: String(r.body),
            createdAt: Number(r.created_at),
            expiresAt: Number(r.expires_at),
          }
        : undefined;
    } catch (err) {
      throw contractError(err);
    }
  }

  pruneIdempotency(now: number): Promise<number> {
    return this.writes.run(() => Number(this.q.pruneIdem.run(now).changes));
  }

  async getRun(id: string): Promise<Run | undefined> {
    try {
      const r = this.q.getRun.get(id) as Row | undefined;
      return r ? toRun(r) : undefined;
    } catch (err) {
      throw contractError(err);
    }
  }

  async getRequest(id: string): Promise<KeptRequest | undefined> {
    try {
      return this.requests.get(id);
    } catch (err) {
      throw contractError(err);
    }
  }

  async listRequests(opts: RequestListOptions): Promise<KeptRequestSummary[]> {
    try {
      const list = this.requests.list(opts);
      return list ? await this.newestFirst(list) : [];
    } catch (err) {
      throw contractError(err);
    }
  }

  async queuedRun(id: string): Promise<NewRun | undefined> {
    try {
      const r = this.q.queuedRun.get(id) as unknown[] | undefined;
      if (!r) return undefined;
      const run = toNewRun(r);
      if (r[17] !== null) this.runs.remember(id, run.message, Number(r[17]), str(r[16]));
      return run;
    } catch (err) {
      throw contractError(err);
    }
  }

  /** One past the highest key of `table`'s rows (`end*` statements). */
  private end(stmt: 'endEvents' | 'endRuns' | 'endMessages'): number {
    return Number((this.q[stmt].get() as { n: number }).n);
  }

  /** A list read in pieces (pages.ts), stopped if the store closes meanwhile. */
  private newestFirst<T>(l: Omit<NewestFirst<T>, 'open'>): Promise<T[]> {
    return newestFirst({
      ...l,
      open: () => {
        if (this.closed) throw new Error('the store was closed during a read');
      },
    });
  }

  async listRuns(opts: RunListOptions): Promise<Run[]> {
    try {
      if (opts.hook !== undefined || opts.session !== undefined) {
        const status = opts.status ?? null;
        const hook = opts.hook ?? null;
        const session = opts.session ?? null;
        return await this.newestFirst({
          stmt: this.q.listRunsFiltered,
          args: [status, status, hook, hook, session, session],
          key: 'seq',
          floor: 0,
          end: this.end('endRuns'),
          window: LIST_WINDOW,
          limit: opts.limit,
          map: toRun,
        });
      }
      const unfinished = opts.status === 'queued' || opts.status === 'running';
      const stmt = !opts.status ? this.q.listRuns : unfinished ? this.q.listUnfinishedByStatus : this.q.listRunsByStatus;
      return await this.newestFirst({
        stmt,
        args: opts.status ? [opts.status] : [],
        key: 'seq',
        floor: 0,
        end: this.end('endRuns'),
        // the index of unfinished runs holds only the rows that pass
        window: unfinished ? Infinity : LIST_WINDOW,
        limit: opts.limit,
        map: toRun,
      });
    } catch (err) {
      throw contractError(err);
    }
  }

  async listMessages(sessionKey: string, opts: ListOptions): Promise<SessionMessage[]> {
    try {
      // the session's rows through its index, whatever the other sessions hold
      return await this.newestFirst({
        stmt: this.q.listMessages,
        args: [sessionKey],
        key: 'id',
        floor: 0,
        end: this.end('endMessages'),
        window: Infinity,
        limit: opts.limit,
        map: toMessage,
      });
    } catch (err) {
      throw contractError(err);
    }
  }

  async transcript(sessionKey: string, limit: number, maxBytes = Infinity): Promise<SessionMessage[]> {
    try {
      const sizes = this.q.transcriptSizes.all(sessionKey, limit) as { id: number; bytes: number; wrap: string | null }[];
      // as read back: a packed boundary's lines count too
      const bytes = (s: { bytes: number; wrap: string | null }) => s.bytes + (s.wrap === null ? 0 : boundaryBytes(s.wrap));
      // newest first: keep messages while the total stays within maxBytes (the newest always)
      let from: number | undefined;
      let total = 0;
      for (const s of sizes) {
        const b = bytes(s);
        if (from !== undefined && total + b > maxBytes) return this.transcriptFrom(sessionKey, from);
        total += b;
        from = s.id;
      }
      return from === undefined ? [] : this.transcriptFrom(sessionKey, from);
    } catch (err) {
      throw contractError(err);
    }
  }

  private transcriptFrom(sessionKey: string, from: number): SessionMessage[] {
    return (this.q.transcriptFrom.all(sessionKey, from) as Row[]).map(toMessage);
  }

  async listEvents(opts: ListOptions & { status?: EventStatus }): Promise<SystemEvent[]> {
    try {
      const from = this.meta.pendingFrom();
      const [stmt, args, floor] =
        opts.status === 'pending'
          ? [this.q.listPendingEvents, [], from]
          : opts.status === 'consumed'
            ? [this.q.listConsumedEvents, [from], 0]
            : [this.q.listEvents, [], 0];
      return await this.newestFirst({
        stmt,
        args,
        key: 'seq',
        floor,
        end: this.end('endEvents'),
        window: LIST_WINDOW,
        limit: opts.limit,
        map: toEvent,
      });
    } catch (err) {
      throw contractError(err);
    }
  }

  async pendingEvents(limit: number): Promise<SystemEvent[]> {
    try {
      return await this.events.pending(limit);
    } catch (err) {
      throw contractError(err);
    }
  }

  async pendingBacklog(limit: number): Promise<PendingBacklog> {
    try {
      return await this.events.backlog(limit);
    } catch (err) {
      throw contractError(err);
    }
  }

  async counts(): Promise<StoreCounts> {
    try {
      await this.tally.catchUp(
        () => this.meta.pendingFrom(),
        () => this.closed,
      );
      return await this.tally.read();
    } catch (err) {
      throw contractError(err);
    }
  }

  async unfinishedRuns(): Promise<Run[]> {
    try {
      return (this.q.unfinished.all() as Row[]).map(toRun);
    } catch (err) {
      throw contractError(err);
    }
  }

  insertHeartbeat(run: NewRun, startedAt: number): Promise<void> {
    return this.writes.run(() => this.runs.insertHeartbeat(run, startedAt));
  }

  startRun(id: string, at: number): Promise<void> {
    this.runs.queueStart(id, at);
    return this.writes.run(() => this.runs.writeStart(id, at));
  }

  requeueRun(id: string, opts: { refundAttempt: boolean }): Promise<void> {
    this.runs.forget(id);
    return this.writes.run(() => {
      this.q.requeueRun.run(opts.refundAttempt ? 1 : 0, id);
    });
  }

  finishRun(o: RunOutcome): Promise<void> {
    this.runs.queueFinish(o.id);
    const done = this.writes.run(() => {
      this.runs.writeFinish(o);
      if (o.consumedEventIds?.length) this.events.consume(o.consumedEventIds, o.id, o.finishedAt, o.consumeOlder === true);
    });
    done.then(
      () => this.runs.forget(o.id),
      () => {},
    );
    const consumed = o.consumedEventIds;
    if (!consumed?.length) return done;
    return done.then(() => this.events.committed(consumed));
  }

  async dueDeliveries(now: number, limit: number): Promise<Delivery[]> {
    try {
      return (this.q.dueOutbox.all(now, limit) as Row[]).map(toDelivery);
    } catch (err) {
      throw contractError(err);
    }
  }

  failInterruptedHeartbeats(at: number, reason: string): Promise<number> {
    return this.writes.run(() => Number(this.q.failHeartbeats.run(at, reason).changes));
  }

  async nextDeliveryAt(after?: number): Promise<number | undefined> {
    try {
      const t = (this.q.nextOutbox.get(after ?? Number.MIN_SAFE_INTEGER) as { t: number | null }).t;
      return t === null ? undefined : Number(t);
    } catch (err) {
      throw contractError(err);
    }
  }

  recordDelivery(a: DeliveryAttempt): Promise<void> {
    return this.writes.run(() => {
      // the run's delivery state is this row (runs.delivery_id): the run's own row is not rewritten
      const setParts = a.parts !== undefined ? 1 : 0;
      const json = a.parts === undefined ? null : JSON.stringify(a.parts);
      const ref = this.runs.longText(json);
      const setAmbiguous = a.ambiguousPart !== undefined ? 1 : 0;
      this.q.updateOutbox.run(
        a.status,
        a.attempts,
        a.nextAttemptAt ?? a.at,
        a.error ?? null,
        a.at,
        a.sentParts ?? null,
        setParts,
        ref === null ? json : null,
        setParts,
        ref,
        setAmbiguous,
        a.ambiguousPart ?? null,
        a.id,
      );
      // the main route changes rarely: write it only when it does
      if (a.status === 'sent' && a.route) this.meta.put('mainRoute', JSON.stringify(a.route));
    });
  }

  redeliver(entry: NewDelivery): Promise<void> {
    return this.writes.run(() => this.runs.writeRedelivery(entry));
  }

  prune(before: PruneBefore, limit: number): Promise<PruneCounts & { more: boolean }> {
    return this.writes.run(() => this.pruner.batch(before, limit, this.meta.pendingFrom()));
  }

  async countPrunable(before: PruneBefore): Promise<PruneCounts> {
    try {
      return this.pruner.count(before, this.meta.pendingFrom());
    } catch (err) {
      throw contractError(err);
    }
  }

  async getMeta(key: string): Promise<string | undefined> {
    try {
      return this.meta.get(key);
    } catch (err) {
      throw contractError(err);
    }
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.writes.run(() => this.meta.put(key, value));
  }

  histograms(): StoreHistogram[] {
    return [
      {
        name: 'hook_intake_store_commit_seconds',
        help: 'Time each group commit of the store took, its statements and COMMIT together; the commit that takes the write-ahead log past 1,000 pages also runs a checkpoint, the slowest kind.',
        buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
        observe: (fn) => (this.commitObserver = fn),
      },
    ];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.writes.drain();
    this.closed = true;
    this.presync?.close();
    this.db.close();
  }
}
