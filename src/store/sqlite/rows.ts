/**
 * How records are laid out in rows, and read back: the columns each read selects and the record
 * each row makes.
 */
import { packBoundary, unpackBoundary } from './boundary.ts';
import type { CallbackEventType, Delivery, EventStatus, NewRun, Run, RunStatus, SessionMessage, SystemEvent } from '../types.ts';

export type Row = Record<string, unknown>;

/**
 * Texts longer than this many characters (a run's message and reply, the transcript lines that repeat
 * them, and a delivery's text) are stored once, out of the row, in the `texts` table. Shorter ones fit in
 * the row's page; a longer one inline would be rewritten, overflow pages and all, by every change of the row's status.
 */
export const LONG_TEXT = 2048;

export const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
export const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/**
 * A text as stored: without its safety boundary's notice and marker lines when it holds one, and the
 * key that rebuilds them (`*_wrap` columns), else as it is with a null key.
 */
export function packed(text: string): [string, string | null] {
  const p = packBoundary(text);
  return p ? [p.rest, p.key] : [text, null];
}

/** A stored text read back: rebuilt from its key when it has one (see `packed`). */
export const unpacked = (text: unknown, key: unknown): string =>
  key === null || key === undefined ? String(text) : unpackBoundary(String(text), String(key));

/** An event row, with the range that consumed it when one covers it (`EVENT_COLUMNS`). */
export function toEvent(r: Row): SystemEvent {
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
 * An event's columns with the range that consumed it (the `consumed` table): the first range ending at or
 * after its seq, when that range starts at or before it. Only a row still marked pending can be in one.
 */
export const EVENT_COLUMNS = `SELECT e.*, c.consumed_at AS range_at, c.heartbeat_id AS range_heartbeat FROM events e
  LEFT JOIN consumed c ON e.status = 'pending' AND c.to_seq = (SELECT min(x.to_seq) FROM consumed x WHERE x.to_seq >= e.seq)
  AND c.from_seq <= e.seq`;

/**
 * The columns a run was accepted with, which the queue reads to hand a run out (`CLAIM_COLUMNS`), in
 * the order `toNewRun` takes them: that read returns arrays, which node:sqlite makes faster than objects
 * (measured: docs/performance.md, "Keeping the speed").
 */
export const QUEUED = [
  'id',
  'kind',
  'hook_name',
  'label',
  'trusted',
  'session_key',
  'message',
  'message_body',
  'model',
  'thinking',
  'timeout_seconds',
  'wake_mode',
  'deliver',
  'channel',
  'to_',
  'created_at',
  'message_wrap',
  'message_text',
  'hook_id',
  'agent_id',
] as const;

/**
 * The `trusted` column holds flags: the hook opted out of the safety boundary, its name is config-supplied,
 * and its session key was made for it.
 */
export const TRUSTED = 1;
export const NAME_TRUSTED = 2;
export const NEW_SESSION = 4;
/** The run starts with no transcript (`sessionMode: "isolated"`). */
export const ISOLATED = 8;

/** A queued run from its `QUEUED` columns, in that order. */
export function toNewRun(a: readonly unknown[]): NewRun {
  const run: NewRun = {
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
    // a run stored before agents had ids ran on the one agent there was
    agentId: a[1] === 'deliver' ? null : (str(a[19]) ?? 'main'),
    sessionMode: (Number(a[4]) & ISOLATED) !== 0 ? 'isolated' : 'persistent',
  };
  if ((Number(a[4]) & NEW_SESSION) !== 0) run.newSession = true;
  if (a[18] !== null) run.hookId = String(a[18]);
  return run;
}

/**
 * A run row, read with its outbox entry's `o_status`, `o_attempts` and `o_error` (see RUN_COLUMNS): the
 * entry holds the delivery's state once the run has one.
 */
export function toRun(r: Row): Run {
  const fromOutbox = r.o_status !== null && r.o_status !== undefined;
  // whether the session key was made for the run is the runner's business, not the read API's
  const { newSession: _, ...accepted } = toNewRun(QUEUED.map((c) => r[c]));
  return {
    ...accepted,
    status: r.status as RunStatus,
    attempts: Number(r.attempts),
    startedAt: num(r.started_at),
    finishedAt: num(r.finished_at),
    reply: r.reply_text !== null ? unpacked(r.reply_body, r.reply_wrap) : r.reply === null ? null : unpacked(r.reply, r.reply_wrap),
    summary: str(r.summary),
    error: str(r.error),
    usage:
      r.input_tokens === null || r.input_tokens === undefined
        ? null
        : { inputTokens: Number(r.input_tokens), outputTokens: Number(r.output_tokens) },
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
    forwarded: r.forwarded === null || r.forwarded === undefined ? null : (JSON.parse(String(r.forwarded)) as Run['forwarded']),
  };
}

export function toMessage(r: Row): SessionMessage {
  return {
    id: Number(r.id),
    sessionKey: String(r.session_key),
    role: r.role as SessionMessage['role'],
    content: unpacked(r.content_text === null ? r.content : r.content_body, r.content_wrap),
    runId: str(r.run_id),
    createdAt: Number(r.created_at),
  };
}

export function toDelivery(r: Row): Delivery {
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
    parts:
      r.parts_ref !== null
        ? (JSON.parse(String(r.parts_body)) as string[])
        : r.parts === null
          ? null
          : (JSON.parse(String(r.parts)) as string[]),
    sentParts: Number(r.sent_parts),
    ambiguousPart: num(r.ambiguous_part),
    mainSession: r.main_session === 1,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    ...(r.event === null || r.event === undefined ? {} : { event: r.event as CallbackEventType }),
  };
}

/** A long text kept out of line (`LONG_TEXT`), by the column holding its rowid; NULL for an inline one. */
export const body = (ref: string) => `(SELECT body FROM texts WHERE id = ${ref})`;

/** A run's columns and its delivery's state, from its outbox entry when it has one (`toRun`). */
export const RUN_COLUMNS = `SELECT r.*, ${body('r.message_text')} AS message_body, ${body('r.reply_text')} AS reply_body,
  o.status AS o_status, o.attempts AS o_attempts, o.last_error AS o_error FROM runs r LEFT JOIN outbox o ON o.id = r.delivery_id`;

const QUEUED_LIST = QUEUED.map((c) => (c === 'message_body' ? `${body('message_text')} AS message_body` : c)).join(', ');

/** A queued run as accepted (`toNewRun`). */
export const QUEUED_COLUMNS = `SELECT ${QUEUED_LIST} FROM runs`;

/** What the queue reads of a run it hands out: its `QUEUED` columns, then its status and attempts. */
export const CLAIM_COLUMNS = `SELECT ${QUEUED_LIST}, status, attempts FROM runs`;

/** A transcript line's columns (`toMessage`). */
export const MESSAGE_COLUMNS = `SELECT m.*, ${body('m.content_text')} AS content_body FROM messages m`;
