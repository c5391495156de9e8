/**
 * The run executor: claims runs from the store's queue and carries each out. The queue gives a session
 * key's runs in the order accepted, one at a time; different keys run concurrently up to
 * `agents.defaults.maxConcurrent` agent calls at once (a run's slot frees when its agent answers, not
 * when its outcome has committed; its session's next run is due once that commit is done). The runner
 * holds only the runs it is carrying out; the backlog is the queue's.
 */
import { uuidv7 } from '../util/uuid7.ts';
import type { Logger } from 'pino';
import type { Generation, GenerationRef } from './generation.ts';
import { onNextTurn } from '../util/next-turn.ts';
import { stopWithin } from '../util/deadline.ts';
import type { Claim, NewEvent, NewRun, RunOutcome, Store, NewDelivery, WorkQueue } from '../store/types.ts';
import { callAgent, oneLine, Shutdown } from './agent-call.ts';
import { buildOutcome } from './outcome.ts';
import { hookLine } from './safety.ts';
import { untilStored } from './until-stored.ts';
import { isStorageUnavailable } from '../store/unavailable.ts';
import { RecycledMap } from '../util/recycled.ts';

/** What an agent sees of its session's history: the last 50 messages, at most 64 KiB of them. */
export const TRANSCRIPT_WINDOW = 50;
export const TRANSCRIPT_MAX_BYTES = 64 * 1024;
const SUMMARY_MAX = 300;
/** Why the reply of a run that did not succeed is not delivered. */
const NOT_OK = 'run did not succeed';
/** How many runs may start in one turn of the event loop (see `pump`). */
export const RUNS_PER_TURN = 12;
/**
 * A claim's lease, renewed every third of it while its run is under way: it runs out only when the
 * runner stops working on the run without ending its claim (a crash, a bug), and the run is then due again.
 */
export const LEASE_MS = 60_000;

export interface RunnerDeps {
  store: Store;
  /** The runs to carry out (the store's queue). */
  queue: WorkQueue<NewRun>;
  generations: GenerationRef;
  logger: Logger;
  clock?: () => number;
  /** Asks for a heartbeat (runs with `wakeMode: now`). */
  requestHeartbeat: () => void;
  /** Hands the outbox a delivery this process just committed. */
  notifyOutbox: (entry?: NewDelivery) => void;
}

export interface Runner {
  /** Runs were accepted: claims what the free slots allow. */
  notify(): void;
  /**
   * Starts working after a restart: heartbeats caught running are marked `error`; the runs the queue
   * holds (queued, and those interrupted) are claimed. A run interrupted twice is marked `error` when
   * its turn comes, instead of running a third time.
   */
  recover(): Promise<{ queued: number; heartbeats: number }>;
  queued(): number;
  running(): number;
  /** Stops starting runs; waits for running ones up to `deadlineMs`, then aborts them and gives them back to the queue. */
  stop(deadlineMs: number): Promise<void>;
  /** Resolves when nothing is queued or running (tests, benchmarks). */
  idle(): Promise<void>;
}

export function createRunner(deps: RunnerDeps): Runner {
  const { store, queue, generations, logger } = deps;
  const clock = deps.clock ?? Date.now;
  const worker = `runner-${uuidv7()}`;
  // the runs under way, by id, until their claim has ended (an entry per run: see util/recycled.ts)
  const inFlight = new RecycledMap<string, Promise<void>>();
  // runs holding one of the `maxConcurrent` slots: from the start of a run until its agent call is over
  let calling = 0;
  const shutdown = new Shutdown();
  // Store calls waiting for the disk to write again (see `stored`): while any waits, no run starts,
  // since its outcome could not be stored either. Aborted when a stop gives up on them.
  let waitingForStore = 0;
  const storeGaveUp = new AbortController();
  let stopping = false;
  let claiming = false;
  let claimAgain = false;
  let idleWaiters: (() => void)[] = [];
  // a pump when the queue's next item waiting for a time is due (a retry, a lease that runs out)
  let dueTimer: NodeJS.Timeout | undefined;
  let dueAt = Infinity;
  const renew = setInterval(() => {
    for (const id of inFlight.keys()) void queue.extend(id, worker, LEASE_MS).catch((err) => logger.warn({ err, runId: id }, 'renewing the lease of a run failed'));
  }, LEASE_MS / 3);
  renew.unref();

  const isIdle = () => !claiming && inFlight.size === 0 && queue.size().waiting === 0;
  const checkIdle = () => {
    if (idleWaiters.length && isIdle()) {
      const w = idleWaiters;
      idleWaiters = [];
      for (const r of w) r();
    }
  };

  // A slot freed during a turn is refilled at once while fewer than RUNS_PER_TURN runs have started in
  // that turn, so a fast agent's outcomes share one group commit; past that, on the next turn of the
  // event loop: the runner would otherwise go on from run to run in one turn and keep requests waiting.
  const schedulePump = onNextTurn(() => pump());
  let startedThisTurn = 0;
  const newTurn = onNextTurn(() => (startedThisTurn = 0));

  /** Claims runs for the free slots; one claim at a time, and again if asked meanwhile. */
  function pump(): void {
    if (claiming) {
      claimAgain = true;
      return;
    }
    const free = generations.current.config.agents.defaults.maxConcurrent - calling;
    if (stopping || waitingForStore > 0 || free <= 0) return;
    claiming = true;
    queue.claim(worker, LEASE_MS, free).then(
      (claims) => {
        claiming = false;
        // a stop came while the claim was under way: its runs go back untouched
        if (stopping) for (const c of claims) void queue.release(c.id, worker).catch(() => {});
        else for (const c of claims) start(c);
        if (claimAgain) {
          claimAgain = false;
          pump();
        } else if (claims.length < free) void armDue();
        checkIdle();
      },
      (err) => {
        claiming = false;
        logger.error({ err }, 'claiming runs failed');
        void armDue();
        checkIdle();
      },
    );
  }

  /** Pumps when the queue's next item waiting for a time is due, if that is sooner than the pump already set. */
  async function armDue(): Promise<void> {
    const at = await queue.nextAt().catch(() => clock() + LEASE_MS);
    if (at === undefined || at >= dueAt || stopping) return;
    clearTimeout(dueTimer);
    dueAt = at;
    dueTimer = setTimeout(() => {
      dueAt = Infinity;
      dueTimer = undefined;
      pump();
    }, Math.max(0, at - clock()));
    dueTimer.unref();
  }

  function start(c: Claim<NewRun>): void {
    if (startedThisTurn++ === 0) newTurn();
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
    const p = execute(c, release)
      .catch((err) => {
        const run = { runId: c.id };
        // the claim is left to its lease: the run is due again once it runs out (or at the next start)
        if (isStorageUnavailable(err)) logger.warn({ err, ...run }, 'run left for the next start: the store could not write before the stop');
        else logger.error({ err, ...run }, 'run failed unexpectedly');
      })
      .finally(() => {
        release();
        inFlight.delete(c.id);
        pump();
        checkIdle();
      });
    inFlight.set(c.id, p);
  }

  /** Holds its generation while it runs: a reload does not dispose what it is using. */
  function execute(c: Claim<NewRun>, release: () => void): Promise<void> {
    return generations.use((gen) => executeOn(gen, c, release));
  }

  /**
   * A store call of a run, made again while the store cannot write (a full disk) until it can:
   * a run's claim is not ended while it is still `queued` or `running` on disk.
   */
  function stored<T>(log: Logger, what: string, call: () => Promise<T>): Promise<T> {
    return untilStored(call, { signal: storeGaveUp.signal, logger: log, what, onWait, onResume });
  }
  function onWait(): void {
    waitingForStore++;
  }
  function onResume(): void {
    waitingForStore--;
    pump();
  }

  /** `release` frees the run's concurrency slot; called once the agent call is over. */
  async function executeOn(gen: Generation, c: Claim<NewRun>, release: () => void): Promise<void> {
    const run = c.item;
    const id = c.id;
    // started twice already and never finished: interrupted by two restarts
    if (c.attempts >= 2) return interruptedTwice(c);
    const startedAt = clock();
    // Not awaited: writes commit in order, so `running` is stored before the outcome can be, and a
    // fast provider's run then costs one commit instead of two. A crash before this commit leaves the
    // run `queued`, which a restart runs again as it would after a crash just before the start.
    const started = store.startRun(id, startedAt);
    // a start the store could not write (a full disk) is kept and written with the run's outcome
    started.catch((err) => isStorageUnavailable(err) || logger.error({ err, runId: id }, 'recording the start of a run failed'));
    const log = logger.child({ runId: id, hook: run.hookName });
    const history = run.newSession ? [] : await stored(log, 'read a transcript', () => store.transcript(run.sessionKey, TRANSCRIPT_WINDOW, TRANSCRIPT_MAX_BYTES));
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
      await queue.release(id, worker);
      log.info('run interrupted by shutdown; left queued');
      return;
    }
    const finishedAt = clock();
    // the route is chosen by the config serving now, which a reload during the call may have changed
    const outcome = await stored(log, 'choose the route of a reply', () =>
      buildOutcome(generations.current, store, { run, result, finishedAt, prompt: { content: run.message, at: startedAt }, failedReason: NOT_OK, summarize: true }),
    );
    outcome.event = summaryEvent(run, outcome, finishedAt);
    await stored(log, 'store the outcome of a run', () => store.finishRun(outcome));
    await stored(log, 'end the claim of a run', () => queue.complete(id, worker));
    log.info({ status: outcome.status, ms: finishedAt - startedAt, delivery: outcome.delivery.kind }, 'run finished');
    if (outcome.delivery.kind === 'outbox') deps.notifyOutbox(outcome.delivery.entry);
    if (run.wakeMode === 'now') deps.requestHeartbeat();
  }

  async function interruptedTwice(c: Claim<NewRun>): Promise<void> {
    const run = c.item;
    const at = clock();
    const result = { status: 'error' as const, error: 'interrupted twice by a service restart' };
    const o = await buildOutcome(generations.current, store, { run, result, finishedAt: at, failedReason: NOT_OK });
    o.event = summaryEvent(run, o, at);
    const log = logger.child({ runId: c.id, hook: run.hookName });
    await stored(log, 'store the outcome of a run', () => store.finishRun(o));
    await stored(log, 'end the claim of a run', () => queue.complete(c.id, worker));
    log.warn('run interrupted by a restart twice; marked error');
    if (run.wakeMode === 'now') deps.requestHeartbeat();
  }

  function summaryEvent(run: NewRun, o: RunOutcome, at: number): NewEvent {
    const body = o.status === 'ok' ? o.summary! : oneLine(o.error ?? o.status, SUMMARY_MAX);
    const status = o.status === 'ok' ? '' : ` (${o.status})`;
    const text = run.trusted ? `Hook ${run.hookName}${status}: ${body}` : hookLine(run.hookName, run.nameTrusted === true, status, body, run.label);
    return { id: uuidv7(), source: 'run', text, createdAt: at, runId: run.id };
  }

  return {
    notify: pump,
    async recover() {
      const heartbeats = await store.failInterruptedHeartbeats(clock(), 'interrupted by a service restart');
      const queued = queue.size().waiting;
      pump();
      return { queued, heartbeats };
    },
    queued: () => queue.size().waiting,
    running: () => inFlight.size,
    async stop(deadlineMs) {
      stopping = true;
      clearTimeout(dueTimer);
      if (inFlight.size)
        await stopWithin(Promise.allSettled([...inFlight.values()]), deadlineMs, () => {
          shutdown.abort(new Error('service shutting down'));
          storeGaveUp.abort();
        });
      clearInterval(renew);
    },
    idle() {
      if (isIdle()) return Promise.resolve();
      return new Promise((r) => idleWaiters.push(r));
    },
  };
}
