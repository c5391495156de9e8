/**
 * Group commit for a synchronous SQLite connection. Writes queued during one
 * turn of the event loop run in a single transaction at the next `setImmediate`;
 * each caller's promise settles after COMMIT, so "answered" implies "committed".
 *
 * If the shared transaction fails, it is rolled back and every write is
 * retried in a transaction of its own, so one bad write cannot sink the others.
 * A failure of the disk itself (full, I/O error) fails them all; a later flush
 * tries again from a clean state, however the failed one ended. A write rejects
 * with the storage contract's error where its failure is one (errors.ts).
 *
 * A write may carry a deadline (a request's `storage.timeoutSeconds`): the commit
 * runs on the event loop, so a stalled disk holds every turn, and a write that
 * waited past its deadline behind it is refused (`StorageUnavailableError`)
 * instead of committed: its request has been answered 503 meanwhile, and its
 * sender will send it again (docs/redis.md, "Timeouts").
 */
import type { DatabaseSync } from 'node:sqlite';
import { StorageUnavailableError } from '../errors.ts';
import { onNextTurn } from '../../util/next-turn.ts';
import { contractError } from './errors.ts';

interface Pending {
  fn: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  /** Date.now past which it is not committed. */
  deadline: number | undefined;
}

export class WriteQueue {
  /** The writes of this turn, run at the next; none while nothing is scheduled. */
  private pending: Pending[] = [];
  private idle: (() => void)[] = [];
  /** Why the last transaction could not be ended, while it is still open. */
  private stuck: unknown;

  private readonly db: DatabaseSync;
  private readonly onRollback: () => void;
  private readonly onCommit: (ms: number) => void;
  /**
   * `onRollback` runs after any rollback: state a write cached beside the database is stale then.
   * `onCommit` runs after each COMMIT, before the writes' promises settle, with how long the
   * transaction took from BEGIN to the end of COMMIT (a checkpoint SQLite runs inside the commit included).
   */
  constructor(db: DatabaseSync, onRollback: () => void = () => {}, onCommit: (ms: number) => void = () => {}) {
    this.db = db;
    this.onRollback = onRollback;
    this.onCommit = onCommit;
  }

  run<T>(fn: () => T, deadline?: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject, deadline });
      this.schedule();
    });
  }

  /** Resolves once everything queued so far has been committed. */
  drain(): Promise<void> {
    if (!this.pending.length) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  private readonly schedule = onNextTurn(() => this.flush());

  private readonly flush = (): void => {
    const batch = this.timely(this.pending);
    this.pending = [];
    if (!batch.length) return this.settleIdle();
    const results: unknown[] = [];
    const t0 = performance.now();
    try {
      // a transaction a failed ROLLBACK left open would refuse every BEGIN: end it first
      if (this.db.isTransaction && !this.rollback()) throw this.stuck;
      this.db.exec('BEGIN IMMEDIATE');
      for (const w of batch) results.push(w.fn());
      this.db.exec('COMMIT');
    } catch (err) {
      if (this.rollback()) for (const w of batch) this.runAlone(w);
      else {
        // the disk fails even to roll back: no write can succeed alone either
        this.stuck = err;
        for (const w of batch) w.reject(contractError(err));
      }
      this.settleIdle();
      return;
    }
    this.onCommit(performance.now() - t0);
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]);
    this.settleIdle();
  };

  /** The writes still in time; the others are refused (a stall of the loop kept them past their deadline). */
  private timely(writes: Pending[]): Pending[] {
    const now = Date.now();
    const late = (w: Pending) => w.deadline !== undefined && w.deadline <= now;
    if (!writes.some(late)) return writes;
    for (const w of writes)
      if (late(w)) w.reject(new StorageUnavailableError('the write waited past its deadline behind the disk; it was not stored'));
    return writes.filter((w) => !late(w));
  }

  private runAlone(w: Pending): void {
    const t0 = performance.now();
    try {
      if (this.db.isTransaction && !this.rollback()) throw this.stuck;
      this.db.exec('BEGIN IMMEDIATE');
      const v = w.fn();
      this.db.exec('COMMIT');
      this.onCommit(performance.now() - t0);
      w.resolve(v);
    } catch (err) {
      if (!this.rollback()) this.stuck = err;
      w.reject(contractError(err));
    }
  }

  /**
   * Ends a failed transaction; false when it is still open. SQLite may have rolled it back itself
   * (it does on a full disk or an I/O error), and ROLLBACK may fail on a failing disk too: that
   * error must not escape the flush, where nothing would catch it; the next flush tries again.
   */
  private rollback(): boolean {
    try {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
    } catch {
      // left open: reported by the caller
    }
    this.onRollback();
    return !this.db.isTransaction;
  }

  private settleIdle(): void {
    if (this.pending.length || !this.idle.length) return;
    const waiters = this.idle;
    this.idle = [];
    for (const r of waiters) r();
  }
}
