/**
 * An event read by its id (`EventRecords.getEvent`), without an index on `events.id`: an index would cost
 * every accepted wake a second B-tree write, for a read only the shadow replay makes (docs/shadow.md).
 * The dispatcher names an event with a UUIDv7 made at its `createdAt`, and rows are inserted in the order
 * their times were taken, so the event is among the rows whose `created_at` is within `SLACK_MS` of the
 * id's time: a binary search over `seq` (the primary key) finds where that range starts and ends, and
 * one range read finds the row. An id that is not a UUIDv7 is looked for in the whole table.
 */
import type { SystemEvent } from '../types.ts';
import { toEvent, type Row } from './rows.ts';
import type { Statements } from './statements.ts';

/** How far an event's row may be from where its time says: a clock that stepped back, commits out of order. */
const SLACK_MS = 60_000;

const UUID_V7 = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function eventById(q: Statements, id: string): SystemEvent | undefined {
  const m = UUID_V7.exec(id);
  if (!m) {
    const row = q.eventScan.get(id) as Row | undefined;
    return row ? toEvent(row) : undefined;
  }
  const at = parseInt(m[1]! + m[2]!, 16);
  const end = Number((q.endEvents.get() as { n: number }).n);
  const from = firstAtOrAfter(q, at - SLACK_MS, end);
  const to = firstAtOrAfter(q, at + SLACK_MS + 1, end);
  const row = q.eventInRange.get(from, to, id) as Row | undefined;
  return row ? toEvent(row) : undefined;
}

/** The lowest seq from which every row was created at `t` or later (`end` when none was). */
function firstAtOrAfter(q: Statements, t: number, end: number): number {
  let lo = 0;
  let hi = end;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const r = q.eventFrom.get(mid) as { seq: number; created_at: number } | undefined;
    if (!r || Number(r.created_at) >= t) hi = mid;
    else lo = Number(r.seq) + 1;
  }
  return lo;
}
