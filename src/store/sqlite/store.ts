/**
 * The SQLite store (node:sqlite, WAL): one process owns the file (see `locking`), so its queues,
 * counters and console sessions live in that process's memory, and only the records are written.
 * Opens the database, makes the parts that share its one connection (statements, the group commit,
 * caches beside the rows) and hands them to the roles: records.ts, queue.ts (runs), tasks.ts,
 * requests.ts, and the in-process counters and sessions (../local/).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { StoreInUseError, StoreSchemaError } from '../errors.ts';
import { LocalCounters } from '../local/counters.ts';
import { LocalRunEnds } from '../local/ends.ts';
import { LocalSessions } from '../local/sessions.ts';
import type { Store, StoreCapabilities } from '../roles.ts';
import type { StoreHistogram } from '../types.ts';
import { PendingEvents } from './events.ts';
import { Meta } from './meta.ts';
import { Pruner } from './prune.ts';
import { SqliteRunQueue } from './queue.ts';
import { SqliteRecords } from './records.ts';
import { RequestRows, SqliteKeptRequests } from './requests.ts';
import { RunRows } from './runs.ts';
import { openSchema } from './schema.ts';
import { statements } from './statements.ts';
import { Tally } from './tally.ts';
import { SqliteTaskQueue } from './tasks.ts';
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
  /** How long opening, and with `locking: normal` each write, waits for another process to release the file (default 5000 ms). */
  busyTimeoutMs?: number;
  /** The queues' and sessions' clock, for leases, retries and times to live (default Date.now). */
  clock?: () => number;
}

const SQLITE_BUSY = 5;
const NOTHING_TO_POLL = () => {};

export { LONG_TEXT } from './rows.ts';
export { StoreInUseError, StoreSchemaError };

export class SqliteStore implements Store {
  readonly driver = 'sqlite';
  readonly capabilities: StoreCapabilities = { sharedByProcesses: false };
  readonly path: string;
  readonly records: SqliteRecords;
  readonly runs: SqliteRunQueue;
  readonly tasks: SqliteTaskQueue;
  readonly counters = new LocalCounters();
  readonly sessions: LocalSessions;
  readonly requests: SqliteKeptRequests;
  readonly ends = new LocalRunEnds();
  private readonly db: DatabaseSync;
  private readonly writes: WriteQueue;
  private readonly presync: WalPresync | undefined;
  private commitObserver: ((seconds: number) => void) | undefined;
  private closed = false;

  constructor(opts: SqliteStoreOptions) {
    this.path = opts.path;
    const clock = opts.clock ?? Date.now;
    this.db = openDatabase(opts);
    const isClosed = () => this.closed;
    const tally = new Tally(this.db);
    const q = statements(this.db);
    const meta = new Meta(q);
    const events = new PendingEvents(q, tally, meta, isClosed);
    const runRows = new RunRows(q);
    const requestRows = new RequestRows(this.db);
    const pruner = new Pruner(this.db, tally);
    const queue = (this.runs = new SqliteRunQueue({ q, runs: runRows, clock, write: (fn) => this.writes.run(fn) }));
    this.tasks = new SqliteTaskQueue(clock);
    this.sessions = new LocalSessions({ clock });
    this.requests = new SqliteKeptRequests(requestRows, isClosed);
    // With `full`, every commit syncs the WAL itself; in memory there is no file to sync.
    const presync = (this.presync =
      opts.path === ':memory:' || opts.synchronous === 'full' ? undefined : new WalPresync(`${opts.path}-wal`));
    const writes = (this.writes = new WriteQueue(
      this.db,
      () => {
        meta.forget();
        tally.rolledBack();
        runRows.rolledBack();
        queue.rolledBack();
        pruner.rolledBack();
      },
      (ms) => {
        runRows.committed();
        queue.committed();
        tally.committed();
        presync?.committed();
        this.commitObserver?.(ms / 1000);
      },
    ));
    this.records = new SqliteRecords({
      q,
      writes,
      tally,
      meta,
      events,
      runs: runRows,
      requests: requestRows,
      pruner,
      queue,
      closed: isClosed,
      ends: this.ends,
    });
  }

  /** One process owns the file: there is no other to take over from, so `onWork` is never called. */
  pollTakeovers(_onWork: () => void): () => void {
    return NOTHING_TO_POLL;
  }

  startupWarnings(): Promise<string[]> {
    return Promise.resolve([]);
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

/** The database in WAL mode with the store's locking, its schema checked (or made); a file held by another process is `StoreInUseError`. */
function openDatabase(opts: SqliteStoreOptions): DatabaseSync {
  if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
  const db = new DatabaseSync(opts.path);
  // The locking mode comes before the first read: in exclusive mode SQLite then never creates the
  // shared-memory index (`-shm`) and keeps the WAL's index in this process's memory.
  db.exec(
    `PRAGMA busy_timeout = ${opts.busyTimeoutMs ?? 5000}; PRAGMA locking_mode = ${opts.locking === 'normal' ? 'NORMAL' : 'EXCLUSIVE'};`,
  );
  try {
    db.exec(
      `PRAGMA journal_mode = WAL; PRAGMA synchronous = ${opts.synchronous === 'full' ? 'FULL' : 'NORMAL'}; PRAGMA foreign_keys = OFF;`,
    );
    openSchema(db, opts.path);
  } catch (err) {
    db.close();
    if ((err as { errcode?: number }).errcode === SQLITE_BUSY)
      throw new StoreInUseError(
        `database ${opts.path} is in use by another process (is another hook-intake serving this data directory?)`,
        {
          cause: err,
        },
      );
    throw err;
  }
  return db;
}
