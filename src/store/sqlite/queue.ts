/**
 * The queue of runs (`RunQueue`) over the runs table. One process owns the file (see
 * SqliteStoreOptions.locking), so the queue lives in its memory and a claim needs no lock; the table
 * is what survives a restart: a run `queued` or `running` there is in the queue again at open.
 *
 * A backlog costs numbers, not objects: the seqs of runs not looked at yet wait in a NumberFifo (a
 * range of consecutive seqs is two slots). A run's row is read when the queue comes to it, which gives
 * its session key (the queue's key) and the run a claim carries. Only keys with a run looked at and
 * not completed have an entry (`heads`): the claimed runs, those waiting for a retry or given back,
 * and the seqs that came up while an earlier run of their key was still under way.
 *
 * Nothing is written for a claim, a lease, `complete` or `fail`: the runner stores a run's start
 * (`running`, one more attempt) and its outcome, which is all a restart needs. At open a `running`
 * run's lease is taken to have run out, and its stored starts are its attempts. `release` writes the
 * run back to `queued` with its attempt given back. A retry's time and error are kept in memory only:
 * after a restart such a run is due at once.
 */
import type { RunQueue } from '../roles.ts';
import type { Claim, NewRun } from '../types.ts';
import { contractError } from './errors.ts';
import { NumberFifo } from './number-fifo.ts';
import { QUEUED, toNewRun } from './rows.ts';
import type { RunRows } from './runs.ts';
import type { Statements } from './statements.ts';
import { RecycledMap } from '../../util/recycled.ts';

/** The run of a key that the queue has looked at and that is not completed yet. */
interface Head {
  seq: number;
  /** Empty until its row has been read. */
  id: string;
  key: string;
  /** Claims counted in this process; -1 until claimed here (the row's stored starts count then). */
  attempts: number;
  lastError: string | null;
  /** Holding the lease; null while waiting. */
  worker: string | null;
  /** The lease's end while claimed; when due while waiting. */
  until: number;
  /** Seqs of the key's later runs, in order, that came up while this one was under way. */
  behind: NumberFifo | undefined;
}

/** Where a run's state and attempts sit in a claim read (after the QUEUED columns). */
const STATUS = QUEUED.length;
const ATTEMPTS = QUEUED.length + 1;
const MESSAGE_TEXT = 17;
const MESSAGE_WRAP = 16;
/** The first slots of a key's queue of later runs: most keys under way have none or a few. */
const BEHIND_SLOTS = 8;

export interface RunQueueDeps {
  q: Statements;
  runs: RunRows;
  clock: () => number;
  /** Runs a write in the store's write queue (resolves once committed). */
  write: (fn: () => void) => Promise<void>;
}

export class SqliteRunQueue implements RunQueue {
  private readonly q: Statements;
  private readonly runs: RunRows;
  private readonly clock: () => number;
  private readonly write: RunQueueDeps['write'];
  /** Seqs of runs not looked at yet, in the order accepted. */
  private readonly fresh = new NumberFifo();
  /** Seqs accepted by the transaction under way: queued once it commits. */
  private inTx: number[] = [];
  /** An entry per key with a run under way, and per run claimed: they come and go with each run (see util/recycled.ts). */
  private readonly heads = new RecycledMap<string, Head>();
  /** The claimed heads, by run id. */
  private readonly claimed = new RecycledMap<string, Head>();
  /** Runs waiting behind a head, and heads waiting (not claimed). */
  private parked = 0;

  constructor(deps: RunQueueDeps) {
    this.q = deps.q;
    this.runs = deps.runs;
    this.clock = deps.clock;
    this.write = deps.write;
    for (const r of this.q.unfinishedSeqs.iterate()) this.fresh.push(Number((r as unknown as unknown[])[0]));
  }

  /** Inside a write: a run `accept` stored, queued once the write commits. */
  accepted(seq: number): void {
    this.inTx.push(seq);
  }

  committed(): void {
    if (!this.inTx.length) return;
    for (const seq of this.inTx) this.fresh.push(seq);
    this.inTx = [];
  }

  rolledBack(): void {
    this.inTx = [];
  }

  async claim(worker: string, leaseMs: number, limit: number): Promise<Claim<NewRun>[]> {
    try {
      return this.claimNow(worker, leaseMs, limit);
    } catch (err) {
      throw contractError(err);
    }
  }

  private claimNow(worker: string, leaseMs: number, limit: number): Claim<NewRun>[] {
    const now = this.clock();
    const out: Claim<NewRun>[] = [];
    // runs looked at before: given back, failed, a lease run out, or next of their key
    if (this.heads.size > this.claimed.size || this.anyLapsed(now))
      for (const h of this.heads.values()) {
        if (out.length >= limit) break;
        if (h.until > now) continue;
        if (h.worker !== null) {
          // its lease ran out: the attempt counts
          this.claimed.delete(h.id);
          h.attempts++;
          this.parked++;
        }
        this.take(h, worker, now + leaseMs, out);
      }
    while (out.length < limit && this.fresh.length) {
      const seq = this.fresh.shift()!;
      const row = this.q.claimRun.get(seq) as unknown[] | undefined;
      if (!row || (row[STATUS] !== 'queued' && row[STATUS] !== 'running')) continue;
      const key = String(row[5]);
      const head = this.heads.get(key);
      if (head) {
        (head.behind ??= new NumberFifo(BEHIND_SLOTS)).push(seq);
        this.parked++;
        continue;
      }
      const h: Head = { seq, id: '', key, attempts: -1, lastError: null, worker: null, until: 0, behind: undefined };
      this.heads.set(key, h);
      this.parked++; // counted as waiting until `hand` claims it
      this.hand(h, row, worker, now + leaseMs, out);
    }
    return out;
  }

  private anyLapsed(now: number): boolean {
    for (const h of this.claimed.values()) if (h.until <= now) return true;
    return false;
  }

  /** A waiting head, claimed: its row read again (a run that ended meanwhile gives way to the next of its key). */
  private take(h: Head, worker: string, until: number, out: Claim<NewRun>[]): void {
    for (;;) {
      const row = this.q.claimRun.get(h.seq) as unknown[] | undefined;
      if (row && (row[STATUS] === 'queued' || row[STATUS] === 'running')) return this.hand(h, row, worker, until, out);
      this.parked--;
      if (!this.next(h)) return;
    }
  }

  private hand(h: Head, row: unknown[], worker: string, until: number, out: Claim<NewRun>[]): void {
    const run = toNewRun(row);
    h.id = run.id;
    if (h.attempts < 0) h.attempts = Number(row[ATTEMPTS]);
    h.worker = worker;
    h.until = until;
    this.parked--;
    this.claimed.set(h.id, h);
    // the finish refers to the stored copy of a long message instead of writing it again
    if (row[MESSAGE_TEXT] !== null)
      this.runs.remember(run.id, run.message, Number(row[MESSAGE_TEXT]), row[MESSAGE_WRAP] === null ? null : String(row[MESSAGE_WRAP]));
    out.push({ id: run.id, key: h.key, attempts: h.attempts, lastError: h.lastError, leaseUntil: until, item: run });
  }

  /** The head's key moves on to its next run (true), or leaves the queue. */
  private next(h: Head): boolean {
    const seq = h.behind?.shift();
    if (seq === undefined) {
      this.heads.delete(h.key);
      return false;
    }
    // the next run waits as the head, due now (it was counted as parked already)
    h.seq = seq;
    h.id = '';
    h.attempts = -1;
    h.lastError = null;
    h.worker = null;
    h.until = 0;
    return true;
  }

  /** The head `worker` holds under `id`, if its lease was not taken over. */
  private held(id: string, worker: string): Head | undefined {
    const h = this.claimed.get(id);
    return h && h.worker === worker ? h : undefined;
  }

  async complete(id: string, worker: string): Promise<boolean> {
    const h = this.held(id, worker);
    if (!h) return false;
    this.claimed.delete(id);
    this.runs.forget(id);
    this.next(h);
    return true;
  }

  async fail(id: string, worker: string, opts: { retryAt?: number; error: string }): Promise<boolean> {
    const h = this.held(id, worker);
    if (!h) return false;
    this.wait(h, opts.retryAt ?? this.clock());
    h.attempts++;
    h.lastError = opts.error;
    return true;
  }

  async release(id: string, worker: string): Promise<boolean> {
    const h = this.held(id, worker);
    if (!h) return false;
    this.wait(h, this.clock());
    this.runs.forget(id);
    await this.write(() => {
      this.q.requeueRun.run(1, id);
    });
    return true;
  }

  async extend(id: string, worker: string, leaseMs: number): Promise<boolean> {
    const h = this.held(id, worker);
    if (!h) return false;
    h.until = this.clock() + leaseMs;
    return true;
  }

  /** A claimed head back to waiting, due at `at`. */
  private wait(h: Head, at: number): void {
    this.claimed.delete(h.id);
    h.worker = null;
    h.until = at;
    this.parked++;
  }

  size(): { waiting: number; claimed: number } {
    return { waiting: this.fresh.length + this.parked, claimed: this.claimed.size };
  }

  async nextAt(): Promise<number | undefined> {
    const now = this.clock();
    let at: number | undefined;
    for (const h of this.heads.values()) if ((h.worker !== null || h.until > now) && (at === undefined || h.until < at)) at = h.until;
    return at;
  }
}
