/**
 * The run executor. Runs of one session key execute one at a time, in the
 * order they were accepted; different keys run concurrently up to
 * `agents.defaults.maxConcurrent` agent calls at once (a run's slot frees when
 * its agent answers, not when its outcome has committed; its session's next
 * run waits for that commit). Only ids and session keys are held in
 * memory; a run's body is read from the store when it starts.
 */
import { uuidv7 } from '../util/uuid7.ts';
import type { Logger } from 'pino';
import type { Generation, GenerationRef } from './generation.ts';
import { Fifo } from '../util/fifo.ts';
import { onNextTurn } from '../util/next-turn.ts';
import { RecycledMap } from '../util/recycled.ts';
import type { NewEvent, NewRun, RunOutcome, Store, NewDelivery } from '../store/types.ts';
import { callAgent, isHeartbeatAck, oneLine, Shutdown } from './agent-call.ts';
import { resolveRoute } from './routes.ts';
import { hookLine, stripBoundary } from './safety.ts';
import { untilStored } from './until-stored.ts';
import { isStorageUnavailable } from '../store/unavailable.ts';

/** What an agent sees of its session's history: the last 50 messages, at most 64 KiB of them. */
export const TRANSCRIPT_WINDOW = 50;
export const TRANSCRIPT_MAX_BYTES = 64 * 1024;
const SUMMARY_MAX = 300;
/** How many runs may start in one turn of the event loop (see `pump`). */
export const RUNS_PER_TURN = 12;

export interface RunnerDeps {
  store: Store;
  generations: GenerationRef;
  logger: Logger;
  clock?: () => number;
  /** Asks for a heartbeat (runs with `wakeMode: now`). */
  requestHeartbeat: () => void;
  /** Tells the outbox a delivery is waiting. */
  /** Hands the outbox a delivery this process just committed. */
  notifyOutbox: (entry?: NewDelivery) => void;
}

export interface QueuedRef {
  id: string;
  sessionKey: string;
  /** The session key was made for this run (no transcript can exist yet): the run skips reading it. */
  newSession?: boolean;
}

export interface Runner {
  enqueue(runs: readonly QueuedRef[]): void;
  /**
   * Loads queued and interrupted runs after a restart: `queued` ones are
   * queued again, `running` ones are re-queued once and marked `error` the
   * second time; heartbeats caught running are marked `error`.
   */
  recover(): Promise<{ queued: number; requeued: number; failed: number; heartbeats: number }>;
  queued(): number;
  running(): number;
  /** Stops starting runs; waits for running ones up to `deadlineMs`, then aborts and re-queues them. */
  stop(deadlineMs: number): Promise<void>;
  /** Resolves when nothing is queued or running (tests, benchmarks). */
  idle(): Promise<void>;
}

export function createRunner(deps: RunnerDeps): Runner {
  const { store, generations, logger } = deps;
  const clock = deps.clock ?? Date.now;
  // A session's queued run ids: one id as is (the common case: a fresh session key per request), a
  // queue once a second one waits, so a backlog of single-run sessions costs no queue object each.
  const bySession = new RecycledMap<string, string | Fifo<string>>();
  // What starts next, in the order accepted: a session key with runs in bySession, or a run of a new
  // session as is (nothing queued before it can share its key, so it needs no entry in bySession).
  const ready = new Fifo<string | QueuedRef>();
  // sessions with a run in flight, until that run's outcome is committed (its next run reads the transcript)
  const active = new RecycledMap<string, Promise<void>>();
  // runs holding one of the `maxConcurrent` slots: from the start of a run until its agent call is over
  let calling = 0;
  const shutdown = new Shutdown();
  // Store calls waiting for the disk to write again (see `stored`): while any waits, no run starts,
  // since its outcome could not be stored either. Aborted when a stop gives up on them.
  let waitingForStore = 0;
  const storeGaveUp = new AbortController();
  let queuedCount = 0;
  let stopping = false;
  let idleWaiters: (() => void)[] = [];

  const checkIdle = () => {
    if (queuedCount === 0 && active.size === 0 && idleWaiters.length) {
      const w = idleWaiters;
      idleWaiters = [];
      for (const r of w) r();
    }
  };

  function enqueue(runs: readonly QueuedRef[]): void {
    for (const ref of runs) {
      queuedCount++;
      if (ref.newSession) {
        ready.push(ref);
        continue;
      }
      const sessionKey = ref.sessionKey;
      const id = ref.id;
      const q = bySession.get(sessionKey);
      if (q === undefined) {
        bySession.set(sessionKey, id);
        if (!active.has(sessionKey)) ready.push(sessionKey);
      } else if (typeof q === 'string') {
        const fifo = new Fifo<string>();
        fifo.push(q);
        fifo.push(id);
        bySession.set(sessionKey, fifo);
      } else q.push(id);
    }
    pump();
  }

  // A slot freed during a turn is refilled at once while fewer than RUNS_PER_TURN runs have started in
  // that turn, so a fast agent's outcomes share one group commit; past that, on the next turn of the
  // event loop: the runner would otherwise go on from run to run in one turn and keep requests waiting.
  const schedulePump = onNextTurn(() => pump());
  let startedThisTurn = 0;
  const newTurn = onNextTurn(() => (startedThisTurn = 0));

  function pump(): void {
    const max = generations.current.config.agents.defaults.maxConcurrent;
    while (!stopping && waitingForStore === 0 && calling < max && ready.length) {
      const next = ready.shift()!;
      const newSession = typeof next !== 'string';
      const key = newSession ? next.sessionKey : next;
      // a session whose new-session run started first (a caller that reused the key it was given): its
      // runs wait for that one, and come back when it ends
      if (!newSession && active.has(key)) continue;
      if (startedThisTurn++ === 0) newTurn();
      let target: string;
      if (newSession) target = next.id;
      else {
        const q = bySession.get(key)!;
        if (typeof q === 'string') {
          target = q;
          bySession.delete(key);
        } else {
          target = q.shift()!;
          if (!q.length) bySession.delete(key);
        }
      }
      queuedCount--;
      calling++;
      let released = false;
      // The slot limits calls to agents, not commits: it frees as soon as the agent has answered, so
      // another session's run can start while this outcome waits for its group commit.
      const release = () => {
        if (released) return;
        released = true;
        calling--;
        if (startedThisTurn < RUNS_PER_TURN) pump();
        else schedulePump();
      };
      const p = execute(target, newSession, release).catch((err) => {
        const run = { runId: target };
        // only a stop gives up on the store: the run stays as stored, and the next start takes it up
        if (isStorageUnavailable(err)) logger.warn({ err, ...run }, 'run left for the next start: the store could not write before the stop');
        else logger.error({ err, ...run }, 'run failed unexpectedly');
      });
      active.set(
        key,
        p.finally(() => {
          release();
          active.delete(key);
          if (bySession.has(key)) ready.push(key);
          pump();
          checkIdle();
        }),
      );
    }
  }

  /** Holds its generation while it runs: a reload does not dispose what it is using. `target` is the run's id. */
  function execute(target: string, newSession: boolean, release: () => void): Promise<void> {
    return generations.use((gen) => executeOn(gen, target, newSession, release));
  }

  /**
   * A store call of a run, made again while the store cannot write (a full disk) until it can:
   * a run is never dropped from memory while it is still `queued` or `running` on disk.
   */
  function stored<T>(log: Logger, what: string, call: () => Promise<T>): Promise<T> {
    return untilStored(call, {
      signal: storeGaveUp.signal,
      logger: log,
      what,
      onWait: () => waitingForStore++,
      onResume: () => {
        waitingForStore--;
        pump();
      },
    });
  }

  /** `release` frees the run's concurrency slot; called once the agent call is over. */
  async function executeOn(gen: Generation, target: string, newSession: boolean, release: () => void): Promise<void> {
    const run = await stored(logger, 'read a queued run', () => store.queuedRun(target));
    if (!run) return;
    const id = run.id;
    const startedAt = clock();
    // Not awaited: writes commit in order, so `running` is stored before the outcome can be, and a
    // fast provider's run then costs one commit instead of two. A crash before this commit leaves the
    // run `queued`, which a restart runs again as it would after a crash just before the start.
    const started = store.startRun(id, startedAt);
    // a start the store could not write (a full disk) is kept and written with the run's outcome
    started.catch((err) => isStorageUnavailable(err) || logger.error({ err, runId: id }, 'recording the start of a run failed'));
    const log = logger.child({ runId: id, hook: run.hookName });
    const history = newSession ? [] : await stored(log, 'read a transcript', () => store.transcript(run.sessionKey, TRANSCRIPT_WINDOW, TRANSCRIPT_MAX_BYTES));
    const result = await callAgent(gen, {
      runId: id,
      sessionKey: run.sessionKey,
      model: run.model,
      thinking: run.thinking,
      messages: [...history.map((m) => ({ role: m.role, content: m.content })), { role: 'user' as const, content: run.message }],
      timeoutMs: run.timeoutSeconds * 1000,
      shutdown,
    });
    release();
    if (result.status === 'aborted') {
      await store.requeueRun(id, { refundAttempt: true });
      log.info('run interrupted by shutdown; left queued');
      return;
    }
    const finishedAt = clock();
    const outcome: RunOutcome = {
      id,
      status: result.status,
      finishedAt,
      reply: result.status === 'ok' ? result.text : null,
      summary: null,
      error: result.status === 'ok' ? null : result.error,
      messages: [{ sessionKey: run.sessionKey, role: 'user', content: run.message, runId: id, createdAt: startedAt }],
      delivery: { kind: 'skipped', reason: 'run did not succeed' },
    };
    if (result.status === 'ok') {
      outcome.summary = oneLine(stripBoundary(result.text), SUMMARY_MAX) || '(empty reply)';
      outcome.messages.push({ sessionKey: run.sessionKey, role: 'assistant', content: result.text, runId: id, createdAt: finishedAt });
      outcome.delivery = await stored(log, 'choose the route of a reply', () => deliveryFor(run, result.text, finishedAt));
    }
    outcome.event = summaryEvent(run, outcome, finishedAt);
    await stored(log, 'store the outcome of a run', () => store.finishRun(outcome));
    log.info({ status: outcome.status, ms: finishedAt - startedAt, delivery: outcome.delivery.kind }, 'run finished');
    if (outcome.delivery.kind === 'outbox') deps.notifyOutbox(outcome.delivery.entry);
    if (run.wakeMode === 'now') deps.requestHeartbeat();
  }

  async function deliveryFor(run: NewRun, text: string, at: number): Promise<RunOutcome['delivery']> {
    if (!run.deliver) return { kind: 'skipped', reason: 'deliver is false' };
    if (isHeartbeatAck(text)) return { kind: 'skipped', reason: 'heartbeat acknowledgement only' };
    if (!text.trim()) return { kind: 'skipped', reason: 'empty reply' };
    const decision = await resolveRoute(generations.current, store, run.channel, run.to);
    if ('skip' in decision) return { kind: 'skipped', reason: decision.skip, channel: decision.route?.channel ?? null, to: decision.route?.to ?? null };
    return { kind: 'outbox', entry: { id: uuidv7(), runId: run.id, channel: decision.route.channel, to: decision.route.to, text, createdAt: at } };
  }

  function summaryEvent(run: NewRun, o: RunOutcome, at: number): NewEvent {
    const body = o.status === 'ok' ? o.summary! : oneLine(o.error ?? o.status, SUMMARY_MAX);
    const status = o.status === 'ok' ? '' : ` (${o.status})`;
    const text = run.trusted ? `Hook ${run.hookName}${status}: ${body}` : hookLine(run.hookName, run.nameTrusted === true, status, body, run.label);
    return { id: uuidv7(), source: 'run', text, createdAt: at, runId: run.id };
  }

  return {
    enqueue,
    async recover() {
      const heartbeats = await store.failInterruptedHeartbeats(clock(), 'interrupted by a service restart');
      const runs = await store.unfinishedRuns();
      let requeued = 0;
      let failed = 0;
      let wake = false;
      const refs: QueuedRef[] = [];
      for (const run of runs) {
        if (run.status === 'running') {
          if (run.attempts >= 2) {
            const at = clock();
            const o: RunOutcome = {
              id: run.id,
              status: 'error',
              finishedAt: at,
              reply: null,
              summary: null,
              error: 'interrupted twice by a service restart',
              messages: [],
              delivery: { kind: 'skipped', reason: 'run did not succeed' },
            };
            o.event = summaryEvent(run, o, at);
            await store.finishRun(o);
            logger.warn({ runId: run.id, hook: run.hookName }, 'run interrupted by a restart twice; marked error');
            failed++;
            if (run.wakeMode === 'now') wake = true;
            continue;
          }
          await store.requeueRun(run.id, { refundAttempt: false });
          requeued++;
        }
        refs.push({ id: run.id, sessionKey: run.sessionKey });
      }
      enqueue(refs);
      if (wake) deps.requestHeartbeat();
      return { queued: refs.length - requeued, requeued, failed, heartbeats };
    },
    queued: () => queuedCount,
    running: () => active.size,
    async stop(deadlineMs) {
      stopping = true;
      if (!active.size) return;
      const all = Promise.allSettled([...active.values()]);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        all.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), deadlineMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        shutdown.abort(new Error('service shutting down'));
        storeGaveUp.abort();
        await all;
      }
    },
    idle() {
      if (queuedCount === 0 && active.size === 0) return Promise.resolve();
      return new Promise((r) => idleWaiters.push(r));
    },
  };
}
