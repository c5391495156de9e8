/**
 * The SQLite store (node:sqlite, WAL). Reads run synchronously on the one
 * connection; writes go through a group-commit queue so that many requests
 * share one transaction, and each write's promise resolves after COMMIT.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { SCHEMA, SCHEMA_VERSION } from './sqlite-schema.ts';
import { WriteQueue } from './write-queue.ts';
import { WalPresync } from './wal-presync.ts';
import { Tally } from './sqlite-tally.ts';
import { LIST_WINDOW, newestFirst, type NewestFirst } from './sqlite-pages.ts';
import { RecycledMap, RecycledSet } from '../util/recycled.ts';
import { StoreInUseError, StoreSchemaError } from './errors.ts';
import { boundaryBytes, packBoundary, unpackBoundary } from './sqlite-boundary.ts';
import type {
  AcceptBatch,
  NewMessage,
  Delivery,
  DeliveryAttempt,
  EventStatus,
  IdempotencyRecord,
  ListOptions,
  NewEvent,
  NewRun,
  PendingBacklog,
  Run,
  RunOutcome,
  RunStatus,
  SessionMessage,
  Store,
  StoreCounts,
  StoreHistogram,
  SystemEvent,
} from './types.ts';

export interface SqliteStoreOptions {
  path: string;
  /** `normal`: durable against process crashes (WAL); `full`: also against power loss (fsync per commit). */
  synchronous?: 'normal' | 'full';
  /**
   * `exclusive` (the default): the connection holds the file's lock from open to close, so another
   * process cannot open it and no transaction takes or releases file locks or reads shared memory.
   * `normal`: SQLite's own locking, so other processes (the sqlite3 shell, a backup) can read it live.
   */
  locking?: 'exclusive' | 'normal';
  /** How long opening waits for another process to release the file (default 5000 ms). */
  busyTimeoutMs?: number;
}

type Row = Record<string, unknown>;

const SQLITE_BUSY = 5;

/** The meta key of the pending events' watermark (`SqliteStore.pendingFrom`). */
const PENDING_FROM = 'eventsPendingFrom';

/**
 * Texts longer than this many characters (a run's message and reply, the transcript lines that repeat
 * them, and a delivery's text) are stored once, out of the row, in the `texts` table (migrations 7 and 8).
 * Shorter ones fit in the row's
 * page; a longer one inline would be rewritten, overflow pages and all, by every change of the row's status.
 */
export const LONG_TEXT = 2048;

export { StoreInUseError, StoreSchemaError };

const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/**
 * A text as stored: without its safety boundary's notice and marker lines when it holds one, and the
 * key that rebuilds them (`*_wrap` columns, migration 9), else as it is with a null key.
 */
function packed(text: string): [string, string | null] {
  const p = packBoundary(text);
  return p ? [p.rest, p.key] : [text, null];
}

/** A stored text read back: rebuilt from its key when it has one (see `packed`). */
const unpacked = (text: unknown, key: unknown): string => (key === null || key === undefined ? String(text) : unpackBoundary(String(text), String(key)));

/** An event row, with the range that consumed it when one covers it (`EVENT_COLUMNS`). */
function toEvent(r: Row): SystemEvent {
  const byRange = r.range_at !== null && r.range_at !== undefined;
  return {
    id: String(r.id),
    source: String(r.source),
    text: unpacked(r.text, r.text_wrap),
    status: byRange ? 'consumed' : (r.status as EventStatus),
    createdAt: Number(r.created_at),
    consumedAt: byRange ? Number(r.range_at) : num(r.consumed_at),
    heartbeatId: byRange ? String(r.range_heartbeat) : str(r.heartbeat_id),
    runId: str(r.run_id),
  };
}

/**
 * An event's columns with the range that consumed it (migration 12): the first range ending at or
 * after its seq, when that range starts at or before it. Only a row still marked pending can be in one.
 */
const EVENT_COLUMNS = `SELECT e.*, c.consumed_at AS range_at, c.heartbeat_id AS range_heartbeat FROM events e
  LEFT JOIN consumed c ON e.status = 'pending' AND c.to_seq = (SELECT min(x.to_seq) FROM consumed x WHERE x.to_seq >= e.seq)
  AND c.from_seq <= e.seq`;

/**
 * The columns a run was accepted with, which the runner reads to start a queued run
 * (`QUEUED_COLUMNS`), in the order `toNewRun` takes them: that read returns arrays, which
 * node:sqlite makes in about half the time of objects (docs/performance.md, fifteenth round).
 */
const QUEUED = ['id', 'kind', 'hook_name', 'label', 'trusted', 'session_key', 'message', 'message_body', 'model', 'thinking',
  'timeout_seconds', 'wake_mode', 'deliver', 'channel', 'to_', 'created_at', 'message_wrap', 'message_text'] as const;

/** The `trusted` column holds flags: the hook opted out of the safety boundary, and its name is config-supplied. */
const TRUSTED = 1;
const NAME_TRUSTED = 2;

/** A queued run from its `QUEUED` columns, in that order. */
function toNewRun(a: readonly unknown[]): NewRun {
  return {
    id: String(a[0]),
    kind: a[1] as Run['kind'],
    hookName: String(a[2]),
    label: String(a[3]),
    trusted: (Number(a[4]) & TRUSTED) !== 0,
    nameTrusted: (Number(a[4]) & NAME_TRUSTED) !== 0,
    sessionKey: String(a[5]),
    message: unpacked(a[7] === null ? a[6] : a[7], a[16]),
    model: String(a[8]),
    thinking: str(a[9]),
    timeoutSeconds: Number(a[10]),
    wakeMode: a[11] as Run['wakeMode'],
    deliver: a[12] === 1,
    channel: String(a[13]),
    to: str(a[14]),
    createdAt: Number(a[15]),
  };
}

/**
 * A run row, read with its outbox entry's `o_status`, `o_attempts` and `o_error` (see RUN_COLUMNS): the
 * entry holds the delivery's state once the run has one.
 */
function toRun(r: Row): Run {
  const fromOutbox = r.o_status !== null && r.o_status !== undefined;
  return {
    ...toNewRun(QUEUED.map((c) => r[c])),
    status: r.status as RunStatus,
    attempts: Number(r.attempts),
    startedAt: num(r.started_at),
    finishedAt: num(r.finished_at),
    reply: r.reply_text !== null ? unpacked(r.reply_body, r.reply_wrap) : r.reply === null ? null : unpacked(r.reply, r.reply_wrap),
    summary: str(r.summary),
    error: str(r.error),
    delivery: fromOutbox
      ? {
          status: r.o_status as Run['delivery']['status'],
          reason: r.o_status === 'sent' ? null : str(r.o_error),
          channel: str(r.delivery_channel),
          to: str(r.delivery_to),
          attempts: Number(r.o_attempts),
        }
      : {
          status: r.delivery_status as Run['delivery']['status'],
          reason: str(r.delivery_reason),
          channel: str(r.delivery_channel),
          to: str(r.delivery_to),
          attempts: Number(r.delivery_attempts),
        },
  };
}

function toMessage(r: Row): SessionMessage {
  return {
    id: Number(r.id),
    sessionKey: String(r.session_key),
    role: r.role as SessionMessage['role'],
    content: unpacked(r.content_text === null ? r.content : r.content_body, r.content_wrap),
    runId: str(r.run_id),
    createdAt: Number(r.created_at),
  };
}

function toDelivery(r: Row): Delivery {
  return {
    id: String(r.id),
    runId: String(r.run_id),
    channel: String(r.channel),
    to: str(r.to_),
    text: unpacked(r.text_ref === null ? r.text : r.text_body, r.text_wrap),
    status: r.status as Delivery['status'],
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    lastError: str(r.last_error),
    sentParts: Number(r.sent_parts),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** A long text kept out of line (`LONG_TEXT`), by the column holding its rowid; NULL for an inline one. */
const body = (ref: string) => `(SELECT body FROM texts WHERE id = ${ref})`;

/** A run's columns and its delivery's state, from its outbox entry when it has one (`toRun`). */
const RUN_COLUMNS = `SELECT r.*, ${body('r.message_text')} AS message_body, ${body('r.reply_text')} AS reply_body,
  o.status AS o_status, o.attempts AS o_attempts, o.last_error AS o_error FROM runs r LEFT JOIN outbox o ON o.id = r.delivery_id`;

/** What the runner reads to start a queued run (`toNewRun`). */
const QUEUED_COLUMNS = `SELECT ${QUEUED.map((c) => (c === 'message_body' ? `${body('message_text')} AS message_body` : c)).join(', ')} FROM runs`;

/** A transcript line's columns (`toMessage`). */
const MESSAGE_COLUMNS = `SELECT m.*, ${body('m.content_text')} AS content_body FROM messages m`;

/** The prepared statements, by name. */
function statements(db: DatabaseSync) {
  const p = (sql: string) => db.prepare(sql);
  const arrays = (stmt: StatementSync) => {
    stmt.setReturnArrays(true);
    return stmt;
  };
  return {
    insertEvent: p('INSERT INTO events (id, source, text, status, created_at, run_id, text_wrap) VALUES (?, ?, ?, \'pending\', ?, ?, ?)'),
    insertRun: p(`INSERT INTO runs (id, kind, hook_name, label, trusted, session_key, message, model, thinking, timeout_seconds,
      wake_mode, deliver, channel, to_, status, attempts, created_at, started_at, delivery_status, message_text, message_wrap)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    insertText: p('INSERT INTO texts (body) VALUES (?)'),
    putIdem: p('INSERT OR REPLACE INTO idempotency (key, status, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?)'),
    getIdem: p('SELECT key, status, body, created_at, expires_at FROM idempotency WHERE key = ? AND expires_at > ?'),
    pruneIdem: p('DELETE FROM idempotency WHERE expires_at <= ?'),
    getRun: p(`${RUN_COLUMNS} WHERE r.id = ?`),
    queuedRun: arrays(p(`${QUEUED_COLUMNS} WHERE id = ? AND status = 'queued'`)),
    // lists: the rows with keys in [from, below) that pass, newest first (read in pieces, see `newestFirst`)
    listRuns: p(`${RUN_COLUMNS} WHERE r.seq >= ? AND r.seq < ? ORDER BY r.seq DESC LIMIT ?`),
    listRunsByStatus: p(`${RUN_COLUMNS} WHERE r.seq >= ? AND r.seq < ? AND r.status = ? ORDER BY r.seq DESC LIMIT ?`),
    // queued and running runs from the index of unfinished ones, not a walk back through every finished run
    listUnfinishedByStatus: p(`${RUN_COLUMNS.replace('FROM runs r', 'FROM runs r INDEXED BY runs_unfinished')}
      WHERE r.seq >= ? AND r.seq < ? AND r.status IN ('queued', 'running') AND r.status = ? ORDER BY r.seq DESC LIMIT ?`),
    listMessages: p(`${MESSAGE_COLUMNS.replace('FROM messages m', 'FROM messages m INDEXED BY messages_by_session')}
      WHERE m.id >= ? AND m.id < ? AND m.session_key = ? ORDER BY m.id DESC LIMIT ?`),
    listEvents: p(`${EVENT_COLUMNS} WHERE e.seq >= ? AND e.seq < ? ORDER BY e.seq DESC LIMIT ?`),
    // below the watermark every event is consumed (by its row or by a range); from it on, those marked pending are pending
    listPendingEvents: p("SELECT * FROM events WHERE seq >= ? AND seq < ? AND status = 'pending' ORDER BY seq DESC LIMIT ?"),
    listConsumedEvents: p(`${EVENT_COLUMNS} WHERE e.seq >= ? AND e.seq < ? AND (e.seq < ? OR e.status = 'consumed') ORDER BY e.seq DESC LIMIT ?`),
    // one past each table's highest key, where a list starts
    endEvents: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM events'),
    endRuns: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM runs'),
    endMessages: p('SELECT coalesce(max(id), 0) + 1 AS n FROM messages'),
    // forward from the watermark (see `pendingFrom`): the events below it are all consumed
    pendingEvents: arrays(p("SELECT seq, id, source, text, text_wrap, created_at, run_id FROM events WHERE seq >= ? AND status = 'pending' ORDER BY seq ASC LIMIT ?")),
    // a backlog (see `pendingBacklog`): its newest events, from the top down, then the older ones counted a window at a time
    newestPending: arrays(p("SELECT seq, id, source, text, text_wrap, created_at, run_id FROM events WHERE seq >= ? AND status = 'pending' ORDER BY seq DESC LIMIT ?")),
    countPendingBySource: p(`SELECT source, count(*) AS n, min(created_at) AS first_at, max(created_at) AS last_at FROM events
      WHERE seq >= ? AND seq < ? AND status = 'pending' GROUP BY source`),
    // where the watermark moves to: the first pending event from it on, else the seq the next event will get
    firstPending: p(`SELECT coalesce((SELECT seq FROM events WHERE seq >= ? AND status = 'pending' ORDER BY seq LIMIT 1),
      (SELECT coalesce(max(seq), 0) + 1 FROM events)) AS seq`),
    // the pending events in a range of seqs (a heartbeat's, to see that it consumed all of them)
    countPendingIn: p("SELECT count(*) AS n FROM events WHERE seq BETWEEN ? AND ? AND status = 'pending'"),
    consumeRange: p('INSERT INTO consumed (to_seq, from_seq, heartbeat_id, consumed_at) VALUES (?, ?, ?, ?)'),
    unfinished: p(`${RUN_COLUMNS} WHERE r.kind = 'hook' AND r.status IN ('queued', 'running') ORDER BY r.seq ASC`),
    startRun: p("UPDATE runs SET status = 'running', started_at = ?, attempts = attempts + 1 WHERE id = ?"),
    requeueRun: p("UPDATE runs SET status = 'queued', attempts = max(attempts - ?, 0) WHERE id = ? AND status = 'running'"),
    // started_at and one attempt are written here when the run's start was still queued (see startRun)
    finishRun: p(`UPDATE runs SET started_at = coalesce(?, started_at), attempts = attempts + ?, status = ?, finished_at = ?, reply = ?,
      summary = ?, error = ?, delivery_status = ?, delivery_reason = ?, delivery_channel = ?, delivery_to = ?, delivery_id = ?, reply_text = ?, reply_wrap = ?
      WHERE id = ?`),
    insertMessage: p('INSERT INTO messages (session_key, role, content, run_id, created_at, content_text, content_wrap) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    // sizes first (from the record headers: the texts are not read), then only the rows that fit
    transcriptSizes: p(`SELECT id, CASE WHEN content_text IS NULL THEN octet_length(content)
      ELSE (SELECT octet_length(body) FROM texts WHERE id = content_text) END AS bytes, content_wrap AS wrap
      FROM messages WHERE session_key = ? ORDER BY id DESC LIMIT ?`),
    transcriptFrom: p(`${MESSAGE_COLUMNS} WHERE m.session_key = ? AND m.id >= ? ORDER BY m.id ASC`),
    consumeEvent: p("UPDATE events SET status = 'consumed', consumed_at = ?, heartbeat_id = ? WHERE seq = ? AND status = 'pending'"),
    // events have no index on id: only for an id this store did not hand out as pending (a table scan)
    consumeEventById: p("UPDATE events SET status = 'consumed', consumed_at = ?, heartbeat_id = ? WHERE id = ? AND seq >= ? AND status = 'pending' RETURNING seq"),
    insertOutbox: p(`INSERT INTO outbox (id, run_id, channel, to_, text, text_ref, text_wrap, status, attempts, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`),
    dueOutbox: p(`SELECT o.*, ${body('o.text_ref')} AS text_body FROM outbox o WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at ASC LIMIT ?`),
    nextOutbox: p("SELECT min(next_attempt_at) AS t FROM outbox WHERE status = 'pending' AND next_attempt_at > ?"),
    updateOutbox: p(`UPDATE outbox SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, updated_at = ?,
      sent_parts = coalesce(?, sent_parts) WHERE id = ?`),
    failHeartbeats: p(`UPDATE runs SET status = 'error', finished_at = ?, error = ?, delivery_status = 'skipped',
      delivery_reason = 'heartbeat did not succeed' WHERE kind = 'heartbeat' AND status IN ('queued', 'running')`),
    getMeta: p('SELECT value FROM meta WHERE key = ?'),
    setMeta: p('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
  };
}

type Statements = ReturnType<typeof statements>;

export class SqliteStore implements Store {
  readonly driver = 'sqlite';
  readonly path: string;
  private readonly db: DatabaseSync;
  private readonly writes: WriteQueue;
  private readonly presync: WalPresync | undefined;
  private commitObserver: ((seconds: number) => void) | undefined;
  private readonly q: Statements;
  private readonly tally: Tally;
  private closed = false;
  /**
   * Where each event handed out by `pendingEvents` is (id → seq), so consuming it needs no index on
   * id. An entry leaves when its event is consumed; ids and seqs never change, so it cannot go stale.
   */
  private readonly pendingSeq = new RecycledMap<string, number>();

  constructor(opts: SqliteStoreOptions) {
    this.path = opts.path;
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    this.db = new DatabaseSync(opts.path);
    // The locking mode comes before the first read: in exclusive mode SQLite then never creates the
    // shared-memory index (`-shm`) and keeps the WAL's index in this process's memory.
    this.db.exec(`PRAGMA busy_timeout = ${opts.busyTimeoutMs ?? 5000}; PRAGMA locking_mode = ${opts.locking === 'normal' ? 'NORMAL' : 'EXCLUSIVE'};`);
    try {
      this.db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${opts.synchronous === 'full' ? 'FULL' : 'NORMAL'}; PRAGMA foreign_keys = OFF;`);
      this.openSchema();
    } catch (err) {
      this.db.close();
      if ((err as { errcode?: number }).errcode === SQLITE_BUSY)
        throw new StoreInUseError(`database ${opts.path} is in use by another process (is another hook-intake serving this data directory?)`, { cause: err });
      throw err;
    }
    this.tally = new Tally(this.db);
    this.q = statements(this.db);
    // With `full`, every commit syncs the WAL itself; in memory there is no file to sync.
    const presync = (this.presync = opts.path === ':memory:' || opts.synchronous === 'full' ? undefined : new WalPresync(`${opts.path}-wal`));
    this.writes = new WriteQueue(
      this.db,
      () => {
        this.metaCache.clear();
        this.tally.rolledBack();
        // starts written by the transaction that rolled back are unwritten again
        for (const [id, at] of this.startsInTx) this.queuedStarts.set(id, at);
        this.startsInTx.clear();
      },
      (ms) => {
        this.startsInTx.clear();
        this.tally.committed();
        presync?.committed();
        this.commitObserver?.(ms / 1000);
      },
    );
  }

  /** Makes the schema on a new file; refuses a file another build made (see sqlite-schema.ts). */
  private openSchema(): void {
    const version = (this.db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    if (version === SCHEMA_VERSION) return;
    const tables = (this.db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
    if (version !== 0 || tables > 0)
      throw new StoreSchemaError(
        `database ${this.path} was made by another build of hook-intake (schema version ${version}, this build uses ${SCHEMA_VERSION}) ` +
          'and cannot be opened: nothing converts it. Move the file away (with its -wal file) to start with an empty store.',
      );
    this.db.exec('BEGIN');
    try {
      this.db.exec(SCHEMA);
      this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      this.db.exec('COMMIT');
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  accept(batch: AcceptBatch): Promise<void> {
    return this.writes.run(() => {
      for (const e of batch.events) this.insertEvent(e);
      for (const r of batch.runs) this.insertRun(r, 'queued', null);
      const i = batch.idempotency;
      if (i) this.q.putIdem.run(i.key, i.status, i.body, i.createdAt, i.expiresAt);
    });
  }

  private insertEvent(e: NewEvent): void {
    const [text, key] = packed(e.text);
    this.q.insertEvent.run(e.id, e.source, text, e.createdAt, e.runId, key);
  }

  /** Returns the id of its message's stored text when the message is long, else null. */
  private insertRun(r: NewRun, status: RunStatus, startedAt: number | null): number | null {
    const [message, key] = packed(r.message);
    const ref = this.longText(message);
    this.q.insertRun.run(
      r.id, r.kind, r.hookName, r.label, (r.trusted ? TRUSTED : 0) | (r.nameTrusted ? NAME_TRUSTED : 0), r.sessionKey, ref === null ? message : '', r.model, r.thinking, r.timeoutSeconds,
      r.wakeMode, r.deliver ? 1 : 0, r.channel, r.to, status, startedAt === null ? 0 : 1, r.createdAt, startedAt, 'pending', ref, key,
    );
    return ref;
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
  private longText(text: string | null): number | null {
    if (text === null || text.length <= LONG_TEXT) return null;
    return Number(this.q.insertText.run(text).lastInsertRowid);
  }

  async getIdempotency(key: string, now: number): Promise<IdempotencyRecord | undefined> {
    const r = this.q.getIdem.get(key, now) as Row | undefined;
    return r
      ? { key: String(r.key), status: Number(r.status), body: String(r.body), createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) }
      : undefined;
  }

  pruneIdempotency(now: number): Promise<number> {
    return this.writes.run(() => Number(this.q.pruneIdem.run(now).changes));
  }

  async getRun(id: string): Promise<Run | undefined> {
    const r = this.q.getRun.get(id) as Row | undefined;
    return r ? toRun(r) : undefined;
  }

  async queuedRun(id: string): Promise<NewRun | undefined> {
    const r = this.q.queuedRun.get(id) as unknown[] | undefined;
    if (!r) return undefined;
    const run = toNewRun(r);
    if (r[17] !== null) this.started.set(id, { message: run.message, ref: Number(r[17]), key: str(r[16]) });
    return run;
  }

  /** One past the highest key of `table`'s rows (`end*` statements). */
  private end(stmt: 'endEvents' | 'endRuns' | 'endMessages'): number {
    return Number((this.q[stmt].get() as { n: number }).n);
  }

  /** A list read in pieces (sqlite-pages.ts), stopped if the store closes meanwhile. */
  private newestFirst<T>(l: Omit<NewestFirst<T>, 'open'>): Promise<T[]> {
    return newestFirst({
      ...l,
      open: () => {
        if (this.closed) throw new Error('the store was closed during a read');
      },
    });
  }

  async listRuns(opts: ListOptions & { status?: RunStatus }): Promise<Run[]> {
    const unfinished = opts.status === 'queued' || opts.status === 'running';
    const stmt = !opts.status ? this.q.listRuns : unfinished ? this.q.listUnfinishedByStatus : this.q.listRunsByStatus;
    return this.newestFirst({
      stmt,
      args: opts.status ? [opts.status] : [],
      key: 'seq',
      floor: 0,
      end: this.end('endRuns'),
      // the index of unfinished runs holds only the rows that pass
      window: unfinished ? Infinity : LIST_WINDOW,
      limit: opts.limit,
      map: toRun,
    });
  }

  async listMessages(sessionKey: string, opts: ListOptions): Promise<SessionMessage[]> {
    // the session's rows through its index, whatever the other sessions hold
    return this.newestFirst({
      stmt: this.q.listMessages,
      args: [sessionKey],
      key: 'id',
      floor: 0,
      end: this.end('endMessages'),
      window: Infinity,
      limit: opts.limit,
      map: toMessage,
    });
  }

  async transcript(sessionKey: string, limit: number, maxBytes = Infinity): Promise<SessionMessage[]> {
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
  }

  private transcriptFrom(sessionKey: string, from: number): SessionMessage[] {
    return (this.q.transcriptFrom.all(sessionKey, from) as Row[]).map(toMessage);
  }

  async listEvents(opts: ListOptions & { status?: EventStatus }): Promise<SystemEvent[]> {
    const from = this.pendingFrom();
    const [stmt, args, floor] =
      opts.status === 'pending'
        ? [this.q.listPendingEvents, [], from]
        : opts.status === 'consumed'
          ? [this.q.listConsumedEvents, [from], 0]
          : [this.q.listEvents, [], 0];
    return this.newestFirst({ stmt, args, key: 'seq', floor, end: this.end('endEvents'), window: LIST_WINDOW, limit: opts.limit, map: toEvent });
  }

  async pendingEvents(limit: number): Promise<SystemEvent[]> {
    return this.handOut(this.q.pendingEvents.all(this.pendingFrom(), limit) as unknown as unknown[][]);
  }

  /**
   * Pending events read as arrays (about half the time of objects for a heartbeat's 200): seq, id, source, text,
   * text_wrap, created_at, run_id. Each one's seq is kept for consuming it (`pendingSeq`).
   */
  private handOut(rows: unknown[][]): SystemEvent[] {
    return rows.map((a) => {
      const id = String(a[1]);
      this.pendingSeq.set(id, Number(a[0]));
      return { id, source: String(a[2]), text: unpacked(a[3], a[4]), status: 'pending', createdAt: Number(a[5]), consumedAt: null, heartbeatId: null, runId: str(a[6]) };
    });
  }

  /**
   * The last backlog handed out: where its shown events start, how many older events were pending below them,
   * and `consumes` then. A heartbeat that consumes the older ones (`consumeOlder`) is recorded without counting
   * them again inside its write, unless events were consumed since.
   */
  private backlog: { shownFrom: number; older: number; consumes: number } | undefined;
  /** Writes that consumed events, counted once committed, for `backlog`. */
  private consumes = 0;

  async pendingBacklog(limit: number): Promise<PendingBacklog> {
    const from = this.pendingFrom();
    const consumes = this.consumes;
    const events = this.handOut((this.q.newestPending.all(from, limit) as unknown as unknown[][]).reverse());
    const older: PendingBacklog['older'] = { count: 0, bySource: {}, firstAt: null, lastAt: null };
    if (events.length < limit) return { events, older }; // every pending event is shown
    const shownFrom = this.pendingSeq.get(events[0]!.id)!;
    // below the shown events, a window of seqs per turn of the event loop: a backlog of millions takes many short turns
    for (let at = from; at < shownFrom; at += LIST_WINDOW) {
      if (at > from) await new Promise((r) => setImmediate(r));
      if (this.closed) throw new Error('the store was closed during a read');
      for (const r of this.q.countPendingBySource.all(at, Math.min(at + LIST_WINDOW, shownFrom)) as Row[]) {
        const n = Number(r.n);
        older.count += n;
        older.bySource[String(r.source)] = (older.bySource[String(r.source)] ?? 0) + n;
        older.firstAt = Math.min(older.firstAt ?? Infinity, Number(r.first_at));
        older.lastAt = Math.max(older.lastAt ?? -Infinity, Number(r.last_at));
      }
    }
    this.backlog = { shownFrom, older: older.count, consumes };
    return { events, older };
  }

  async counts(): Promise<StoreCounts> {
    await this.tally.catchUp(() => this.pendingFrom(), () => this.closed);
    return this.tally.read();
  }

  async unfinishedRuns(): Promise<Run[]> {
    return (this.q.unfinished.all() as Row[]).map(toRun);
  }

  insertHeartbeat(run: NewRun, startedAt: number): Promise<void> {
    return this.writes.run(() => {
      const ref = this.insertRun(run, 'running', startedAt);
      if (ref !== null) this.started.set(run.id, { message: run.message, ref, key: packed(run.message)[1] });
    });
  }

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
  /** Starts written by the transaction under way (see `queuedStarts`). */
  private readonly startsInTx = new Map<string, number>();

  startRun(id: string, at: number): Promise<void> {
    this.queuedStarts.set(id, at);
    return this.writes.run(() => {
      if (this.finishing.has(id)) return; // its finish, in this transaction, writes it
      if (this.takeStart(id) !== undefined) this.q.startRun.run(at, id);
    });
  }

  /** Inside a write: the run's start if it is not written yet, now counted as written by this transaction. */
  private takeStart(id: string): number | undefined {
    const at = this.queuedStarts.get(id);
    if (at === undefined) return undefined;
    this.queuedStarts.delete(id);
    this.startsInTx.set(id, at);
    return at;
  }

  requeueRun(id: string, opts: { refundAttempt: boolean }): Promise<void> {
    this.started.delete(id);
    return this.writes.run(() => {
      this.q.requeueRun.run(opts.refundAttempt ? 1 : 0, id);
    });
  }

  finishRun(o: RunOutcome): Promise<void> {
    this.finishing.add(o.id);
    const done = this.writes.run(() => {
      this.finishing.delete(o.id);
      const startedAt = this.takeStart(o.id);
      const d = o.delivery;
      const [dStatus, dReason, dChannel, dTo, dId] =
        d.kind === 'outbox'
          ? ['pending', null, d.entry.channel, d.entry.to, d.entry.id]
          : ['skipped', d.reason, d.channel ?? null, d.to ?? null, null];
      // a text equal to the run's long message or to the reply refers to the one stored copy
      const mine = this.started.get(o.id);
      const [reply, replyKey, replyRef] = o.reply === null ? [null, null, null] : o.reply === mine?.message ? ['', mine.key, mine.ref] : this.storeText(o.reply);
      this.q.finishRun.run(startedAt ?? null, startedAt === undefined ? 0 : 1, o.status, o.finishedAt, replyRef === null ? reply : null, o.summary, o.error,
        dStatus, dReason, dChannel, dTo, dId, replyRef, replyKey, o.id);
      for (const m of o.messages) {
        const [content, key, ref] =
          m.content === mine?.message ? ['', mine.key, mine.ref] : m.content === o.reply ? [reply!, replyKey, replyRef] : this.storeText(m.content);
        this.q.insertMessage.run(m.sessionKey, m.role, ref === null ? content : '', m.runId, m.createdAt, ref, key);
      }
      if (o.event) this.insertEvent(o.event);
      if (d.kind === 'outbox') {
        const e = d.entry;
        // the reply it delivers is stored already when long
        const [text, key, textRef] = e.text === o.reply ? [reply!, replyKey, replyRef] : this.storeText(e.text);
        this.q.insertOutbox.run(e.id, e.runId, e.channel, e.to, textRef === null ? text : '', textRef, key, e.createdAt, e.createdAt, e.createdAt);
      }
      if (o.consumedEventIds?.length) this.consume(o.consumedEventIds, o.id, o.finishedAt, o.consumeOlder === true);
    });
    done.then(() => this.started.delete(o.id), () => {});
    const consumed = o.consumedEventIds;
    if (!consumed?.length) return done;
    // forgotten once committed: a finish retried alone after its group's transaction failed still finds them
    return done.then(() => {
      this.consumes++;
      for (const id of consumed) this.pendingSeq.delete(id);
      // and those handed out before and consumed as older ones since (a backlog's heartbeat that failed showed them)
      const from = this.pendingFrom();
      for (const [id, seq] of [...this.pendingSeq]) if (seq < from) this.pendingSeq.delete(id);
    });
  }

  /**
   * Inside a write: marks a heartbeat's events consumed and moves the watermark on. A heartbeat shows every
   * pending event, or the newest of a backlog and then consumes the older ones too (`older`), so what it
   * consumes is normally every pending event from the watermark up to the last it showed: one row in
   * `consumed` records that. Any other set (ids this store did not hand out, or events left out in between)
   * is marked row by row.
   */
  private consume(ids: readonly string[], heartbeatId: string, at: number, older: boolean): void {
    const from = this.pendingFrom();
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
      this.putMeta(PENDING_FROM, String(this.firstPendingFrom(last! + 1)));
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
      this.putMeta(PENDING_FROM, String(this.firstPendingFrom(from)));
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
    const b = this.backlog;
    const known = b !== undefined && b.consumes === this.consumes && b.shownFrom === seqs[0] && this.pendingIn(seqs[0]!, last) === seqs.length;
    const n = known ? b.older + seqs.length : this.pendingIn(oldest, last);
    this.q.consumeRange.run(last, oldest, heartbeatId, at);
    this.tally.consumedRange(last, n);
    this.putMeta(PENDING_FROM, String(this.firstPendingFrom(last + 1)));
  }

  /** How many events from seq `first` to `last` are still marked pending (all are pending from the watermark up). */
  private pendingIn(first: number, last: number): number {
    return Number((this.q.countPendingIn.get(first, last) as { n: number }).n);
  }

  /** The first event still marked pending from `seq` on, else the seq the next event will get. */
  private firstPendingFrom(seq: number): number {
    return Number((this.q.firstPending.get(seq) as { seq: number }).seq);
  }

  async dueDeliveries(now: number, limit: number): Promise<Delivery[]> {
    return (this.q.dueOutbox.all(now, limit) as Row[]).map(toDelivery);
  }

  failInterruptedHeartbeats(at: number, reason: string): Promise<number> {
    return this.writes.run(() => Number(this.q.failHeartbeats.run(at, reason).changes));
  }

  async nextDeliveryAt(after?: number): Promise<number | undefined> {
    const t = (this.q.nextOutbox.get(after ?? Number.MIN_SAFE_INTEGER) as { t: number | null }).t;
    return t === null ? undefined : Number(t);
  }

  recordDelivery(a: DeliveryAttempt): Promise<void> {
    return this.writes.run(() => {
      // the run's delivery state is this row (runs.delivery_id): the run's own row is not rewritten
      this.q.updateOutbox.run(a.status, a.attempts, a.nextAttemptAt ?? a.at, a.error ?? null, a.at, a.sentParts ?? null, a.id);
      // the main route changes rarely: write it only when it does
      if (a.status === 'sent' && a.route) this.putMeta('mainRoute', JSON.stringify(a.route));
    });
  }

  /** Meta values read once, then served from memory (this process is the database's only writer). */
  private readonly metaCache = new Map<string, string | undefined>();

  /** Inside a write: stores `value` unless it is already what is stored. */
  private putMeta(key: string, value: string): void {
    if (this.metaCache.has(key) ? this.metaCache.get(key) === value : (this.q.getMeta.get(key) as { value: string } | undefined)?.value === value) return;
    this.q.setMeta.run(key, value);
    this.metaCache.set(key, value);
  }

  async getMeta(key: string): Promise<string | undefined> {
    return this.meta(key);
  }

  private meta(key: string): string | undefined {
    if (this.metaCache.has(key)) return this.metaCache.get(key);
    const v = (this.q.getMeta.get(key) as { value: string } | undefined)?.value;
    this.metaCache.set(key, v);
    return v;
  }

  /**
   * The pending events' watermark: every event with a lower seq is consumed (migration 11). It moves in the
   * transaction that consumes events, through `putMeta`, so a rollback, which clears the cache, takes it back too.
   */
  private pendingFrom(): number {
    return Number(this.meta(PENDING_FROM) ?? 1);
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.writes.run(() => this.putMeta(key, value));
  }

  histograms(): StoreHistogram[] {
    return [
      {
        name: 'hook_intake_store_commit_seconds',
        help: 'Time each group commit of the store took, its statements and COMMIT together; the commit that takes the write-ahead log past 1,000 pages also runs a checkpoint, the slowest kind.',
        buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
        observe: (fn) => (this.commitObserver = fn),
      },
    ];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.writes.drain();
    this.closed = true;
    this.presync?.close();
    this.db.close();
  }
}
