/**
 * Lists read newest first in pieces, a turn of the event loop each, so that a list of 10,000 rows, or a
 * filter that most of a large table fails, does not hold the loop while it is read: each piece looks
 * through at most `window` keys and reads rows for at most LIST_TURN_MS. Each statement is a range of
 * its table's key (`seq`, `rowid`, a message's `id`), which SQLite searches through the primary key or
 * an index, never a scan of the table.
 */
import type { StatementSync } from 'node:sqlite';

/**
 * Keys one piece of a filtered list looks through, so that rows that fail the filter hold the loop only
 * briefly (measured: docs/performance.md, "Reads on a large store").
 */
export const LIST_WINDOW = 10_000;

/** How long one piece reads rows that pass, in milliseconds, before letting other work run. */
export const LIST_TURN_MS = 2;

type Row = Record<string, unknown>;

export interface NewestFirst<T> {
  /**
   * Answers `[from, below, ...args, n]`: at most n rows with keys in [from, below) that it selects,
   * newest first, each with its key in the column `key` names.
   */
  stmt: StatementSync;
  args?: readonly (string | number | null)[];
  key: string;
  /** The lowest key the list may hold, and one past the highest. */
  floor: number;
  end: number;
  /** Keys looked through per piece; Infinity for a statement that reaches its rows through an index on its filter. */
  window: number;
  limit: number;
  map: (r: Row) => T;
  /** Throws once the store is closed (a read in progress then stops between pieces). */
  open: () => void;
}

/** An `open` for a list: throws once the store `closed()`. */
export function stillOpen(closed: () => boolean): void {
  if (closed()) throw new Error('the store was closed during a read');
}

export async function newestFirst<T>(l: NewestFirst<T>): Promise<T[]> {
  const out: T[] = [];
  let below = l.end;
  while (out.length < l.limit && below > l.floor) {
    l.open();
    const from = Math.max(l.floor, below - l.window);
    const started = performance.now();
    let next = from;
    for (const r of l.stmt.iterate(from, below, ...(l.args ?? []), l.limit - out.length) as Iterable<Row>) {
      out.push(l.map(r));
      // the rest of this window in the next piece, from below this row
      if (out.length < l.limit && performance.now() - started > LIST_TURN_MS) {
        next = Number(r[l.key]);
        break;
      }
    }
    below = next;
    if (out.length < l.limit && below > l.floor) await new Promise((r) => setImmediate(r));
  }
  return out;
}
