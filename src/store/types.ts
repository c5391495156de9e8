/**
 * What the store keeps, as its callers see it: events, runs, transcripts, deliveries, idempotency
 * keys, kept requests and the items of its queues. The store's parts (its roles) that read and
 * write them are in roles.ts. Nothing here says how a driver keeps them (tables, keys, transactions):
 * that stays inside the driver.
 */

export type EventStatus = 'pending' | 'consumed';
export type RunStatus = 'queued' | 'running' | 'ok' | 'error' | 'timeout';
/** A hook's agent run, a heartbeat, or a delivery without a model (a mapping's `action: "deliver"`). */
export type RunKind = 'hook' | 'heartbeat' | 'deliver';
export type DeliveryStatus = 'pending' | 'sent' | 'skipped' | 'failed';
/** The lifecycle events a callback may be sent (docs/callbacks.md, "Events"). */
export type CallbackEventType = 'run.completed' | 'run.failed' | 'delivery.failed' | 'request.rejected';

export interface SystemEvent {
  id: string;
  /** Where it came from: `wake`, `run` (a run summary), or a mapping id. */
  source: string;
  text: string;
  status: EventStatus;
  createdAt: number;
  consumedAt: number | null;
  /** The heartbeat run that consumed it. */
  heartbeatId: string | null;
  /** The run whose summary this is, for summary events. */
  runId: string | null;
}

/** The tokens a provider reported for a run (docs/runtime.md, "Token usage"). */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface RunDelivery {
  status: DeliveryStatus;
  reason: string | null;
  channel: string | null;
  to: string | null;
  attempts: number;
}

export interface Run {
  id: string;
  kind: RunKind;
  hookName: string;
  /** Source label shown in the safety boundary (`Webhook`, `Email`, a hook name). */
  label: string;
  /** True when the hook opted out of the safety boundary; the summary is then not wrapped either. */
  trusted: boolean;
  /**
   * True when `hookName` is config-supplied or a fixed word, so the run's summary shows it before the
   * safety boundary; otherwise (a caller's name, a templated one) it goes inside, with the summary.
   */
  nameTrusted?: boolean;
  sessionKey: string;
  /** The prompt given to the agent (with the safety boundary applied). */
  message: string;
  model: string;
  thinking: string | null;
  timeoutSeconds: number;
  wakeMode: 'now' | 'next-heartbeat';
  deliver: boolean;
  channel: string;
  to: string | null;
  /** The session key was made for this run: no transcript can exist before it (absent: it may). */
  newSession?: boolean;
  /** The agent it runs on (docs/agents.md); null for a delivery without a model. */
  agentId: string | null;
  /** `isolated`: it starts with no transcript (docs/agents.md, "Sessions"). */
  sessionMode: 'persistent' | 'isolated';
  /**
   * The hook that made it, as callbacks name hooks (docs/callbacks.md, "Config"): `agent`, or the id of the
   * mapping (a source preset's is its path). Absent on heartbeats.
   */
  hookId?: string;
  status: RunStatus;
  attempts: number;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  reply: string | null;
  summary: string | null;
  error: string | null;
  /** The tokens the provider reported, set when the run ends; null while it runs and when the provider reports none. */
  usage: TokenUsage | null;
  delivery: RunDelivery;
  /**
   * Set when the provider handed the run to another gateway (`gateway`), which replies and delivers by
   * itself: its id for the run there, null when its answer named none. Null otherwise.
   */
  forwarded: Forwarded | null;
}

/** Where a forwarded run went: the other gateway's run id. */
export interface Forwarded {
  runId: string | null;
}

export type NewRun = Omit<
  Run,
  'status' | 'attempts' | 'startedAt' | 'finishedAt' | 'reply' | 'summary' | 'error' | 'usage' | 'delivery' | 'forwarded'
>;
export type NewEvent = Pick<SystemEvent, 'id' | 'source' | 'text' | 'createdAt' | 'runId'> & {
  /**
   * A wake's key for coalescing (docs/http.md, "Wake coalescing"): made from its source and its text as
   * sent, since the stored text is wrapped in a boundary with a random id. Absent on other events.
   */
  coalesceKey?: string;
};

export interface SessionMessage {
  id: number;
  sessionKey: string;
  role: 'user' | 'assistant';
  content: string;
  runId: string | null;
  createdAt: number;
}
export type NewMessage = Omit<SessionMessage, 'id'>;

export interface Delivery {
  id: string;
  runId: string;
  channel: string;
  to: string | null;
  text: string;
  status: 'pending' | 'sent' | 'skipped' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  /**
   * The messages the reply was rendered into for its channel, fixed at the first attempt so that
   * retries and restarts send the same text; null until then.
   */
  parts: string[] | null;
  /** Parts already accepted by the channel; a retry starts after them. */
  sentParts: number;
  /**
   * The 0-based part whose send failed in a way that may have reached the service (an ambiguous
   * failure), so a second such failure of it ends the delivery; null when none has.
   */
  ambiguousPart: number | null;
  /** True for a reply of the main session: its route, once sent, becomes the main route (`last`). */
  mainSession: boolean;
  createdAt: number;
  updatedAt: number;
  /**
   * Set on an entry that sends a lifecycle event to a callback instead of a reply to a channel
   * (docs/callbacks.md, "Delivery"): `channel` is then the callback's id, `to` null, `text` the event's
   * JSON body, and `runId` its run ('' for `request.rejected`, which has none).
   */
  event?: CallbackEventType;
}
export type NewDelivery = Pick<Delivery, 'id' | 'runId' | 'channel' | 'to' | 'text' | 'createdAt'> & {
  mainSession?: boolean;
  event?: CallbackEventType;
};

export interface IdempotencyRecord {
  key: string;
  status: number;
  body: string;
  createdAt: number;
  expiresAt: number;
}

/** What a kept request led to: one entry per action, in order, with the event or run it stored. */
export type KeptAction =
  | { kind: 'wake'; mode: 'now' | 'next-heartbeat'; eventId: string }
  | { kind: 'agent' | 'deliver'; name: string; sessionKey: string; channel: string; to: string | null; deliver: boolean; runId: string };

/**
 * An accepted hook request as received (docs/http.md, "Kept requests"): its raw body and its headers without credentials, the
 * mapping that took it, its answer's status and what it stored. Kept for `retention.requestsDays`.
 */
export interface KeptRequest {
  /** Named by the driver when it stores the request (`Records.accept`). */
  id: string;
  /** The hook name after the prefix (`wake`, `agent`, `github`). */
  hook: string;
  /** The mapping that owned it; null for `wake` and `agent`. */
  mappingId: string | null;
  /** The request path with its query, without a `token` parameter. */
  url: string;
  /** Lower-case names; credentials (authorization, cookies, tokens, signatures) are never kept. */
  headers: Record<string, string>;
  /** The body as received; empty when it was not kept (a refused request's, unless its credential passed). */
  body: Uint8Array;
  /** The size of the body as received (also when the body was not kept). */
  bodyBytes: number;
  receivedAt: number;
  /** The status of the answer: 200 or 202 (stored), 204 (nothing run), or the error of a refused request. */
  status: number;
  actions: KeptAction[];
  /** The kept request this one replays (`POST /api/requests/<id>/replay`); null for one from outside. */
  replayOf: string | null;
  /** Why nothing ran: a refused request's error code, or why a 204 ran nothing; null for a request that stored work. */
  reason: string | null;
}

/** A kept request as lists show it: without its headers and body, with the body's size. */
export type KeptRequestSummary = Omit<KeptRequest, 'headers' | 'body'>;

/** Everything one accepted request writes, committed as one unit. */
export interface AcceptBatch {
  events: NewEvent[];
  runs: NewRun[];
  idempotency?: IdempotencyRecord;
  /** The request itself, kept for the request log; the driver names it. */
  request?: NewKeptRequest;
  /** Lifecycle events for callbacks caused by this write (`request.rejected`), stored with it. */
  callbacks?: NewDelivery[];
  /**
   * Set on a batch whose one event is a lone wake that may coalesce (docs/http.md, "Wake coalescing"): when
   * the newest pending event has the same `coalesceKey`, the event is not stored and `accept` resolves with
   * that event's id in `coalescedInto`; the idempotency record is then stored with `idempotencyBody` (given
   * when the batch has one) and the kept request's wake action names that event, the new event's id replaced
   * by that event's id in both. The look and the write are one atomic step.
   */
  coalesce?: { idempotencyBody?: string };
  /**
   * The latest time (Date.now's clock) the write may still be committed: the request it answers has
   * been told 503 by then (`storage.timeoutSeconds`). A store whose write waits in its own process
   * (SQLite's group commit, behind a stalled disk) refuses it past that time with
   * `StorageUnavailableError`; one already sent to a server may still land (docs/redis.md, "Timeouts").
   */
  deadline?: number;
}

/**
 * A request to keep, before the driver has named it. `bodyBytes` is the size of the body as received,
 * when that is not the kept `body`'s (a refused request's body is not kept).
 */
export type NewKeptRequest = Omit<KeptRequest, 'id' | 'reason' | 'bodyBytes'> & { reason?: string | null; bodyBytes?: number };

/** What `accept` stored beyond the batch's own ids. */
export interface Accepted {
  /** The kept request's id, when the batch keeps one. */
  requestId?: string;
  /** The pending event the batch's wake coalesced into (`AcceptBatch.coalesce`); absent when its event was stored. */
  coalescedInto?: string;
}

export interface RunOutcome {
  id: string;
  status: 'ok' | 'error' | 'timeout';
  finishedAt: number;
  reply: string | null;
  summary: string | null;
  error: string | null;
  /** The tokens the provider reported (absent or null: none). */
  usage?: TokenUsage | null;
  /** Transcript lines to append to the run's session, in order. */
  messages: NewMessage[];
  /** The summary event for the main session, if any. */
  event?: NewEvent;
  /** What happens to the reply: an outbox entry, or skipped with a reason. */
  delivery: { kind: 'outbox'; entry: NewDelivery } | { kind: 'skipped'; reason: string; channel?: string | null; to?: string | null };
  /** The other gateway's run, when the provider forwarded the run (`Run.forwarded`). */
  forwarded?: Forwarded;
  /** Pending system events this run consumed (heartbeats). */
  consumedEventIds?: string[];
  /** Lifecycle events for callbacks (`run.completed`, `run.failed`), stored with the outcome. */
  callbacks?: NewDelivery[];
  /**
   * With `consumedEventIds`: every event still pending before the first of them is consumed too, by the
   * same heartbeat (the older part of a backlog, which the heartbeat showed counted by source: `pendingBacklog`).
   */
  consumeOlder?: boolean;
}

export interface DeliveryAttempt {
  id: string;
  runId: string;
  attempts: number;
  at: number;
  /** `pending` keeps it in the outbox until `nextAttemptAt`. */
  status: 'pending' | 'sent' | 'skipped' | 'failed';
  nextAttemptAt?: number;
  error?: string | null;
  /** On `sent`: the route to remember as the main route (`last`), given for a reply of the main session. */
  route?: { channel: string; to: string | null };
  /** Parts accepted so far (kept when absent). */
  sentParts?: number;
  /** The parts the reply was rendered into (kept when absent; see `Delivery.parts`). */
  parts?: string[];
  /** The part whose send failed ambiguously (kept when absent; see `Delivery.ambiguousPart`). */
  ambiguousPart?: number | null;
  /** Lifecycle events for callbacks (`delivery.failed`), stored with this attempt. */
  callbacks?: NewDelivery[];
}

export interface ListOptions {
  limit: number;
}

export interface RunListOptions extends ListOptions {
  status?: RunStatus;
  /** Only runs whose `hookName` holds this, in any case (`heartbeat` for heartbeats). */
  hook?: string;
  /** Only runs whose session key holds this (`hook:gmail:` for every Gmail message's). */
  session?: string;
}

export interface RequestListOptions extends ListOptions {
  hook?: string;
  status?: number;
  /** Only requests older than the kept request with this id (the next page after it). */
  before?: string;
}

/** What a heartbeat shows of the pending events (`EventRecords.pendingBacklog`). */
export interface PendingBacklog {
  /** The newest pending events, oldest first. */
  events: SystemEvent[];
  /** The pending events older than those: how many, how many per source, and when the oldest and newest of them came. */
  older: { count: number; bySource: Record<string, number>; firstAt: number | null; lastAt: number | null };
}

/** Retention cutoffs (epoch ms): what finished, was consumed or was received before these goes (`RetentionRecords.prune`). */
export interface PruneBefore {
  /** Finished runs, delivered (sent, skipped, failed) outbox entries, and transcripts of sessions idle since before it. */
  runs: number;
  /** Events consumed before it. */
  events: number;
  /** Kept requests received before it. */
  requests: number;
  /**
   * In a session still in use, its newest this many transcript lines stay whatever their age (what an agent
   * is shown); older lines beyond them, from before `runs`, go too, so a session never idle stays bounded.
   */
  sessionLines: number;
}

/** What a prune removed (or, for a dry run, would remove). */
export interface PruneCounts {
  runs: number;
  events: number;
  messages: number;
  deliveries: number;
  requests: number;
}

export interface StoreCounts {
  events: { pending: number; consumed: number };
  runs: Record<RunStatus, number>;
  outbox: { pending: number; failed: number };
}

/** A distribution a driver measures (how long its writes take, say), shown on `/metrics` under `name`. */
export interface StoreHistogram {
  name: string;
  help: string;
  /** Upper bounds of the buckets. */
  buckets: number[];
  /** From now on, `fn` is called with each value measured. */
  observe(fn: (value: number) => void): void;
}

/** An item a worker claimed from a queue (`RunQueue`, `TaskQueue`), with its lease. */
export interface Claim<T> {
  id: string;
  /** Items of one key are claimed in the order they were enqueued, one at a time. */
  key: string;
  /**
   * How many times it was claimed before without `complete` (a lease that ran out, a `fail`). Across a
   * restart a driver may count only the claims the records show (for a run: its stored starts).
   */
  attempts: number;
  /** The error of the last `fail`, while the driver keeps it (it may not across a restart). */
  lastError: string | null;
  /** When the lease runs out, unless extended: the item is then claimable again. */
  leaseUntil: number;
  item: T;
}

/**
 * Work the runtime enqueues itself, beside the runs: today a session's heartbeat (`key` is the
 * session key). Kept in the store's `TaskQueue`.
 */
export interface Task {
  kind: 'heartbeat';
  key: string;
}
