/**
 * The writes of a run's life: its row when accepted (or a heartbeat's, already running), its start and its
 * finish with the transcript lines, summary event and delivery that come with it. Each method marked
 * "inside a write" runs in the write queue's transaction.
 */
import { RecycledMap, RecycledSet } from '../../util/recycled.ts';
import type { NewDelivery, NewEvent, NewRun, RunOutcome, RunStatus } from '../types.ts';
import { ISOLATED, LONG_TEXT, NAME_TRUSTED, NEW_SESSION, packed, TRUSTED } from './rows.ts';
import type { Statements } from './statements.ts';

export class RunRows {
  private readonly q: Statements;
  /**
   * The long message of each run under way (read to start it, or a heartbeat's prompt), as handed out and as
   * stored: its finish finds there the transcript line, or the reply (an echo), that repeats it, and refers to
   * the stored text instead of writing it again. Forgotten at the run's finish or requeue.
   */
  private readonly started = new RecycledMap<string, { message: string; ref: number; key: string | null }>();
  /**
   * Starts not written yet (run id → start time): queued, or written by a transaction that rolled
   * back. A run's finish queued before its start's write runs shares its transaction (a flush runs
   * everything queued), so the finish takes the start over and the row is updated once: a fast
   * agent's run costs one UPDATE, not two. A finish that comes after a start that rolled back (the
   * disk was full) writes that start too, so the run's row shows it was started.
   */
  private readonly queuedStarts = new RecycledMap<string, number>();
  /** Runs whose finish is queued: their start, still queued, is left to it. */
  private readonly finishing = new RecycledSet<string>();
  /** Starts written by the transaction under way (see `queuedStarts`); cleared at each commit. */
  private readonly startsInTx = new RecycledMap<string, number>();

  constructor(q: Statements) {
    this.q = q;
  }

  /** Keeps a run's long message as handed out and its stored copy (see `started`). */
  remember(id: string, message: string, ref: number, key: string | null): void {
    this.started.set(id, { message, ref, key });
  }

  forget(id: string): void {
    this.started.delete(id);
  }

  /** Inside a write. */
  insertHeartbeat(run: NewRun, startedAt: number): void {
    const [, ref] = this.insertRun(run, 'running', startedAt);
    if (ref !== null) this.remember(run.id, run.message, ref, packed(run.message)[1]);
  }

  queueStart(id: string, at: number): void {
    this.queuedStarts.set(id, at);
  }

  /** Inside a write. */
  writeStart(id: string, at: number): void {
    if (this.finishing.has(id)) return; // its finish, in this transaction, writes it
    if (this.takeStart(id) !== undefined) this.q.startRun.run(at, id);
  }

  queueFinish(id: string): void {
    this.finishing.add(id);
  }

  /** Inside a write: the run's row, its transcript lines, its summary event and its delivery. */
  writeFinish(o: RunOutcome): void {
    this.finishing.delete(o.id);
    const startedAt = this.takeStart(o.id);
    const d = o.delivery;
    const [dStatus, dReason, dChannel, dTo, dId] =
      d.kind === 'outbox'
        ? ['pending', null, d.entry.channel, d.entry.to, d.entry.id]
        : ['skipped', d.reason, d.channel ?? null, d.to ?? null, null];
    // a text equal to the run's long message or to the reply refers to the one stored copy
    const mine = this.started.get(o.id);
    const [reply, replyKey, replyRef] =
      o.reply === null ? [null, null, null] : o.reply === mine?.message ? ['', mine.key, mine.ref] : this.storeText(o.reply);
    this.q.finishRun.run(
      startedAt ?? null,
      startedAt === undefined ? 0 : 1,
      o.status,
      o.finishedAt,
      replyRef === null ? reply : null,
      o.summary,
      o.error,
      dStatus,
      dReason,
      dChannel,
      dTo,
      dId,
      replyRef,
      replyKey,
      o.usage?.inputTokens ?? null,
      o.usage?.outputTokens ?? null,
      o.forwarded ? JSON.stringify(o.forwarded) : null,
      o.id,
    );
    for (const m of o.messages) {
      const [content, key, ref] =
        m.content === mine?.message
          ? ['', mine.key, mine.ref]
          : m.content === o.reply
            ? [reply!, replyKey, replyRef]
            : this.storeText(m.content);
      this.q.insertMessage.run(m.sessionKey, m.role, ref === null ? content : '', m.runId, m.createdAt, ref, key);
    }
    if (o.event) this.insertEvent(o.event);
    if (d.kind === 'outbox') {
      const e = d.entry;
      // the reply it delivers is stored already when long
      const [text, key, textRef] = e.text === o.reply ? [reply!, replyKey, replyRef] : this.storeText(e.text);
      this.q.insertOutbox.run(
        e.id,
        e.runId,
        e.channel,
        e.to,
        textRef === null ? text : '',
        textRef,
        key,
        e.createdAt,
        e.createdAt,
        e.createdAt,
        e.mainSession ? 1 : 0,
        null,
      );
    }
    this.insertCallbacks(o.callbacks);
  }

  /** Inside a write: entries that send lifecycle events to callbacks (`Delivery.event`). */
  insertCallbacks(entries: readonly NewDelivery[] | undefined): void {
    if (!entries) return;
    for (const e of entries) {
      const [text, key, ref] = this.storeText(e.text);
      this.q.insertOutbox.run(
        e.id,
        e.runId,
        e.channel,
        null,
        ref === null ? text : '',
        ref,
        key,
        e.createdAt,
        e.createdAt,
        e.createdAt,
        0,
        e.event ?? null,
      );
    }
  }

  /** Inside a write: a new outbox entry for a finished run, made its delivery (`Store.redeliver`). */
  writeRedelivery(e: NewDelivery): void {
    const [text, key, ref] = this.storeText(e.text);
    this.q.insertOutbox.run(
      e.id,
      e.runId,
      e.channel,
      e.to,
      ref === null ? text : '',
      ref,
      key,
      e.createdAt,
      e.createdAt,
      e.createdAt,
      e.mainSession ? 1 : 0,
      null,
    );
    this.q.redeliverRun.run(e.channel, e.to, e.id, e.runId);
  }

  /** Inside a write: the run's start if it is not written yet, now counted as written by this transaction. */
  private takeStart(id: string): number | undefined {
    const at = this.queuedStarts.get(id);
    if (at === undefined) return undefined;
    this.queuedStarts.delete(id);
    this.startsInTx.set(id, at);
    return at;
  }

  /** Starts written by the transaction that rolled back are unwritten again. */
  rolledBack(): void {
    for (const [id, at] of this.startsInTx) this.queuedStarts.set(id, at);
    this.startsInTx.clear();
  }

  committed(): void {
    this.startsInTx.clear();
  }

  /** Inside a write. */
  insertEvent(e: NewEvent): void {
    const [text, key] = packed(e.text);
    this.q.insertEvent.run(e.id, e.source, text, e.createdAt, e.runId, key, e.coalesceKey ?? null);
  }

  /** Inside a write; returns the run's seq, and the id of its message's stored text when the message is long, else null. */
  insertRun(r: NewRun, status: RunStatus, startedAt: number | null): [number, number | null] {
    const [message, key] = packed(r.message);
    const ref = this.longText(message);
    const flags =
      (r.trusted ? TRUSTED : 0) |
      (r.nameTrusted ? NAME_TRUSTED : 0) |
      (r.newSession ? NEW_SESSION : 0) |
      (r.sessionMode === 'isolated' ? ISOLATED : 0);
    const { lastInsertRowid } = this.q.insertRun.run(
      r.id,
      r.kind,
      r.hookName,
      r.label,
      flags,
      r.sessionKey,
      ref === null ? message : '',
      r.model,
      r.thinking,
      r.timeoutSeconds,
      r.wakeMode,
      r.deliver ? 1 : 0,
      r.channel,
      r.to,
      status,
      startedAt === null ? 0 : 1,
      r.createdAt,
      startedAt,
      'pending',
      ref,
      key,
      r.hookId ?? null,
      r.agentId,
    );
    return [Number(lastInsertRowid), ref];
  }

  /**
   * Inside a write: a text packed (see `packed`), its boundary key, and the id of its stored copy when it is long
   * (see LONG_TEXT); a short one goes inline, in the row's own column.
   */
  private storeText(text: string): [string, string | null, number | null] {
    const [rest, key] = packed(text);
    return [rest, key, this.longText(rest)];
  }

  /** Inside a write: stores a long text (see LONG_TEXT) and returns its rowid; null for a short one (stored inline). */
  longText(text: string | null): number | null {
    if (text === null || text.length <= LONG_TEXT) return null;
    return Number(this.q.insertText.run(text).lastInsertRowid);
  }
}
