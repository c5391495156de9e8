/**
 * Kept hook requests (the request log, SPEC §12): one row each, its headers and actions as JSON, its body as
 * a blob. Written in the transaction that stores the request's events and runs; never updated after.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { KeptAction, KeptRequest, RequestListOptions } from '../types.ts';
import { LIST_WINDOW, type NewestFirst } from './pages.ts';
import { str, type Row } from './rows.ts';

const COLUMNS = 'SELECT seq, id, hook, mapping_id, url, headers, body, received_at, status, actions, replay_of FROM requests';

export function requestStatements(db: DatabaseSync) {
  const p = (sql: string) => db.prepare(sql);
  return {
    insert: p(`INSERT INTO requests (id, hook, mapping_id, url, headers, body, received_at, status, actions, replay_of)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    get: p(`${COLUMNS} WHERE id = ?`),
    seqOf: p('SELECT seq FROM requests WHERE id = ?'),
    end: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM requests'),
    // lists: [from, below, (hook, status filters as given), n], newest first; a filter left out passes everything
    list: p(`${COLUMNS} WHERE seq >= ? AND seq < ? AND (? IS NULL OR hook = ?) AND (? IS NULL OR status = ?) ORDER BY seq DESC LIMIT ?`),
  };
}

type RequestStatements = ReturnType<typeof requestStatements>;

export class KeptRequests {
  private readonly q: RequestStatements;

  constructor(db: DatabaseSync) {
    this.q = requestStatements(db);
  }

  /** Inside a write. */
  insert(r: KeptRequest): void {
    this.q.insert.run(r.id, r.hook, r.mappingId, r.url, JSON.stringify(r.headers), r.body, r.receivedAt, r.status, JSON.stringify(r.actions), r.replayOf);
  }

  get(id: string): KeptRequest | undefined {
    const r = this.q.get.get(id) as Row | undefined;
    return r ? toRequest(r) : undefined;
  }

  /** The list read for `newestFirst` (pages.ts); undefined when `before` names no kept request. */
  list(opts: RequestListOptions): Omit<NewestFirst<KeptRequest>, 'open'> | undefined {
    let end = Number((this.q.end.get() as { n: number }).n);
    if (opts.before !== undefined) {
      const at = this.q.seqOf.get(opts.before) as { seq: number } | undefined;
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
      map: toRequest,
    };
  }
}

function toRequest(r: Row): KeptRequest {
  return {
    id: String(r.id),
    hook: String(r.hook),
    mappingId: str(r.mapping_id),
    url: String(r.url),
    headers: JSON.parse(String(r.headers)) as Record<string, string>,
    body: r.body as Uint8Array,
    receivedAt: Number(r.received_at),
    status: Number(r.status),
    actions: JSON.parse(String(r.actions)) as KeptAction[],
    replayOf: str(r.replay_of),
  };
}
