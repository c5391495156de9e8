/**
 * The SQLite driver's records (`Records`): reads run synchronously on the one connection; writes go
 * through the group commit (write-queue.ts), so that many requests share one transaction, and each
 * write's promise resolves after COMMIT. A failure of the disk rejects with the contract's error
 * (errors.ts): the write queue translates its writes', each read its own.
 */
import type { Records } from '../roles.ts';
import type {
  AcceptBatch,
  Accepted,
  Delivery,
  DeliveryAttempt,
  EventStatus,
  IdempotencyRecord,
  ListOptions,
  NewDelivery,
  NewRun,
  PendingBacklog,
  PruneBefore,
  PruneCounts,
  Run,
  RunListOptions,
  RunOutcome,
  SessionMessage,
  StoreCounts,
  SystemEvent,
} from '../types.ts';
import { boundaryBytes } from './boundary.ts';
import { contractError } from './errors.ts';
import { eventById } from './event-by-id.ts';
import type { PendingEvents } from './events.ts';
import type { LocalRunEnds } from '../local/ends.ts';
import type { Meta } from './meta.ts';
import { Lists } from './lists.ts';
import type { Pruner } from './prune.ts';
import type { SqliteRunQueue } from './queue.ts';
import type { RequestRows } from './requests.ts';
import { str, toDelivery, toMessage, toNewRun, toRun, type Row } from './rows.ts';
import type { RunRows } from './runs.ts';
import type { Statements } from './statements.ts';
import type { Tally } from './tally.ts';
import type { WriteQueue } from './write-queue.ts';

/** What the records are kept with: the store's statements, write queue and caches (store.ts makes them). */
export interface RecordParts {
  q: Statements;
  writes: WriteQueue;
  tally: Tally;
  meta: Meta;
  events: PendingEvents;
  runs: RunRows;
  requests: RequestRows;
  pruner: Pruner;
  queue: SqliteRunQueue;
  /** True once the store is closed: a list read in pieces stops. */
  closed: () => boolean;
  /** Told of each run that finished or whose delivery ended, once committed. */
  ends: LocalRunEnds;
}

export class SqliteRecords implements Records {
  private readonly q: Statements;
  private readonly writes: WriteQueue;
  private readonly tally: Tally;
  private readonly meta: Meta;
  private readonly events: PendingEvents;
  private readonly runs: RunRows;
  private readonly requests: RequestRows;
  private readonly pruner: Pruner;
  private readonly queue: SqliteRunQueue;
  private readonly closed: () => boolean;
  private readonly ends: LocalRunEnds;
  private readonly lists: Lists;

  constructor(parts: RecordParts) {
    this.q = parts.q;
    this.writes = parts.writes;
    this.tally = parts.tally;
    this.meta = parts.meta;
    this.events = parts.events;
    this.runs = parts.runs;
    this.requests = parts.requests;
    this.pruner = parts.pruner;
    this.queue = parts.queue;
    this.closed = parts.closed;
    this.ends = parts.ends;
    this.lists = new Lists(parts.q, parts.meta, parts.closed);
  }

  accept(batch: AcceptBatch): Promise<Accepted> {
    return this.writes.run(() => {
      const into = this.coalescedInto(batch);
      if (into !== undefined) return this.acceptCoalesced(batch, into);
      for (const e of batch.events) this.runs.insertEvent(e);
      for (const r of batch.runs) this.queue.accepted(this.runs.insertRun(r, 'queued', null)[0]);
      const i = batch.idempotency;
      if (i) this.q.putIdem.run(i.key, i.status, i.body, i.createdAt, i.expiresAt);
      this.runs.insertCallbacks(batch.callbacks);
      return batch.request ? { requestId: this.requests.insert(batch.request) } : {};
    }, batch.deadline);
  }

  /** Inside a write: the pending event a lone wake coalesces into (`AcceptBatch.coalesce`), if any. */
  private coalescedInto(batch: AcceptBatch): string | undefined {
    const key = batch.coalesce && batch.events.length === 1 && !batch.runs.length ? batch.events[0]!.coalesceKey : undefined;
    return key === undefined ? undefined : this.events.newestWithKey(key);
  }

  /** Inside a write: a lone wake that coalesced into event `into`; its idempotency record and kept request name that event. */
  private acceptCoalesced(batch: AcceptBatch, into: string): Accepted {
    const newId = batch.events[0]!.id;
    const i = batch.idempotency;
    if (i) this.q.putIdem.run(i.key, i.status, (batch.coalesce!.idempotencyBody ?? i.body).replace(newId, into), i.createdAt, i.expiresAt);
    const accepted: Accepted = { coalescedInto: into };
    if (batch.request) {
      const actions = batch.request.actions.map((a) => (a.kind === 'wake' && a.eventId === newId ? { ...a, eventId: into } : a));
      accepted.requestId = this.requests.insert({ ...batch.request, actions });
    }
    return accepted;
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

  listRuns(opts: RunListOptions): Promise<Run[]> {
    return this.lists.runs(opts);
  }

  listMessages(sessionKey: string, opts: ListOptions): Promise<SessionMessage[]> {
    return this.lists.messages(sessionKey, opts);
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

  listEvents(opts: ListOptions & { status?: EventStatus }): Promise<SystemEvent[]> {
    return this.lists.events(opts);
  }

  async getEvent(id: string): Promise<SystemEvent | undefined> {
    try {
      return eventById(this.q, id);
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
      await this.tally.catchUp(() => this.meta.pendingFrom(), this.closed);
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
      () => {
        this.runs.forget(o.id);
        this.ends.ended(o.id);
      },
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
    const done = this.writes.run(() => {
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
      this.runs.insertCallbacks(a.callbacks);
    });
    // a delivery retried later has not ended
    return a.status === 'pending' ? done : done.then(() => this.ends.ended(a.runId));
  }

  async runCallbacks(runId: string): Promise<Delivery[]> {
    try {
      return (this.q.runCallbacks.all(runId) as Row[]).map(toDelivery);
    } catch (err) {
      throw contractError(err);
    }
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
}
