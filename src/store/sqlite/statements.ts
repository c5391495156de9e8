/** Every statement the SQLite driver runs, prepared once per connection. */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { body, CLAIM_COLUMNS, EVENT_COLUMNS, MESSAGE_COLUMNS, QUEUED_COLUMNS, RUN_COLUMNS } from './rows.ts';

/** The prepared statements, by name. */
export function statements(db: DatabaseSync) {
  const p = (sql: string) => db.prepare(sql);
  const arrays = (stmt: StatementSync) => {
    stmt.setReturnArrays(true);
    return stmt;
  };
  return {
    insertEvent: p(
      "INSERT INTO events (id, source, text, status, created_at, run_id, text_wrap, coalesce_key) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)",
    ),
    // the newest pending event, for a wake that coalesces (from the watermark up: below it every event is consumed)
    lastPending: arrays(p("SELECT id, coalesce_key FROM events WHERE seq >= ? AND status = 'pending' ORDER BY seq DESC LIMIT 1")),
    insertRun: p(`INSERT INTO runs (id, kind, hook_name, label, trusted, session_key, message, model, thinking, timeout_seconds,
      wake_mode, deliver, channel, to_, status, attempts, created_at, started_at, delivery_status, message_text, message_wrap, hook_id, agent_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    insertText: p('INSERT INTO texts (body) VALUES (?)'),
    putIdem: p('INSERT OR REPLACE INTO idempotency (key, status, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?)'),
    getIdem: p('SELECT key, status, body, created_at, expires_at FROM idempotency WHERE key = ? AND expires_at > ?'),
    pruneIdem: p('DELETE FROM idempotency WHERE expires_at <= ?'),
    getRun: p(`${RUN_COLUMNS} WHERE r.id = ?`),
    queuedRun: arrays(p(`${QUEUED_COLUMNS} WHERE id = ? AND status = 'queued'`)),
    // lists: the rows with keys in [from, below) that pass, newest first (read in pieces, see `newestFirst`)
    listRuns: p(`${RUN_COLUMNS} WHERE r.seq >= ? AND r.seq < ? ORDER BY r.seq DESC LIMIT ?`),
    listRunsByStatus: p(`${RUN_COLUMNS} WHERE r.seq >= ? AND r.seq < ? AND r.status = ? ORDER BY r.seq DESC LIMIT ?`),
    // any filter: [from, below, status, status, hook, hook, session, session, n]; a filter left out (null) passes everything;
    // the hook's name holds the text in any case (ASCII), the session key holds it as given
    listRunsFiltered:
      p(`${RUN_COLUMNS} WHERE r.seq >= ? AND r.seq < ? AND (? IS NULL OR r.status = ?) AND (? IS NULL OR instr(lower(r.hook_name), lower(?)) > 0)
      AND (? IS NULL OR instr(r.session_key, ?) > 0) ORDER BY r.seq DESC LIMIT ?`),
    // queued and running runs from the index of unfinished ones, not a walk back through every finished run
    listUnfinishedByStatus: p(`${RUN_COLUMNS.replace('FROM runs r', 'FROM runs r INDEXED BY runs_unfinished')}
      WHERE r.seq >= ? AND r.seq < ? AND r.status IN ('queued', 'running') AND r.status = ? ORDER BY r.seq DESC LIMIT ?`),
    listMessages: p(`${MESSAGE_COLUMNS.replace('FROM messages m', 'FROM messages m INDEXED BY messages_by_session')}
      WHERE m.id >= ? AND m.id < ? AND m.session_key = ? ORDER BY m.id DESC LIMIT ?`),
    listEvents: p(`${EVENT_COLUMNS} WHERE e.seq >= ? AND e.seq < ? ORDER BY e.seq DESC LIMIT ?`),
    // below the watermark every event is consumed (by its row or by a range); from it on, those marked pending are pending
    listPendingEvents: p("SELECT * FROM events WHERE seq >= ? AND seq < ? AND status = 'pending' ORDER BY seq DESC LIMIT ?"),
    listConsumedEvents: p(
      `${EVENT_COLUMNS} WHERE e.seq >= ? AND e.seq < ? AND (e.seq < ? OR e.status = 'consumed') ORDER BY e.seq DESC LIMIT ?`,
    ),
    // one past each table's highest key, where a list starts
    endEvents: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM events'),
    endRuns: p('SELECT coalesce(max(seq), 0) + 1 AS n FROM runs'),
    endMessages: p('SELECT coalesce(max(id), 0) + 1 AS n FROM messages'),
    // forward from the watermark (see `pendingFrom`): the events below it are all consumed
    pendingEvents: arrays(
      p(
        "SELECT seq, id, source, text, text_wrap, created_at, run_id FROM events WHERE seq >= ? AND status = 'pending' ORDER BY seq ASC LIMIT ?",
      ),
    ),
    // a backlog (see `pendingBacklog`): its newest events, from the top down, then the older ones counted a window at a time
    newestPending: arrays(
      p(
        "SELECT seq, id, source, text, text_wrap, created_at, run_id FROM events WHERE seq >= ? AND status = 'pending' ORDER BY seq DESC LIMIT ?",
      ),
    ),
    countPendingBySource: p(`SELECT source, count(*) AS n, min(created_at) AS first_at, max(created_at) AS last_at FROM events
      WHERE seq >= ? AND seq < ? AND status = 'pending' GROUP BY source`),
    // an event by id without an index on id (event-by-id.ts): the first row from a seq on, then one range of seqs
    eventFrom: p('SELECT seq, created_at FROM events WHERE seq >= ? ORDER BY seq LIMIT 1'),
    eventInRange: p(`${EVENT_COLUMNS} WHERE e.seq >= ? AND e.seq < ? AND e.id = ?`),
    eventScan: p(`${EVENT_COLUMNS} WHERE e.id = ?`),
    // where the watermark moves to: the first pending event from it on, else the seq the next event will get
    firstPending: p(`SELECT coalesce((SELECT seq FROM events WHERE seq >= ? AND status = 'pending' ORDER BY seq LIMIT 1),
      (SELECT coalesce(max(seq), 0) + 1 FROM events)) AS seq`),
    // the pending events in a range of seqs (a heartbeat's, to see that it consumed all of them)
    countPendingIn: p("SELECT count(*) AS n FROM events WHERE seq BETWEEN ? AND ? AND status = 'pending'"),
    consumeRange: p('INSERT INTO consumed (to_seq, from_seq, heartbeat_id, consumed_at) VALUES (?, ?, ?, ?)'),
    unfinished: p(`${RUN_COLUMNS} WHERE r.kind != 'heartbeat' AND r.status IN ('queued', 'running') ORDER BY r.seq ASC`),
    // the queue of runs: what is in it at open, and a run it hands out, by seq
    unfinishedSeqs: arrays(
      p("SELECT seq FROM runs INDEXED BY runs_unfinished WHERE status IN ('queued', 'running') AND kind != 'heartbeat' ORDER BY seq"),
    ),
    claimRun: arrays(p(`${CLAIM_COLUMNS} WHERE seq = ?`)),
    startRun: p("UPDATE runs SET status = 'running', started_at = ?, attempts = attempts + 1 WHERE id = ?"),
    requeueRun: p("UPDATE runs SET status = 'queued', attempts = max(attempts - ?, 0) WHERE id = ? AND status = 'running'"),
    // started_at and one attempt are written here when the run's start was still queued (see startRun)
    finishRun: p(`UPDATE runs SET started_at = coalesce(?, started_at), attempts = attempts + ?, status = ?, finished_at = ?, reply = ?,
      summary = ?, error = ?, delivery_status = ?, delivery_reason = ?, delivery_channel = ?, delivery_to = ?, delivery_id = ?, reply_text = ?, reply_wrap = ?,
      input_tokens = ?, output_tokens = ?, forwarded = ? WHERE id = ?`),
    insertMessage: p(
      'INSERT INTO messages (session_key, role, content, run_id, created_at, content_text, content_wrap) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    // sizes first (from the record headers: the texts are not read), then only the rows that fit
    transcriptSizes: p(`SELECT id, CASE WHEN content_text IS NULL THEN octet_length(content)
      ELSE (SELECT octet_length(body) FROM texts WHERE id = content_text) END AS bytes, content_wrap AS wrap
      FROM messages WHERE session_key = ? ORDER BY id DESC LIMIT ?`),
    transcriptFrom: p(`${MESSAGE_COLUMNS} WHERE m.session_key = ? AND m.id >= ? ORDER BY m.id ASC`),
    consumeEvent: p("UPDATE events SET status = 'consumed', consumed_at = ?, heartbeat_id = ? WHERE seq = ? AND status = 'pending'"),
    // events have no index on id: only for an id this store did not hand out as pending (a table scan)
    consumeEventById: p(
      "UPDATE events SET status = 'consumed', consumed_at = ?, heartbeat_id = ? WHERE id = ? AND seq >= ? AND status = 'pending' RETURNING seq",
    ),
    insertOutbox:
      p(`INSERT INTO outbox (id, run_id, channel, to_, text, text_ref, text_wrap, status, attempts, next_attempt_at, created_at, updated_at, main_session, event)
      VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?)`),
    dueOutbox: p(`SELECT o.*, ${body('o.text_ref')} AS text_body, ${body('o.parts_ref')} AS parts_body FROM outbox o
      WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at ASC LIMIT ?`),
    runCallbacks: p(`SELECT o.*, ${body('o.text_ref')} AS text_body, NULL AS parts_body FROM outbox o INDEXED BY outbox_callbacks
      WHERE run_id = ? AND event IS NOT NULL ORDER BY rowid`),
    nextOutbox: p("SELECT min(next_attempt_at) AS t FROM outbox WHERE status = 'pending' AND next_attempt_at > ?"),
    // parts and the ambiguous part change only when given (the flag before each says so); a long parts list is in texts
    updateOutbox: p(`UPDATE outbox SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, updated_at = ?,
      sent_parts = coalesce(?, sent_parts), parts = CASE WHEN ? THEN ? ELSE parts END, parts_ref = CASE WHEN ? THEN ? ELSE parts_ref END,
      ambiguous_part = CASE WHEN ? THEN ? ELSE ambiguous_part END WHERE id = ?`),
    // a redelivery: the run's delivery is the new outbox entry from now on
    redeliverRun: p(
      "UPDATE runs SET delivery_status = 'pending', delivery_reason = NULL, delivery_channel = ?, delivery_to = ?, delivery_id = ? WHERE id = ?",
    ),
    failHeartbeats: p(`UPDATE runs SET status = 'error', finished_at = ?, error = ?, delivery_status = 'skipped',
      delivery_reason = 'heartbeat did not succeed' WHERE kind = 'heartbeat' AND status IN ('queued', 'running')`),
    getMeta: p('SELECT value FROM meta WHERE key = ?'),
    setMeta: p('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
  };
}

export type Statements = ReturnType<typeof statements>;
