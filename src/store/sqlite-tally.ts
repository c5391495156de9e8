/**
 * The counts of events, runs and outbox entries by status (`SqliteStore.counts`), kept as rows
 * change so that a read costs the same whatever the store holds. Counting whole tables took
 * 1.1–1.6 s per `/metrics` scrape with two million pending events, all of it holding the event loop.
 *
 * Each table's rows below a boundary (`tally_below`) are tallied in `tally`; rows above it are
 * counted by `catchUp`, a slice per turn of the event loop, which then moves the boundary past them.
 * New rows only come above it (rows are never deleted, so rowids only grow), so the write that
 * inserts them pays nothing. A status change of a tallied row moves one from the old status to the
 * new one: temporary triggers do that inside the write's own transaction (a rollback takes it back
 * too). Tables and triggers are TEMP: in this connection's memory, never written to the database file.
 *
 * Events are counted as readers see them: an event below the pending watermark is consumed, even
 * when a consumed range rather than its row says so (a range changes no row: `consumedRange`).
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { StoreCounts } from './types.ts';

/** Rowids one slice of `catchUp` counts; a slice over the largest rows stays within a few milliseconds. */
export const TALLY_SLICE = 10_000;

type Table = 'events' | 'runs' | 'outbox';
const TABLES: readonly [Table, string][] = [
  ['events', 'seq'],
  ['runs', 'seq'],
  ['outbox', 'rowid'],
];

/** A status change of a row below the boundary moves one from its old status to its new one. */
const trigger = (table: Table, key: string) => `
  CREATE TEMP TRIGGER tally_${table} AFTER UPDATE OF status ON main.${table}
  WHEN OLD.status IS NOT NEW.status AND OLD.${key} < (SELECT below FROM tally_below WHERE tbl = '${table}')
  BEGIN
    UPDATE tally SET n = n - 1 WHERE tbl = '${table}' AND status = OLD.status;
    INSERT INTO tally (tbl, status, n) VALUES ('${table}', NEW.status, 1) ON CONFLICT (tbl, status) DO UPDATE SET n = n + 1;
  END;`;

export class Tally {
  private readonly q: Record<string, StatementSync>;
  private catching: Promise<void> | undefined;

  constructor(db: DatabaseSync) {
    db.exec(`PRAGMA temp_store = MEMORY;
      CREATE TEMP TABLE tally (tbl TEXT NOT NULL, status TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tbl, status)) WITHOUT ROWID;
      CREATE TEMP TABLE tally_below (tbl TEXT PRIMARY KEY, below INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO tally_below (tbl, below) VALUES ('events', 1), ('runs', 1), ('outbox', 1);
      ${TABLES.map(([t, k]) => trigger(t, k)).join('\n')}`);
    const p = (sql: string) => db.prepare(sql);
    this.q = {
      below: p('SELECT below FROM tally_below WHERE tbl = ?'),
      setBelow: p('UPDATE tally_below SET below = ? WHERE tbl = ?'),
      add: p('INSERT INTO tally (tbl, status, n) VALUES (?, ?, ?) ON CONFLICT (tbl, status) DO UPDATE SET n = n + excluded.n'),
      all: p('SELECT tbl, status, n FROM tally'),
      pending: p("SELECT n FROM tally WHERE tbl = 'events' AND status = 'pending'"),
      // where each table's rows end
      endEvents: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM events'),
      endRuns: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM runs'),
      endOutbox: p('SELECT coalesce(max(rowid), 0) + 1 AS n FROM outbox'),
      // a slice [from, to): an event below the watermark is consumed whatever its row says
      sliceEvents: p(`SELECT CASE WHEN seq < ? OR status = 'consumed' THEN 'consumed' ELSE status END AS status, count(*) AS n
        FROM events WHERE seq >= ? AND seq < ? GROUP BY 1`),
      sliceRuns: p('SELECT status, count(*) AS n FROM runs WHERE seq >= ? AND seq < ? GROUP BY status'),
      sliceOutbox: p('SELECT status, count(*) AS n FROM outbox WHERE rowid >= ? AND rowid < ? GROUP BY status'),
    };
  }

  /**
   * Counts the rows each table has gained since the last call, TALLY_SLICE rowids per turn of the
   * event loop. `watermark` is the pending events' watermark as committed. Concurrent calls share one pass.
   */
  catchUp(watermark: () => number, closed: () => boolean): Promise<void> {
    this.catching ??= (async () => {
      const q = this.q;
      const slices: [Table, StatementSync, (from: number, to: number) => unknown[]][] = [
        ['events', q.endEvents!, (from, to) => q.sliceEvents!.all(watermark(), from, to)],
        ['runs', q.endRuns!, (from, to) => q.sliceRuns!.all(from, to)],
        ['outbox', q.endOutbox!, (from, to) => q.sliceOutbox!.all(from, to)],
      ];
      for (const [table, end, slice] of slices) {
        for (;;) {
          if (closed()) return;
          const from = Number((q.below!.get(table) as { below: number }).below);
          const to = Math.min(Number((end.get() as { n: number }).n), from + TALLY_SLICE);
          if (from >= to) break;
          for (const r of slice(from, to) as { status: string; n: number }[]) q.add!.run(table, r.status, r.n);
          q.setBelow!.run(to, table);
          await new Promise((r) => setImmediate(r));
        }
      }
    })().finally(() => (this.catching = undefined));
    return this.catching;
  }

  /**
   * Inside the write that records a consumed range of events ending at seq `last`, which holds
   * `consumed` events that were pending (rows marked consumed inside it were consumed already). Tallied
   * pending events all lie from the watermark up: when the range reaches the boundary it takes every
   * one of them, else exactly its own; the ones above the boundary are counted consumed when reached.
   */
  consumedRange(last: number, consumed: number): void {
    const below = Number((this.q.below!.get('events') as { below: number }).below);
    const tallied = Number((this.q.pending!.get() as { n: number } | undefined)?.n ?? 0);
    const n = last + 1 >= below ? tallied : consumed;
    if (n === 0) return;
    this.q.add!.run('events', 'pending', -n);
    this.q.add!.run('events', 'consumed', n);
  }

  /** The counts as tallied (after `catchUp`, every row). */
  read(): StoreCounts {
    const by = { events: {}, runs: {}, outbox: {} } as Record<Table, Record<string, number>>;
    for (const r of this.q.all!.all() as { tbl: Table; status: string; n: number }[]) by[r.tbl][r.status] = Number(r.n);
    const e = by.events;
    const r = by.runs;
    const o = by.outbox;
    return {
      events: { pending: e.pending ?? 0, consumed: e.consumed ?? 0 },
      runs: { queued: r.queued ?? 0, running: r.running ?? 0, ok: r.ok ?? 0, error: r.error ?? 0, timeout: r.timeout ?? 0 },
      outbox: { pending: o.pending ?? 0, failed: o.failed ?? 0 },
    };
  }
}
