/**
 * Retention (`RetentionRecords.prune`): small batches that each look at the oldest `limit` rows of a table, from
 * where the last batch stopped (a cursor per table, in memory), and delete those past their cutoff. A
 * table's pass ends at its first row created after the cutoff (nothing later can be older) or at its
 * end; the cursor then starts over. The newest row of each table is never deleted, so keys (seq,
 * rowid) never go back and the tally (tally.ts) and the events' watermark stay right.
 *
 * Long texts (`texts`) are shared only among the rows of one run (its message, reply, transcript lines
 * and outbox entry): a text goes when the last row referring to it does, found through the partial
 * indexes on each `*_text`/`*_ref` column.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { PruneBefore, PruneCounts } from '../types.ts';
import type { Tally } from './tally.ts';

type Row = Record<string, unknown>;

function pruneStatements(db: DatabaseSync) {
  const p = (sql: string) => db.prepare(sql);
  return {
    runs: p(`SELECT r.seq AS k, r.status, r.created_at, r.finished_at, r.message_text, r.reply_text, o.status AS o_status
      FROM runs r LEFT JOIN outbox o ON o.id = r.delivery_id WHERE r.seq >= ? AND r.seq < (SELECT max(seq) FROM runs) ORDER BY r.seq LIMIT ?`),
    deleteRun: p('DELETE FROM runs WHERE seq = ?'),
    // an event below the watermark is consumed: by its row, or by the range of `consumed` that covers it
    events: p(`SELECT e.seq AS k, e.status, e.created_at, e.consumed_at, c.consumed_at AS range_at FROM events e
      LEFT JOIN consumed c ON e.seq < ? AND c.to_seq = (SELECT min(x.to_seq) FROM consumed x WHERE x.to_seq >= e.seq) AND c.from_seq <= e.seq
      WHERE e.seq >= ? AND e.seq < (SELECT max(seq) FROM events) ORDER BY e.seq LIMIT ?`),
    deleteEvent: p('DELETE FROM events WHERE seq = ?'),
    deleteRanges: p('DELETE FROM consumed WHERE to_seq < (SELECT min(seq) FROM events)'),
    messages: p(
      'SELECT id AS k, session_key, created_at, content_text FROM messages WHERE id >= ? AND id < (SELECT max(id) FROM messages) ORDER BY id LIMIT ?',
    ),
    lastMessageAt: p('SELECT created_at FROM messages WHERE session_key = ? ORDER BY id DESC LIMIT 1'),
    // the oldest of a session's newest n lines (what an agent is shown): lines below it may go
    keptFrom: p('SELECT id FROM messages WHERE session_key = ? ORDER BY id DESC LIMIT 1 OFFSET ?'),
    deleteMessage: p('DELETE FROM messages WHERE id = ?'),
    outbox: p(
      'SELECT rowid AS k, status, created_at, updated_at, text_ref, parts_ref FROM outbox WHERE rowid >= ? AND rowid < (SELECT max(rowid) FROM outbox) ORDER BY rowid LIMIT ?',
    ),
    deleteOutbox: p('DELETE FROM outbox WHERE rowid = ?'),
    requests: p(
      'SELECT seq AS k, received_at AS created_at FROM requests WHERE seq >= ? AND seq < (SELECT max(seq) FROM requests) ORDER BY seq LIMIT ?',
    ),
    deleteRequest: p('DELETE FROM requests WHERE seq = ?'),
    deleteRequestReason: p('DELETE FROM request_reasons WHERE seq = ?'),
    textUsed: p(`SELECT EXISTS (SELECT 1 FROM runs WHERE message_text = ?1) OR EXISTS (SELECT 1 FROM runs WHERE reply_text = ?1)
      OR EXISTS (SELECT 1 FROM messages WHERE content_text = ?1) OR EXISTS (SELECT 1 FROM outbox WHERE text_ref = ?1)
      OR EXISTS (SELECT 1 FROM outbox WHERE parts_ref = ?1) AS used`),
    deleteText: p('DELETE FROM texts WHERE id = ?'),
    // dry run: the same rules over whole tables
    countRuns: p(`SELECT count(*) AS n FROM runs r LEFT JOIN outbox o ON o.id = r.delivery_id WHERE r.status IN ('ok', 'error', 'timeout')
      AND r.finished_at < ? AND (o.status IS NULL OR o.status <> 'pending') AND r.seq < (SELECT max(seq) FROM runs)`),
    countEvents:
      p(`SELECT count(*) AS n FROM events e LEFT JOIN consumed c ON e.seq < ? AND c.to_seq = (SELECT min(x.to_seq) FROM consumed x WHERE x.to_seq >= e.seq)
      AND c.from_seq <= e.seq WHERE coalesce(e.consumed_at, c.consumed_at) < ? AND e.seq < (SELECT max(seq) FROM events)`),
    countMessages: p(`SELECT count(*) AS n FROM (SELECT id, created_at, max(created_at) OVER (PARTITION BY session_key) AS last_at,
      row_number() OVER (PARTITION BY session_key ORDER BY id DESC) AS rn FROM messages)
      WHERE created_at < ?1 AND (last_at < ?1 OR rn > ?2) AND id < (SELECT max(id) FROM messages)`),
    countOutbox: p(
      "SELECT count(*) AS n FROM outbox WHERE status <> 'pending' AND updated_at < ? AND rowid < (SELECT max(rowid) FROM outbox)",
    ),
    countRequests: p('SELECT count(*) AS n FROM requests WHERE received_at < ? AND seq < (SELECT max(seq) FROM requests)'),
  };
}

type Kind = 'runs' | 'events' | 'messages' | 'deliveries' | 'requests';
const FINAL = new Set(['ok', 'error', 'timeout']);

export class Pruner {
  private readonly q: ReturnType<typeof pruneStatements>;
  private readonly tally: Tally;
  /** Where each table's next batch starts. */
  private readonly from: Record<Kind, number> = { runs: 0, events: 0, messages: 0, deliveries: 0, requests: 0 };

  constructor(db: DatabaseSync, tally: Tally) {
    this.q = pruneStatements(db);
    this.tally = tally;
  }

  /** Inside a write: one batch of each kind. `pendingFrom` is the events' watermark. */
  batch(before: PruneBefore, limit: number, pendingFrom: number): PruneCounts & { more: boolean } {
    const texts = new Set<number>();
    const ref = (v: unknown) => {
      if (v !== null && v !== undefined) texts.add(Number(v));
    };
    let more = false;
    const counts: PruneCounts = { runs: 0, events: 0, messages: 0, deliveries: 0, requests: 0 };

    /** Walks a batch of `kind`'s rows; `drop` deletes a row and says whether it did. */
    const walk = (kind: Kind, rows: Row[], cutoff: number, drop: (r: Row) => boolean) => {
      let done = rows.length < limit;
      for (const r of rows) {
        if (Number(r.created_at) >= cutoff) {
          done = true;
          break;
        }
        if (drop(r)) counts[kind]++;
      }
      this.from[kind] = done ? 0 : Number(rows[rows.length - 1]!.k) + 1;
      if (!done) more = true;
    };

    walk('runs', this.q.runs.all(this.from.runs, limit) as Row[], before.runs, (r) => {
      if (!FINAL.has(String(r.status)) || Number(r.finished_at) >= before.runs || r.o_status === 'pending') return false;
      this.q.deleteRun.run(r.k as number);
      this.tally.pruned('runs', Number(r.k), String(r.status));
      ref(r.message_text);
      ref(r.reply_text);
      return true;
    });
    walk('events', this.q.events.all(pendingFrom, this.from.events, limit) as Row[], before.events, (r) => {
      const at = r.consumed_at ?? r.range_at;
      if (at === null || at === undefined || Number(at) >= before.events) return false;
      this.q.deleteEvent.run(r.k as number);
      this.tally.pruned('events', Number(r.k), 'consumed');
      return true;
    });
    if (counts.events) this.q.deleteRanges.run();
    // per session: below which id its lines may go (all of an idle session's; in one in use, those older than its newest lines)
    const below = new Map<string, number>();
    walk('messages', this.q.messages.all(this.from.messages, limit) as Row[], before.runs, (r) => {
      const key = String(r.session_key);
      let from = below.get(key);
      if (from === undefined) {
        const idle = Number((this.q.lastMessageAt.get(key) as Row).created_at) < before.runs;
        const kept = idle ? undefined : (this.q.keptFrom.get(key, before.sessionLines - 1) as Row | undefined);
        below.set(key, (from = idle ? Infinity : kept ? Number(kept.id) : 0));
      }
      if (Number(r.k) >= from) return false;
      this.q.deleteMessage.run(r.k as number);
      ref(r.content_text);
      return true;
    });
    walk('deliveries', this.q.outbox.all(this.from.deliveries, limit) as Row[], before.runs, (r) => {
      if (r.status === 'pending' || Number(r.updated_at) >= before.runs) return false;
      this.q.deleteOutbox.run(r.k as number);
      this.tally.pruned('outbox', Number(r.k), String(r.status));
      ref(r.text_ref);
      ref(r.parts_ref);
      return true;
    });
    walk('requests', this.q.requests.all(this.from.requests, limit) as Row[], before.requests, (r) => {
      this.q.deleteRequest.run(r.k as number);
      this.q.deleteRequestReason.run(r.k as number);
      return true;
    });
    for (const id of texts) if (!Number((this.q.textUsed.get(id) as Row).used)) this.q.deleteText.run(id);
    return { ...counts, more };
  }

  /** After a rollback: the batches start over (the cursors may point past rows still there). */
  rolledBack(): void {
    for (const k of Object.keys(this.from) as Kind[]) this.from[k] = 0;
  }

  count(before: PruneBefore, pendingFrom: number): PruneCounts {
    const n = (stmt: { get: (...a: number[]) => unknown }, ...args: number[]) => Number((stmt.get(...args) as Row).n);
    return {
      runs: n(this.q.countRuns, before.runs),
      events: n(this.q.countEvents, pendingFrom, before.events),
      messages: n(this.q.countMessages, before.runs, before.sessionLines),
      deliveries: n(this.q.countOutbox, before.runs),
      requests: n(this.q.countRequests, before.requests),
    };
  }
}
