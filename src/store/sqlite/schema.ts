/**
 * The SQLite schema, made whole on a new file. `PRAGMA user_version` records SCHEMA_VERSION; a file with
 * any other version (or with tables but no version) was made by another build and is refused at open:
 * nothing converts it. A change to the schema takes a new version number.
 *
 * Long texts (a run's message and reply, a transcript line, a delivery's text and its parts as a JSON array,
 * longer than LONG_TEXT) are kept once in `texts` and referred to by id (`*_text`, `text_ref`, `parts_ref`);
 * the inline column then holds '' (NULL for `parts`).
 * A text holding safety boundaries is kept without their notice and marker lines, which the key in the
 * matching `*_wrap` column rebuilds. Events below the meta value `eventsPendingFrom` are all consumed;
 * a heartbeat that consumes the oldest pending events records the range in `consumed` rather than each row.
 */
import type { DatabaseSync } from 'node:sqlite';
import { StoreSchemaError } from '../errors.ts';

export const SCHEMA = `
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    source TEXT NOT NULL,
    text TEXT NOT NULL,
    text_wrap TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    created_at INTEGER NOT NULL,
    consumed_at INTEGER,
    heartbeat_id TEXT,
    run_id TEXT
  );

  CREATE TABLE consumed (
    to_seq INTEGER PRIMARY KEY,
    from_seq INTEGER NOT NULL,
    heartbeat_id TEXT NOT NULL,
    consumed_at INTEGER NOT NULL
  );

  CREATE TABLE runs (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    hook_name TEXT NOT NULL,
    label TEXT NOT NULL,
    trusted INTEGER NOT NULL,
    session_key TEXT NOT NULL,
    message TEXT NOT NULL,
    message_text INTEGER,
    message_wrap TEXT,
    model TEXT NOT NULL,
    thinking TEXT,
    timeout_seconds REAL NOT NULL,
    wake_mode TEXT NOT NULL,
    deliver INTEGER NOT NULL,
    channel TEXT NOT NULL,
    to_ TEXT,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    reply TEXT,
    reply_text INTEGER,
    reply_wrap TEXT,
    summary TEXT,
    error TEXT,
    delivery_status TEXT NOT NULL DEFAULT 'pending',
    delivery_reason TEXT,
    delivery_channel TEXT,
    delivery_to TEXT,
    delivery_attempts INTEGER NOT NULL DEFAULT 0,
    delivery_id TEXT
  );
  CREATE INDEX runs_unfinished ON runs (seq) WHERE status IN ('queued', 'running');
  -- who refers to a long text, for retention: only rows with a long text have entries
  CREATE INDEX runs_message_text ON runs (message_text) WHERE message_text IS NOT NULL;
  CREATE INDEX runs_reply_text ON runs (reply_text) WHERE reply_text IS NOT NULL;

  CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    content_text INTEGER,
    content_wrap TEXT,
    run_id TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX messages_by_session ON messages (session_key, id);
  CREATE INDEX messages_content_text ON messages (content_text) WHERE content_text IS NOT NULL;

  CREATE TABLE texts (id INTEGER PRIMARY KEY, body TEXT NOT NULL);

  CREATE TABLE idempotency (
    key TEXT PRIMARY KEY,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX idempotency_by_expiry ON idempotency (expires_at);

  CREATE TABLE outbox (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    to_ TEXT,
    text TEXT NOT NULL,
    text_ref INTEGER,
    text_wrap TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error TEXT,
    parts TEXT,
    parts_ref INTEGER,
    sent_parts INTEGER NOT NULL DEFAULT 0,
    ambiguous_part INTEGER,
    main_session INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX outbox_pending ON outbox (next_attempt_at) WHERE status = 'pending';
  CREATE INDEX outbox_text_ref ON outbox (text_ref) WHERE text_ref IS NOT NULL;
  CREATE INDEX outbox_parts_ref ON outbox (parts_ref) WHERE parts_ref IS NOT NULL;

  -- the headers and body last: a list reads the columns before them without reading a large body's pages
  CREATE TABLE requests (
    seq INTEGER PRIMARY KEY,
    hook TEXT NOT NULL,
    mapping_id TEXT,
    url TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    status INTEGER NOT NULL,
    actions TEXT NOT NULL,
    replay_of TEXT,
    -- the body's size as received; body_brotli 1: the body is stored compressed (requests.ts)
    body_bytes INTEGER NOT NULL,
    body_brotli INTEGER NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL
  );

  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  INSERT INTO meta (key, value) VALUES ('eventsPendingFrom', '1');
`;

/**
 * The version of `SCHEMA`, and the oldest a file may have to be opened: a file of version 16 or later is
 * brought up to date by `MIGRATIONS`. Below it, a development build's files (1 to 12, and 13 to 15, which
 * lacked the outbox's parts, the kept requests and their ids' column) are refused.
 */
export const BASE_VERSION = 16;

/**
 * The steps from one version to the next, in order: `MIGRATIONS[i]` takes a file from version
 * `BASE_VERSION + i` to `BASE_VERSION + i + 1`, in one transaction with its version. A new file is
 * made by `SCHEMA` and then every step, so there is one way to each version. A step only adds (a
 * column with a default, a table, an index): a file written by an older build reads on.
 */
export const MIGRATIONS: readonly string[] = [
  // a run's token usage, as its provider reported it (NULL: none reported)
  'ALTER TABLE runs ADD COLUMN input_tokens INTEGER; ALTER TABLE runs ADD COLUMN output_tokens INTEGER;',
  // why a kept request ran nothing (a refusal's code, a skip's reason), beside its row: the requests
  // table keeps its body last, so that a list reads no body's pages
  'CREATE TABLE request_reasons (seq INTEGER PRIMARY KEY, reason TEXT NOT NULL);',
  // a wake's key for coalescing (docs/http.md, "Wake coalescing")
  'ALTER TABLE events ADD COLUMN coalesce_key TEXT;',
  // a run the `gateway` provider forwarded: {"runId": …} as JSON, NULL for any other run
  'ALTER TABLE runs ADD COLUMN forwarded TEXT;',
  // the hook a run came from (`Run.hookId`); outbox entries that send a lifecycle event to a callback
  // (`Delivery.event`), listed by run through an index that holds only them
  `ALTER TABLE runs ADD COLUMN hook_id TEXT;
  ALTER TABLE outbox ADD COLUMN event TEXT;
  CREATE INDEX outbox_callbacks ON outbox (run_id) WHERE event IS NOT NULL;`,
  // the agent a run runs on (NULL for a delivery without a model, and for a run stored before agents had ids)
  'ALTER TABLE runs ADD COLUMN agent_id TEXT;',
];

export const SCHEMA_VERSION = BASE_VERSION + MIGRATIONS.length;

/** Makes the schema on a new file, brings an older file up to date; refuses one another build made. */
export function openSchema(db: DatabaseSync, path: string): void {
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  if (version === SCHEMA_VERSION) return;
  const tables = (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
  if (version === 0 && tables === 0) inTransaction(db, `${SCHEMA}\nPRAGMA user_version = ${BASE_VERSION};`);
  else if (version < BASE_VERSION || version > SCHEMA_VERSION)
    throw new StoreSchemaError(
      `database ${path} was made by another build of hook-intake (schema version ${version}, this build reads ${BASE_VERSION} to ${SCHEMA_VERSION}) ` +
        'and cannot be opened: nothing converts it. Move the file away (with its -wal file) to start with an empty store.',
    );
  const from = version === 0 ? BASE_VERSION : version;
  for (let v = from; v < SCHEMA_VERSION; v++) inTransaction(db, `${MIGRATIONS[v - BASE_VERSION]}\nPRAGMA user_version = ${v + 1};`);
}

function inTransaction(db: DatabaseSync, sql: string): void {
  db.exec('BEGIN');
  try {
    db.exec(sql);
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
