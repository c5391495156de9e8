/**
 * Pending events and their consumption by heartbeats. A heartbeat takes the oldest pending events (or the
 * newest of a backlog, and the older ones with them), so what it consumes is normally every pending event
 * from the watermark (`Meta.pendingFrom`) up to the last it showed: one row of `consumed` records that
 * range, and the events' own rows are not rewritten.
 */
import { RecycledMap } from '../../util/recycled.ts';
import type { PendingBacklog, SystemEvent } from '../types.ts';
import type { Meta } from './meta.ts';
import { LIST_WINDOW } from './pages.ts';
import { str, unpacked, type Row } from './rows.ts';
import type { Statements } from './statements.ts';
import type { Tally } from './tally.ts';

export class PendingEvents {
  /**
   * Where each event handed out by `pending` or `backlog` is (id → seq), so consuming it needs no index on
   * id. An entry leaves when its event is consumed; ids and seqs never change, so it cannot go stale.
   */
  private readonly pendingSeq = new RecycledMap<string, number>();
  private readonly q: Statements;
  private readonly tally: Tally;
  private readonly meta: Meta;
  private readonly closed: () => boolean;

  constructor(q: Statements, tally: Tally, meta: Meta, closed: () => boolean) {
    this.q = q;
    this.tally = tally;
    this.meta = meta;
    this.closed = closed;
  }

  /** Inside a write: the newest pending event when it has `key` (a wake that coalesces into it, docs/http.md "Wake coalescing"). */
  newestWithKey(key: string): string | undefined {
    const row = this.q.lastPending.get(this.meta.pendingFrom()) as unknown as unknown[] | undefined;
    return row !== undefined && row[1] === key ? String(row[0]) : undefined;
  }

  pending(limit: number): SystemEvent[] {
    return this.handOut(this.q.pendingEvents.all(this.meta.pendingFrom(), limit) as unknown as unknown[][]);
  }

  /**
   * Pending events read as arrays (faster than objects for a heartbeat's 200; measured: docs/performance.md,
   * "Keeping the speed"): seq, id, source, text, text_wrap, created_at, run_id. Each one's seq is kept for consuming it (`pendingSeq`).
   */
  private handOut(rows: unknown[][]): SystemEvent[] {
    return rows.map((a) => {
      const id = String(a[1]);
      this.pendingSeq.set(id, Number(a[0]));
      return {
        id,
        source: String(a[2]),
        text: unpacked(a[3], a[4]),
        status: 'pending',
        createdAt: Number(a[5]),
        consumedAt: null,
        heartbeatId: null,
        runId: str(a[6]),
      };
    });
  }

  /**
   * The last backlog handed out: where its shown events start, how many older events were pending below them,
   * and `consumes` then. A heartbeat that consumes the older ones (`consumeOlder`) is recorded without counting
   * them again inside its write, unless events were consumed since.
   */
  private lastBacklog: { shownFrom: number; older: number; consumes: number } | undefined;
  /** Writes that consumed events, counted once committed, for `backlog`. */
  private consumes = 0;

  async backlog(limit: number): Promise<PendingBacklog> {
    const from = this.meta.pendingFrom();
    const consumes = this.consumes;
    const events = this.handOut((this.q.newestPending.all(from, limit) as unknown as unknown[][]).reverse());
    const older: PendingBacklog['older'] = { count: 0, bySource: {}, firstAt: null, lastAt: null };
    if (events.length < limit) return { events, older }; // every pending event is shown
    const shownFrom = this.pendingSeq.get(events[0]!.id)!;
    // below the shown events, a window of seqs per turn of the event loop: a backlog of millions takes many short turns
    for (let at = from; at < shownFrom; at += LIST_WINDOW) {
      if (at > from) await new Promise((r) => setImmediate(r));
      if (this.closed()) throw new Error('the store was closed during a read');
      for (const r of this.q.countPendingBySource.all(at, Math.min(at + LIST_WINDOW, shownFrom)) as Row[]) {
        const n = Number(r.n);
        older.count += n;
        older.bySource[String(r.source)] = (older.bySource[String(r.source)] ?? 0) + n;
        older.firstAt = Math.min(older.firstAt ?? Infinity, Number(r.first_at));
        older.lastAt = Math.max(older.lastAt ?? -Infinity, Number(r.last_at));
      }
    }
    this.lastBacklog = { shownFrom, older: older.count, consumes };
    return { events, older };
  }

  /**
   * Inside a write: marks a heartbeat's events consumed and moves the watermark on. A heartbeat shows every
   * pending event, or the newest of a backlog and then consumes the older ones too (`older`), so what it
   * consumes is normally every pending event from the watermark up to the last it showed: one row in
   * `consumed` records that. Any other set (ids this store did not hand out, or events left out in between)
   * is marked row by row.
   */
  consume(ids: readonly string[], heartbeatId: string, at: number, older: boolean): void {
    const from = this.meta.pendingFrom();
    const seqs = ids.map((id) => this.pendingSeq.get(id));
    const first = seqs[0];
    const last = seqs[seqs.length - 1];
    const inOrder = seqs.every((s, i) => s !== undefined && (i === 0 || s > seqs[i - 1]!));
    if (older && inOrder) return this.consumeThrough(from, seqs as number[], heartbeatId, at);
    if (
      inOrder &&
      first === this.firstPendingFrom(from) &&
      Number((this.q.countPendingIn.get(first!, last!) as { n: number }).n) === seqs.length
    ) {
      this.q.consumeRange.run(last!, first, heartbeatId, at);
      this.tally.consumedRange(last!, seqs.length);
      // past the range, an event marked pending is pending
      this.meta.setPendingFrom(this.firstPendingFrom(last! + 1));
    } else {
      // an event below the watermark is consumed already, whatever its row says
      ids.forEach((id, i) => {
        const seq = seqs[i];
        const marked =
          seq === undefined
            ? (this.q.consumeEventById.get(at, heartbeatId, id, from) as { seq: number } | undefined)?.seq
            : seq >= from && this.q.consumeEvent.run(at, heartbeatId, seq).changes
              ? seq
              : undefined;
        if (marked !== undefined) this.tally.consumedRow(Number(marked));
      });
      this.meta.setPendingFrom(this.firstPendingFrom(from));
    }
  }

  /**
   * Inside a write: a backlog's heartbeat consumes every pending event from the watermark up to the last one it
   * showed, `seqs` (the newest, in order), as one range. The older ones were counted when the backlog was
   * handed out; counted again here only if other events were consumed since.
   */
  private consumeThrough(from: number, seqs: readonly number[], heartbeatId: string, at: number): void {
    const last = seqs[seqs.length - 1]!;
    const oldest = this.firstPendingFrom(from);
    if (oldest > last) return; // consumed meanwhile
    const b = this.lastBacklog;
    const known =
      b !== undefined && b.consumes === this.consumes && b.shownFrom === seqs[0] && this.pendingIn(seqs[0]!, last) === seqs.length;
    const n = known ? b.older + seqs.length : this.pendingIn(oldest, last);
    this.q.consumeRange.run(last, oldest, heartbeatId, at);
    this.tally.consumedRange(last, n);
    this.meta.setPendingFrom(this.firstPendingFrom(last + 1));
  }

  /** How many events from seq `first` to `last` are still marked pending (all are pending from the watermark up). */
  private pendingIn(first: number, last: number): number {
    return Number((this.q.countPendingIn.get(first, last) as { n: number }).n);
  }

  /** The first event still marked pending from `seq` on, else the seq the next event will get. */
  private firstPendingFrom(seq: number): number {
    return Number((this.q.firstPending.get(seq) as { seq: number }).seq);
  }

  /** After the write that consumed `ids` committed: they are forgotten (a finish retried alone after its group's transaction failed still finds them). */
  committed(ids: readonly string[]): void {
    this.consumes++;
    for (const id of ids) this.pendingSeq.delete(id);
    // and those handed out before and consumed as older ones since (a backlog's heartbeat that failed showed them)
    const from = this.meta.pendingFrom();
    for (const [id, seq] of [...this.pendingSeq]) if (seq < from) this.pendingSeq.delete(id);
  }
}
