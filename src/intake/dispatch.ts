/**
 * The dispatcher: the one place where accepted actions become durable state.
 * Direct requests and mapped hooks both end here. It writes events, runs and
 * the idempotency record in one commit (the store queues the runs in it), and
 * only then tells the runner and the heartbeat; the HTTP answer is sent after `dispatch` resolves. Event and run
 * ids are time-ordered (UUIDv7) so that their unique indexes grow at one edge.
 */
import type { AcceptRecords } from '../store/roles.ts';
import type { AcceptBatch, KeptAction, NewEvent, NewKeptRequest, NewRun } from '../store/types.ts';
import type { PreparedAction, PreparedDeliver } from './prepare.ts';
import { errors } from '../errors.ts';
import { uuidv7 } from '../util/uuid7.ts';
import { successStatus } from './status.ts';

export interface DispatchOptions {
  /** Success status of a single agent action (`hooks.agentStatus`). */
  agentStatus: 200 | 202;
  /** Idempotency key scope+key and lifetime; the answer is stored with the actions. */
  idempotency?: { key: string; ttlSeconds: number };
  /** Cap on queued runs (`hooks.maxQueuedRuns`). */
  maxQueuedRuns: number;
  /** The request to keep for the request log, stored in the same commit (absent: none is kept). */
  keep?: KeepRequest;
  /** Past this time (Date.now's clock) the request has been answered 503: the write is not committed if it can still be held back. */
  deadline?: number;
}

/** A request to keep, as received; the dispatcher adds its id, status and actions. */
export type KeepRequest = Omit<NewKeptRequest, 'status' | 'actions' | 'reason'>;

export interface DispatchResult {
  status: number;
  body: Record<string, unknown>;
  runIds: string[];
  eventIds: string[];
  /** The id of the kept request, when one was kept. */
  requestId?: string;
}

export interface DispatcherDeps {
  records: AcceptRecords;
  clock?: () => number;
  /** Tells the runner runs were accepted. */
  runsAccepted: () => void;
  queuedRuns: () => number;
  requestHeartbeat: () => void;
}

export interface Dispatcher {
  dispatch(actions: readonly PreparedAction[], opts: DispatchOptions): Promise<DispatchResult>;
  /** Keeps a request that was skipped (answered 204, nothing else stored) with why; resolves with its id. */
  keepSkipped(keep: KeepRequest, reason: string): Promise<string>;
  /** Keeps a refused request (its error status and code), storing nothing else; resolves with its id. */
  keepRefused(keep: KeepRequest, status: number, reason: string): Promise<string>;
  /** Stores a run made again from an earlier one (`POST /api/runs/<id>/retry`), under the same cap on queued runs. */
  requeue(run: NewRun, maxQueuedRuns: number): Promise<void>;
}

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const clock = deps.clock ?? Date.now;
  // runs past the cap check whose commit is still pending: counted against the cap, since
  // requests of one event-loop turn commit together and would all see the same queue length
  let reserved = 0;
  const checkCap = (adding: number, max: number) => {
    if (deps.queuedRuns() + reserved + adding > max) throw errors.unavailable('too many queued agent runs; try again later', 30);
  };
  return {
    async dispatch(actions, opts) {
      const now = clock();
      const { events, runs, wakeNow } = newRecords(actions, now);
      if (runs.length) checkCap(runs.length, opts.maxQueuedRuns);

      const result = answer(actions, events, runs, opts.agentStatus);
      const batch: AcceptBatch = { events, runs };
      if (opts.deadline !== undefined) batch.deadline = opts.deadline;
      // a lone wake coalesces into the newest pending event when that is the same wake (docs/http.md, "Wake coalescing")
      const lone = actions.length === 1 && events.length === 1;
      if (lone) batch.coalesce = {};
      if (opts.idempotency) {
        batch.idempotency = {
          key: opts.idempotency.key,
          status: result.status,
          body: JSON.stringify(result.body),
          createdAt: now,
          expiresAt: now + opts.idempotency.ttlSeconds * 1000,
        };
        // the store puts the id of the event it coalesced into in place of the new one
        if (lone) batch.coalesce!.idempotencyBody = JSON.stringify(coalesced(result.body, events[0]!.id));
      }
      if (opts.keep) batch.request = { ...opts.keep, status: result.status, actions: keptActions(actions, events, runs) };
      reserved += runs.length;
      try {
        const { requestId, coalescedInto } = await deps.records.accept(batch);
        if (requestId !== undefined) result.requestId = requestId;
        if (coalescedInto !== undefined) {
          result.body = coalesced(result.body, coalescedInto);
          result.eventIds = [coalescedInto];
        }
      } finally {
        reserved -= runs.length;
      }
      if (runs.length) deps.runsAccepted();
      if (wakeNow) deps.requestHeartbeat();
      return result;
    },
    async keepSkipped(keep, reason) {
      const { requestId } = await deps.records.accept({ events: [], runs: [], request: { ...keep, status: 204, actions: [], reason } });
      return requestId!;
    },
    async keepRefused(keep, status, reason) {
      const { requestId } = await deps.records.accept({ events: [], runs: [], request: { ...keep, status, actions: [], reason } });
      return requestId!;
    },
    async requeue(run, maxQueuedRuns) {
      checkCap(1, maxQueuedRuns);
      reserved++;
      try {
        await deps.records.accept({ events: [], runs: [run] });
      } finally {
        reserved--;
      }
      deps.runsAccepted();
    },
  };
}

/** The events and runs `actions` store, made at `now`, and whether one asks for a heartbeat now. */
function newRecords(actions: readonly PreparedAction[], now: number): { events: NewEvent[]; runs: NewRun[]; wakeNow: boolean } {
  const events: NewEvent[] = [];
  const runs: NewRun[] = [];
  let wakeNow = false;
  for (const a of actions) {
    if (a.kind === 'wake') {
      events.push({ id: uuidv7(now), source: a.origin, text: a.text, createdAt: now, runId: null, coalesceKey: a.coalesceKey });
      if (a.mode === 'now') wakeNow = true;
      continue;
    }
    const run: NewRun =
      a.kind === 'agent'
        ? {
            id: uuidv7(now),
            kind: 'hook',
            hookName: a.name,
            label: a.label,
            trusted: a.trusted,
            nameTrusted: a.nameTrusted,
            sessionKey: a.sessionKey,
            message: a.message,
            model: a.model,
            thinking: a.thinking,
            timeoutSeconds: a.timeoutSeconds,
            wakeMode: a.wakeMode,
            deliver: a.deliver,
            channel: a.channel,
            to: a.to,
            agentId: a.agentId,
            sessionMode: a.sessionMode,
            createdAt: now,
            hookId: a.origin,
          }
        : deliverRun(a, now);
    if (a.newSession) run.newSession = true;
    runs.push(run);
  }
  return { events, runs, wakeNow };
}

/** The run of a delivery without a model: its message sent as it is, no agent, no heartbeat after it. */
function deliverRun(a: PreparedDeliver, now: number): NewRun {
  return {
    id: uuidv7(now),
    kind: 'deliver',
    hookName: a.name,
    label: a.name,
    trusted: true,
    nameTrusted: true,
    sessionKey: a.sessionKey,
    message: a.message,
    model: '',
    thinking: null,
    timeoutSeconds: 0,
    wakeMode: 'next-heartbeat',
    deliver: true,
    channel: a.channel,
    to: a.to,
    agentId: null,
    sessionMode: 'isolated',
    createdAt: now,
    hookId: a.origin,
  };
}

/** What each action stored, in order: wakes made the events, agent actions the runs. */
function keptActions(actions: readonly PreparedAction[], events: NewEvent[], runs: NewRun[]): KeptAction[] {
  let e = 0;
  let r = 0;
  return actions.map((a): KeptAction => {
    if (a.kind === 'wake') return { kind: 'wake', mode: a.mode, eventId: events[e++]!.id };
    const run = runs[r++]!;
    return {
      kind: a.kind,
      name: run.hookName,
      sessionKey: run.sessionKey,
      channel: run.channel,
      to: run.to,
      deliver: run.deliver,
      runId: run.id,
    };
  });
}

/** A lone wake's answer once it coalesced into the pending event `eventId`. */
function coalesced(body: Record<string, unknown>, eventId: string): Record<string, unknown> {
  return { ...body, eventId, eventOutcome: 'coalesced' };
}

/** The success answers of the hook endpoints (docs/http.md, "Endpoints"). */
function answer(actions: readonly PreparedAction[], events: NewEvent[], runs: NewRun[], agentStatus: 200 | 202): DispatchResult {
  const runIds = runs.map((r) => r.id);
  const eventIds = events.map((e) => e.id);
  const status = successStatus(actions, agentStatus);
  if (actions.length === 1) {
    const a = actions[0]!;
    const body =
      a.kind === 'wake'
        ? { ok: true, mode: a.mode, eventId: eventIds[0], eventOutcome: 'queued' }
        : { ok: true, runId: runIds[0], sessionKey: runs[0]!.sessionKey };
    return { status, body, runIds, eventIds };
  }
  return { status, body: { ok: true, runIds, eventIds }, runIds, eventIds };
}
