/**
 * The SQLite store read by another process than the one serving from it (`StoreReader`, roles.ts): a
 * read-only connection (SQLite's `readOnly`, and `query_only`), which takes no write lock, so the server
 * goes on committing while it reads. It can read only while the server lets other processes in: with
 * `storage.locking: normal`. With the default `exclusive` the server holds the file's lock, and opening
 * fails with `StoreInUseError` (docs/shadow.md says what to do then).
 */
import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { StoreInUseError, StoreOpenError, StoreSchemaError } from '../errors.ts';
import type { StoreReader } from '../roles.ts';
import type { Run, SystemEvent } from '../types.ts';
import { contractError } from './errors.ts';
import { eventById } from './event-by-id.ts';
import { RequestRows, SqliteKeptRequests } from './requests.ts';
import { toRun, type Row } from './rows.ts';
import { SCHEMA_VERSION } from './schema.ts';
import { statements, type Statements } from './statements.ts';

const SQLITE_BUSY = 5;

export interface SqliteReaderOptions {
  path: string;
  /** How long a read waits for a lock another process holds (default 2000 ms). */
  busyTimeoutMs?: number;
}

export class SqliteReader implements StoreReader {
  readonly driver = 'sqlite';
  readonly requests: SqliteKeptRequests;
  readonly records: StoreReader['records'];
  private readonly db: DatabaseSync;
  private closed = false;

  constructor(opts: SqliteReaderOptions) {
    if (opts.path === ':memory:' || !existsSync(opts.path))
      throw new StoreOpenError(`database ${opts.path} does not exist (has the service run on this data directory?)`);
    const db = (this.db = new DatabaseSync(opts.path, { readOnly: true }));
    let q: Statements;
    try {
      db.exec(`PRAGMA busy_timeout = ${opts.busyTimeoutMs ?? 2000}; PRAGMA query_only = ON;`);
      checkSchema(db, opts.path);
      q = statements(db);
      this.requests = new SqliteKeptRequests(new RequestRows(db), () => this.closed);
    } catch (err) {
      db.close();
      if ((err as { errcode?: number }).errcode === SQLITE_BUSY)
        throw new StoreInUseError(
          `database ${opts.path} is held by the running service (storage.locking: exclusive); set storage.locking: normal to read it beside the service`,
          { cause: err },
        );
      throw err;
    }
    this.records = {
      getRun: async (id: string): Promise<Run | undefined> => {
        try {
          const r = q.getRun.get(id) as Row | undefined;
          return r ? toRun(r) : undefined;
        } catch (err) {
          throw contractError(err);
        }
      },
      getEvent: async (id: string): Promise<SystemEvent | undefined> => {
        try {
          return eventById(q, id);
        } catch (err) {
          throw contractError(err);
        }
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}

/** The file must be of this build's layout: a reader converts nothing. */
function checkSchema(db: DatabaseSync, path: string): void {
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  if (version !== SCHEMA_VERSION)
    throw new StoreSchemaError(
      `database ${path} has schema version ${version}, this build reads ${SCHEMA_VERSION}: start this build's service on it once, or use the build that made it`,
    );
}
