/**
 * Kept hook requests (the request log, docs/http.md, "Kept requests"; `Store.requests`): one row each, its headers and actions as JSON, its body as
 * a blob. Written in the transaction that stores the request's events and runs; never updated after.
 *
 * A body of 4 KiB or more that compresses well is stored compressed (`compressed`).
 *
 * A kept request's id is made from its row: a UUIDv7 whose timestamp is `received_at` and whose random
 * bits are its `seq`. A lookup by id reads the row by its key, so the table needs no index of ids, which
 * would add to each accepted request's write (measured: docs/performance.md, "Gaps to the targets"). `seq` is never reused:
 * retention keeps the newest row (prune.ts), and the timestamp tells a reused one apart anyway.
 */
import type { DatabaseSync } from 'node:sqlite';
import { brotliCompressSync, brotliDecompressSync, constants as zlibConstants } from 'node:zlib';
import type { KeptAction, KeptRequest, KeptRequestSummary, NewKeptRequest, RequestListOptions } from '../types.ts';
import type { KeptRequests } from '../roles.ts';
import { contractError } from './errors.ts';
import { LIST_WINDOW, newestFirst, stillOpen, type NewestFirst } from './pages.ts';
import { str, type Row } from './rows.ts';

const COLUMNS =
  'SELECT seq, hook, mapping_id, url, body_bytes, headers, body, body_brotli, received_at, status, actions, replay_of, reason FROM requests LEFT JOIN request_reasons USING (seq)';
// a list's columns: none after them is read, so a large body's pages are not
const SUMMARY_COLUMNS =
  'SELECT seq, hook, mapping_id, url, body_bytes, received_at, status, actions, replay_of, reason FROM requests LEFT JOIN request_reasons USING (seq)';

export function requestStatements(db: DatabaseSync) {
  const p = (sql: string) => db.prepare(sql);
  return {
    insert: p(`INSERT INTO requests (hook, mapping_id, url, headers, body, body_bytes, body_brotli, received_at, status, actions, replay_of)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    insertReason: p('INSERT INTO request_reasons (seq, reason) VALUES (?, ?)'),
    get: p(`${COLUMNS} WHERE seq = ?`),
    end: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM requests'),
    // lists: [from, below, (hook, status filters as given), n], newest first; a filter left out passes everything
    list: p(
      `${SUMMARY_COLUMNS} WHERE seq >= ? AND seq < ? AND (? IS NULL OR hook = ?) AND (? IS NULL OR status = ?) ORDER BY seq DESC LIMIT ?`,
    ),
  };
}

type RequestStatements = ReturnType<typeof requestStatements>;

// the timestamp part of the last id: the requests of one commit mostly share it
let lastMs = -1;
let lastPrefix = '';

/** The id of the row `seq` received at `receivedAt` (ms): `tttttttt-tttt-7000-8sss-ssssssssssss`. */
export function requestId(seq: number, receivedAt: number): string {
  const ms = Math.max(0, Math.floor(receivedAt));
  if (ms !== lastMs) {
    const t = ms.toString(16).padStart(12, '0');
    lastMs = ms;
    lastPrefix = `${t.slice(0, 8)}-${t.slice(8)}-7000-8`;
  }
  const s = seq.toString(16).padStart(15, '0');
  return `${lastPrefix}${s.slice(0, 3)}-${s.slice(3)}`;
}

const ID = /^([0-9a-f]{8})-([0-9a-f]{4})-7000-8([0-9a-f]{3})-([0-9a-f]{12})$/;

/** The row an id names, or undefined when it is not one this driver made. */
function parseId(id: string): { seq: number; receivedAt: number } | undefined {
  const m = ID.exec(id);
  if (!m) return undefined;
  const seq = parseInt(m[3]! + m[4]!, 16);
  return Number.isSafeInteger(seq) ? { seq, receivedAt: parseInt(m[1]! + m[2]!, 16) } : undefined;
}

/** The rows of kept requests: written inside `accept`'s transaction, read by `SqliteKeptRequests`. */
export class RequestRows {
  private readonly q: RequestStatements;

  constructor(db: DatabaseSync) {
    this.q = requestStatements(db);
  }

  /** Inside a write; returns the kept request's id. */
  insert(r: NewKeptRequest): string {
    const stored = compressed(r.body);
    const { lastInsertRowid } = this.q.insert.run(
      r.hook,
      r.mappingId,
      r.url,
      JSON.stringify(r.headers),
      stored ?? r.body,
      r.bodyBytes ?? r.body.byteLength,
      stored ? 1 : 0,
      r.receivedAt,
      r.status,
      JSON.stringify(r.actions),
      r.replayOf,
    );
    if (r.reason) this.q.insertReason.run(lastInsertRowid, r.reason);
    return requestId(Number(lastInsertRowid), r.receivedAt);
  }

  get(id: string): KeptRequest | undefined {
    const row = this.row(id);
    return row ? toRequest(row) : undefined;
  }

  private row(id: string): Row | undefined {
    const at = parseId(id);
    if (!at) return undefined;
    const r = this.q.get.get(at.seq) as Row | undefined;
    return r && Math.floor(Number(r.received_at)) === at.receivedAt ? r : undefined;
  }

  /** The list read for `newestFirst` (pages.ts); undefined when `before` names no kept request. */
  list(opts: RequestListOptions): Omit<NewestFirst<KeptRequestSummary>, 'open'> | undefined {
    let end = Number((this.q.end.get() as { n: number }).n);
    if (opts.before !== undefined) {
      const at = this.row(opts.before);
      if (!at) return undefined;
      end = Number(at.seq);
    }
    const hook = opts.hook ?? null;
    const status = opts.status ?? null;
    return {
      stmt: this.q.list,
      args: [hook, hook, status, status],
      key: 'seq',
      floor: 0,
      end,
      window: hook === null && status === null ? Infinity : LIST_WINDOW,
      limit: opts.limit,
      map: toSummary,
    };
  }
}

/** The request log (`KeptRequests`) over the rows; a failure of the disk is the contract's error. */
export class SqliteKeptRequests implements KeptRequests {
  private readonly rows: RequestRows;
  private readonly closed: () => boolean;

  constructor(rows: RequestRows, closed: () => boolean) {
    this.rows = rows;
    this.closed = closed;
  }

  async get(id: string): Promise<KeptRequest | undefined> {
    try {
      return this.rows.get(id);
    } catch (err) {
      throw contractError(err);
    }
  }

  async list(opts: RequestListOptions): Promise<KeptRequestSummary[]> {
    try {
      const list = this.rows.list(opts);
      return list ? await newestFirst({ ...list, open: () => stillOpen(this.closed) }) : [];
    } catch (err) {
      throw contractError(err);
    }
  }
}

/** The columns a list and a single read share. */
function common(r: Row): Omit<KeptRequest, 'headers' | 'body'> {
  return {
    id: requestId(Number(r.seq), Number(r.received_at)),
    hook: String(r.hook),
    mappingId: str(r.mapping_id),
    url: String(r.url),
    receivedAt: Number(r.received_at),
    status: Number(r.status),
    actions: JSON.parse(String(r.actions)) as KeptAction[],
    replayOf: str(r.replay_of),
    reason: str(r.reason),
    bodyBytes: Number(r.body_bytes),
  };
}

function toSummary(r: Row): KeptRequestSummary {
  return common(r);
}

function toRequest(r: Row): KeptRequest {
  const body = r.body as Uint8Array;
  return {
    ...common(r),
    headers: JSON.parse(String(r.headers)) as Record<string, string>,
    body: r.body_brotli ? new Uint8Array(brotliDecompressSync(body)) : body,
  };
}

/** Bodies shorter than this are stored as received: compressing them saves less than a page. */
export const COMPRESS_FROM_BYTES = 4096;
/** Compressed by at least this much, or stored as received. */
const MIN_RATIO = 1.5;
const FAST = { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 0 } };

/**
 * A long body compressed (Brotli, its fastest setting), or undefined to store it as received. A kept
 * request is read only when an operator looks at it, and a long body's pages cost more to write to
 * the log and copy into the database at a checkpoint than compressing costs (measured: docs/performance.md,
 * "Gaps to the targets").
 * Its first 4 KiB are tried first, so a body that does not compress (an encoded attachment) costs
 * little before it is stored as it is.
 */
function compressed(body: Uint8Array): Buffer | undefined {
  if (body.byteLength < COMPRESS_FROM_BYTES) return undefined;
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (brotliCompressSync(bytes.subarray(0, COMPRESS_FROM_BYTES), FAST).byteLength * MIN_RATIO > COMPRESS_FROM_BYTES) return undefined;
  const out = brotliCompressSync(bytes, FAST);
  return out.byteLength * MIN_RATIO <= bytes.byteLength ? out : undefined;
}
