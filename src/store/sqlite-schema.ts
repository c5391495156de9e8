/**
 * Schema migrations, applied in order; `PRAGMA user_version` records how many
 * have run. Append new steps; never edit a released one.
 */
export const SCHEMA: readonly string[] = [
  `CREATE TABLE events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     source TEXT NOT NULL,
     text TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'pending',
     created_at INTEGER NOT NULL,
     consumed_at INTEGER,
     heartbeat_id TEXT,
     run_id TEXT
   );
   CREATE INDEX events_by_status ON events (status, seq);

   CREATE TABLE runs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     kind TEXT NOT NULL,
     hook_name TEXT NOT NULL,
     label TEXT NOT NULL,
     trusted INTEGER NOT NULL,
     session_key TEXT NOT NULL,
     message TEXT NOT NULL,
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
     summary TEXT,
     error TEXT,
     delivery_status TEXT NOT NULL DEFAULT 'pending',
     delivery_reason TEXT,
     delivery_channel TEXT,
     delivery_to TEXT,
     delivery_attempts INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX runs_by_status ON runs (status, seq);

   CREATE TABLE messages (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     session_key TEXT NOT NULL,
     role TEXT NOT NULL,
     content TEXT NOT NULL,
     run_id TEXT,
     created_at INTEGER NOT NULL
   );
   CREATE INDEX messages_by_session ON messages (session_key, id);

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
     status TEXT NOT NULL DEFAULT 'pending',
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL,
     last_error TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX outbox_due ON outbox (status, next_attempt_at);

   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  // how many chunks of a split reply were sent, so a retry resumes after them instead of repeating them
  `ALTER TABLE outbox ADD COLUMN sent_parts INTEGER NOT NULL DEFAULT 0;`,
  // Status indexes only over the states looked up by status on hot paths. Finished runs, consumed
  // events and sent deliveries leave them, so every status change no longer rewrites index pages;
  // the read API's filters on other states scan the table backwards from the newest row.
  `DROP INDEX events_by_status;
   CREATE INDEX events_pending ON events (seq) WHERE status = 'pending';
   DROP INDEX runs_by_status;
   CREATE INDEX runs_unfinished ON runs (seq) WHERE status IN ('queued', 'running');
   DROP INDEX outbox_due;
   CREATE INDEX outbox_pending ON outbox (next_attempt_at) WHERE status = 'pending';`,
  // Events without the unique index on id and without AUTOINCREMENT: every wake is one insert here, and
  // the index and the sqlite_sequence row were two of the pages each commit wrote. Ids are UUIDv7s made
  // by this service and events are looked up by seq; rows are never deleted, so seq still only grows.
  `CREATE TABLE events_v4 (
     seq INTEGER PRIMARY KEY,
     id TEXT NOT NULL,
     source TEXT NOT NULL,
     text TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'pending',
     created_at INTEGER NOT NULL,
     consumed_at INTEGER,
     heartbeat_id TEXT,
     run_id TEXT
   );
   INSERT INTO events_v4 (seq, id, source, text, status, created_at, consumed_at, heartbeat_id, run_id)
     SELECT seq, id, source, text, status, created_at, consumed_at, heartbeat_id, run_id FROM events ORDER BY seq;
   DROP TABLE events;
   ALTER TABLE events_v4 RENAME TO events;
   CREATE INDEX events_pending ON events (seq) WHERE status = 'pending';
   DELETE FROM sqlite_sequence WHERE name = 'events';`,
  // A run's delivery is recorded in its outbox row only: runs.delivery_id names that row, and readers take
  // the delivery's status, attempts and last error from it. Each send's result used to rewrite the run's
  // row as well, a page far from the insert edge when runs wait in a backlog. The run's own delivery_status,
  // delivery_reason and delivery_attempts stay as written at its finish (a skip's reason), and are what
  // runs finished before this step show. Runs whose delivery is still pending are pointed at their entry.
  `ALTER TABLE runs ADD COLUMN delivery_id TEXT;
   UPDATE runs SET delivery_id = o.id FROM outbox o WHERE o.run_id = runs.id AND o.status = 'pending';`,
  // Runs and transcript messages without AUTOINCREMENT: its sqlite_sequence row was one more page
  // written by every commit that inserted either. Neither table deletes rows, so seq and id still only grow.
  `CREATE TABLE runs_v6 (
     seq INTEGER PRIMARY KEY,
     id TEXT NOT NULL UNIQUE,
     kind TEXT NOT NULL,
     hook_name TEXT NOT NULL,
     label TEXT NOT NULL,
     trusted INTEGER NOT NULL,
     session_key TEXT NOT NULL,
     message TEXT NOT NULL,
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
     summary TEXT,
     error TEXT,
     delivery_status TEXT NOT NULL DEFAULT 'pending',
     delivery_reason TEXT,
     delivery_channel TEXT,
     delivery_to TEXT,
     delivery_attempts INTEGER NOT NULL DEFAULT 0,
     delivery_id TEXT
   );
   INSERT INTO runs_v6 SELECT seq, id, kind, hook_name, label, trusted, session_key, message, model, thinking, timeout_seconds,
     wake_mode, deliver, channel, to_, status, attempts, created_at, started_at, finished_at, reply, summary, error,
     delivery_status, delivery_reason, delivery_channel, delivery_to, delivery_attempts, delivery_id FROM runs ORDER BY seq;
   DROP TABLE runs;
   ALTER TABLE runs_v6 RENAME TO runs;
   CREATE INDEX runs_unfinished ON runs (seq) WHERE status IN ('queued', 'running');
   CREATE TABLE messages_v6 (
     id INTEGER PRIMARY KEY,
     session_key TEXT NOT NULL,
     role TEXT NOT NULL,
     content TEXT NOT NULL,
     run_id TEXT,
     created_at INTEGER NOT NULL
   );
   INSERT INTO messages_v6 (id, session_key, role, content, run_id, created_at)
     SELECT id, session_key, role, content, run_id, created_at FROM messages ORDER BY id;
   DROP TABLE messages;
   ALTER TABLE messages_v6 RENAME TO messages;
   CREATE INDEX messages_by_session ON messages (session_key, id);
   DELETE FROM sqlite_sequence WHERE name IN ('runs', 'messages');`,
  // Long texts out of line: a run's message and reply, and transcript lines that repeat them, longer than
  // LONG_TEXT characters are stored once in `texts` and referred to by rowid (the inline column then holds
  // ''). A status change then rewrites the run's small row, not the overflow pages of a 100 KiB message,
  // and the transcript does not store the message and reply a second time. Rows written before this step
  // keep their texts inline (the reference is NULL).
  `CREATE TABLE texts (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
   ALTER TABLE runs ADD COLUMN message_text INTEGER;
   ALTER TABLE runs ADD COLUMN reply_text INTEGER;
   ALTER TABLE messages ADD COLUMN content_text INTEGER;`,
  // A delivery's long text out of line too: the outbox row refers to the run's stored reply (or a text of
  // its own), so a 100 KiB reply is not written a third time, and the send's result, which changes the
  // row's size, rewrites a small row rather than its overflow pages. Older entries keep their text inline.
  `ALTER TABLE outbox ADD COLUMN text_ref INTEGER;`,
  // Texts that hold a safety boundary stored without its notice and marker lines, which are rebuilt on
  // reading from the key in the matching *_wrap column (runtime/safety.ts, packBoundary): they were about
  // 380 of the 500 characters of a wrapped one-line message, in every wake's event, run, transcript line,
  // summary event and delivery. Rows written before this step keep their texts whole (the key is NULL).
  `ALTER TABLE runs ADD COLUMN message_wrap TEXT;
   ALTER TABLE runs ADD COLUMN reply_wrap TEXT;
   ALTER TABLE messages ADD COLUMN content_wrap TEXT;
   ALTER TABLE events ADD COLUMN text_wrap TEXT;
   ALTER TABLE outbox ADD COLUMN text_wrap TEXT;`,
  // A session made for one run (`hook:<the run's id>`, runtime/sessions.ts) starts with that run's message and
  // reply, which the run's row holds already: a successful run of such a session writes no transcript rows and
  // sets own_lines = 1, and a read of the session's transcript rebuilds its first two lines from the run. Two
  // rows and their index entries fewer for most agent requests. Rows written before this step have NULL.
  `ALTER TABLE runs ADD COLUMN own_lines INTEGER;`,
  // Pending events found from a watermark instead of a partial index: meta 'eventsPendingFrom' is a seq below which
  // every event is consumed, moved on in the transaction that consumes events (heartbeats take the oldest first),
  // and the heartbeat reads forward from it by rowid. Every wake and summary event was an insert into the index, and
  // every consumed one a delete from it: a page or two of each commit.
  `INSERT OR REPLACE INTO meta (key, value) VALUES ('eventsPendingFrom', CAST(coalesce((SELECT min(seq) FROM events WHERE status = 'pending'),
     (SELECT coalesce(max(seq), 0) + 1 FROM events)) AS TEXT));
   DROP INDEX events_pending;`,
  // Events consumed by range: a heartbeat takes the oldest pending events, so what it consumes is every event
  // from the watermark up to the last one it read. One row here records that (the heartbeat, when, and the
  // range of seqs) where each event's row was updated before: 200 updates a full heartbeat, rows that grew
  // by the heartbeat's id and spread over a dozen pages. An event's row keeps status 'pending'; it is
  // consumed when a range covers it (readers join this table), and every range lies below the watermark.
  // Keyed by the range's last seq: heartbeats append, and the range holding seq s is the first ending at
  // or after s. Events consumed before this step keep their rows' status.
  `CREATE TABLE consumed (
     to_seq INTEGER PRIMARY KEY,
     from_seq INTEGER NOT NULL,
     heartbeat_id TEXT NOT NULL,
     consumed_at INTEGER NOT NULL
   );`,
];

export const SCHEMA_VERSION = SCHEMA.length;
