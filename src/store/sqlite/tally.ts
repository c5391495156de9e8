/**
 * The counts of events, runs and outbox entries by status (`RecordCounts.counts`), kept so that a read
 * costs what changed since the previous one, never the size of the tables, and the writes pay nothing.
 * Counting whole tables held the event loop for over a second per `/metrics` scrape with two million
 * pending events (measured: docs/performance.md, "Reads on a large store").
 *
 * Each table's rows below a boundary (`below`) are tallied; a read first counts the rows added since
 * (rows are never deleted, so rowids only grow), TALLY_SLICE rowids per turn of the event loop.
 *
 * A run or a delivery changes status until it reaches a final one (a run `ok`, `error` or `timeout`; a
 * delivery `sent` or `failed`), and no write reports that here: a tallied row not yet final is kept by
 * rowid in `live`, and each read looks it up again, LIVE_SLICE per turn, until it is final. The rows under
 * way are the runner's queue and the outbox's, so a read costs about as much as those are long.
 *
 * Events change only when a heartbeat consumes them, which the store reports here from inside the
 * write (`consumedRange`, `consumedRow`); the change takes effect when the write commits (`committed`),
 * and a rollback drops it (`rolledBack`). An event below the pending watermark is consumed, even when a
 * consumed range rather than its row says so.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { StoreCounts } from '../types.ts';

/** Rowids one slice of new rows counts; a slice over the largest rows stays within a few milliseconds. */
export const TALLY_SLICE = 10_000;

/** Rows under way looked up again per turn. */
export const LIVE_SLICE = 2_000;

const next = () => new Promise((r) => setImmediate(r));

/** Runs and deliveries: final statuses counted once, the others kept in `live`. */
class Changing {
  below = 1;
  readonly final = new Map<string, number>();
  /** Rowids below `below` whose status was not final when last seen, in order. */
  live: number[] = [];
  /** The `live` rows by status as last seen. */
  current = new Map<string, number>();

  private readonly q: { end: StatementSync; slice: StatementSync; underWay: StatementSync; statusAt: StatementSync };
  private readonly underWay: ReadonlySet<string>;

  constructor(q: Changing['q'], underWay: ReadonlySet<string>) {
    this.q = q;
    this.underWay = underWay;
  }

  /** Counts the rows added since the last call, then looks at the rows under way again. */
  async catchUp(closed: () => boolean): Promise<void> {
    for (;;) {
      const to = Math.min(Number((this.q.end.get() as { n: number }).n), this.below + TALLY_SLICE);
      if (this.below >= to || closed()) break;
      let under = 0;
      for (const r of this.q.slice.all(this.below, to) as { status: string; n: number }[]) {
        if (this.underWay.has(r.status)) under += Number(r.n);
        else this.final.set(r.status, (this.final.get(r.status) ?? 0) + Number(r.n));
      }
      if (under) for (const r of this.q.underWay.all(this.below, to) as { k: number }[]) this.live.push(Number(r.k));
      this.below = to;
      await next();
    }
    const live: number[] = [];
    const current = new Map<string, number>();
    for (let i = 0; i < this.live.length; i++) {
      if (i > 0 && i % LIVE_SLICE === 0) await next();
      if (closed()) return;
      const k = this.live[i]!;
      const row = this.q.statusAt.get(k) as { status: string } | undefined;
      if (!row) continue; // pruned: it was final, and counted as it left (`pruned`) or never
      const status = String(row.status);
      if (this.underWay.has(status)) {
        live.push(k);
        current.set(status, (current.get(status) ?? 0) + 1);
      } else this.final.set(status, (this.final.get(status) ?? 0) + 1);
    }
    this.live = live;
    this.current = current;
  }

  count(status: string): number {
    return (this.final.get(status) ?? 0) + (this.current.get(status) ?? 0);
  }

  /** A row deleted by retention, in its final `status`: no longer counted. */
  pruned(k: number, status: string): void {
    if (k >= this.below) return; // never counted
    const at = this.live.indexOf(k);
    if (at !== -1)
      this.live.splice(at, 1); // counted under way, not final: the next read drops it
    else this.final.set(status, (this.final.get(status) ?? 0) - 1);
  }
}

export class Tally {
  private readonly q: Record<string, StatementSync>;
  private readonly runs: Changing;
  private readonly outbox: Changing;
  private readonly events = { below: 1, pending: 0, consumed: 0 };
  /** Tallied events the write in progress consumed (`committed` applies them). */
  private staged = 0;
  /** Rows the write in progress pruned (`committed` applies them). */
  private prunedRows: { table: 'runs' | 'outbox' | 'events'; k: number; status: string }[] = [];
  private catching: Promise<void> | undefined;

  constructor(db: DatabaseSync) {
    const p = (sql: string) => db.prepare(sql);
    this.q = {
      endEvents: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM events'),
      // a slice [from, to): an event below the watermark is consumed whatever its row says
      sliceEvents: p(`SELECT CASE WHEN seq < ? OR status = 'consumed' THEN 'consumed' ELSE status END AS status, count(*) AS n
        FROM events WHERE seq >= ? AND seq < ? GROUP BY 1`),
    };
    this.runs = new Changing(
      {
        end: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM runs'),
        slice: p('SELECT status, count(*) AS n FROM runs WHERE seq >= ? AND seq < ? GROUP BY status'),
        underWay: p(
          "SELECT seq AS k FROM runs INDEXED BY runs_unfinished WHERE seq >= ? AND seq < ? AND status IN ('queued', 'running') ORDER BY seq",
        ),
        statusAt: p('SELECT status FROM runs WHERE seq = ?'),
      },
      new Set(['queued', 'running']),
    );
    this.outbox = new Changing(
      {
        end: p('SELECT coalesce(max(rowid), 0) + 1 AS n FROM outbox'),
        slice: p('SELECT status, count(*) AS n FROM outbox WHERE rowid >= ? AND rowid < ? GROUP BY status'),
        underWay: p("SELECT rowid AS k FROM outbox WHERE rowid >= ? AND rowid < ? AND status = 'pending' ORDER BY rowid"),
        statusAt: p('SELECT status FROM outbox WHERE rowid = ?'),
      },
      new Set(['pending']),
    );
  }

  /** Brings the counts up to date, across turns of the event loop; `watermark` is the pending events' watermark as committed. Calls share one pass. */
  catchUp(watermark: () => number, closed: () => boolean): Promise<void> {
    this.catching ??= (async () => {
      const e = this.events;
      for (;;) {
        const to = Math.min(Number((this.q.endEvents!.get() as { n: number }).n), e.below + TALLY_SLICE);
        if (e.below >= to || closed()) break;
        for (const r of this.q.sliceEvents!.all(watermark(), e.below, to) as { status: string; n: number }[])
          if (r.status === 'pending') e.pending += Number(r.n);
          else e.consumed += Number(r.n);
        e.below = to;
        await next();
      }
      await this.runs.catchUp(closed);
      await this.outbox.catchUp(closed);
    })().finally(() => (this.catching = undefined));
    return this.catching;
  }

  /**
   * Inside a write: a consumed range of events ending at seq `last` and starting at the oldest pending one,
   * which holds `consumed` pending events. Tallied pending events all lie from the watermark up: a range
   * that reaches the boundary takes every one of them, else exactly its own; those above the boundary are
   * counted consumed when the next read reaches them.
   */
  consumedRange(last: number, consumed: number): void {
    this.staged += last + 1 >= this.events.below ? this.events.pending - this.staged : consumed;
  }

  /** Inside a write: the pending event at `seq` marked consumed by its row. */
  consumedRow(seq: number): void {
    if (seq < this.events.below) this.staged++;
  }

  /** Inside a write: a row retention deleted, in its final status (an event: consumed). */
  pruned(table: 'runs' | 'outbox' | 'events', k: number, status: string): void {
    this.prunedRows.push({ table, k, status });
  }

  committed(): void {
    this.events.pending -= this.staged;
    this.events.consumed += this.staged;
    this.staged = 0;
    for (const p of this.prunedRows) {
      if (p.table === 'events') {
        if (p.k < this.events.below) this.events.consumed--;
      } else this[p.table].pruned(p.k, p.status);
    }
    this.prunedRows = [];
  }

  rolledBack(): void {
    this.staged = 0;
    this.prunedRows = [];
  }

  /** The counts as tallied (after `catchUp`, every row). */
  read(): StoreCounts {
    const r = this.runs;
    const o = this.outbox;
    return {
      events: { pending: this.events.pending, consumed: this.events.consumed },
      runs: {
        queued: r.count('queued'),
        running: r.count('running'),
        ok: r.count('ok'),
        error: r.count('error'),
        timeout: r.count('timeout'),
      },
      outbox: { pending: o.count('pending'), failed: o.count('failed') },
    };
  }
}
