/**
 * The run executor: claims runs from the store's queue and carries each out. The queue gives a session
 * key's runs in the order accepted, one at a time; different keys run concurrently up to
 * `agents.defaults.maxConcurrent` agent calls at once (a run's slot frees when its agent answers, not
 * when its outcome has committed; its session's next run is due once that commit is done). The runner
 * holds only the runs it is carrying out; the backlog is the queue's.
 */
import { uuidv7 } from '../util/uuid7.ts';
import type { Logger } from 'pino';
import type { Generation } from '../generation/types.ts';
import type { GenerationRef } from '../generation/ref.ts';
import { onNextTurn } from '../util/next-turn.ts';
import { stopWithin } from '../util/deadline.ts';
import type { MetaRecords, RunQueue, RunRecords, Transcripts } from '../store/roles.ts';
import type { Claim, NewRun, NewDelivery } from '../store/types.ts';
import { type CallResult, callAgent, Shutdown } from './agent-call.ts';
import { buildOutcome, summaryEvent } from './outcome.ts';
import { runEvents } from '../callbacks/events.ts';
import { untilStored } from './until-stored.ts';
import { StorageUnavailableError } from '../store/errors.ts';
import { RecycledMap } from '../util/recycled.ts';
import type { TokenTally } from './tokens.ts';

/** What an agent sees of its session's history: the last 50 messages, at most 64 KiB of them. */
export const TRANSCRIPT_WINDOW = 50;
export const TRANSCRIPT_MAX_BYTES = 64 * 1024;
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
  /** The runs' records (`Store.records`): their starts and outcomes, the transcripts, the main route. */
  records: RunRecords & Transcripts & MetaRecords;
  /** The runs to carry out (`Store.runs`). */
  queue: RunQueue;
  generations: GenerationRef;
  logger: Logger;
  clock?: () => number;
  /** Asks for a heartbeat (runs with `wakeMode: now`). */
  requestHeartbeat: () => void;
  /** Hands the outbox a delivery (a reply, a callback's event) this process just committed. */
  notifyOutbox: (entry?: NewDelivery) => void;
  /** Counts the tokens of each run once its outcome is stored (`/metrics`). */
  tokens?: TokenTally;
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
  return new QueueRunner(deps);
}

/** The runs this process claimed from the queue and carries out, within `maxConcurrent` agent calls at a time. */
class QueueRunner implements Runner {
  private readonly deps: RunnerDeps;
  private readonly records: RunnerDeps['records'];
  private readonly queue: RunQueue;
  private readonly generations: GenerationRef;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private readonly worker = `runner-${uuidv7()}`;
  /** The runs under way, by id, until their claim has ended (an entry per run: see util/recycled.ts). */
  private readonly inFlight = new RecycledMap<string, Promise<void>>();
  /** Runs holding one of the `maxConcurrent` slots: from the start of a run until its agent call is over. */
  private calling = 0;
  private readonly shutdown = new Shutdown();
  /**
   * Store calls waiting for the disk to write again (see `stored`): while any waits, no run starts,
   * since its outcome could not be stored either. Aborted when a stop gives up on them.
   */
  private waitingForStore = 0;
  private readonly storeGaveUp = new AbortController();
  private stopping = false;
  private claiming = false;
  private claimAgain = false;
  private idleWaiters: (() => void)[] = [];
  /** A pump when the queue's next item waiting for a time is due (a retry, a lease that runs out). */
  private dueTimer: NodeJS.Timeout | undefined;
  private dueAt = Infinity;
  private readonly renew: NodeJS.Timeout;
  /**
   * A slot freed during a turn is refilled at once while fewer than RUNS_PER_TURN runs have started in
   * that turn, so a fast agent's outcomes share one group commit; past that, on the next turn of the
   * event loop: the runner would otherwise go on from run to run in one turn and keep requests waiting.
   */
  private readonly schedulePump = onNextTurn(() => this.pump());
  private startedThisTurn = 0;
  private readonly newTurn = onNextTurn(() => (this.startedThisTurn = 0));

  constructor(deps: RunnerDeps) {
    this.deps = deps;
    this.records = deps.records;
    this.queue = deps.queue;
    this.generations = deps.generations;
    this.logger = deps.logger;
    this.clock = deps.clock ?? Date.now;
    this.renew = setInterval(() => {
      for (const id of this.inFlight.keys())
        void this.queue
          .extend(id, this.worker, LEASE_MS)
          .catch((err) => this.logger.warn({ err, runId: id }, 'renewing the lease of a run failed'));
    }, LEASE_MS / 3);
    this.renew.unref();
  }

  private isIdle(): boolean {
    return !this.claiming && this.inFlight.size === 0 && this.queue.size().waiting === 0;
  }

  private checkIdle(): void {
    if (this.idleWaiters.length && this.isIdle()) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const r of w) r();
    }
  }

  /** Claims runs for the free slots; one claim at a time, and again if asked meanwhile. */
  private pump(): void {
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    const free = this.generations.current.config.agents.defaults.maxConcurrent - this.calling;
    if (this.stopping || this.waitingForStore > 0 || free <= 0) return;
    this.claiming = true;
    this.queue.claim(this.worker, LEASE_MS, free).then(
      (claims) => {
        this.claiming = false;
        // a stop came while the claim was under way: its runs go back untouched
        if (this.stopping) for (const c of claims) void this.queue.release(c.id, this.worker).catch(() => {});
        else for (const c of claims) this.start(c);
        if (this.claimAgain) {
          this.claimAgain = false;
          this.pump();
        } else if (claims.length < free) void this.armDue();
        this.checkIdle();
      },
      (err) => {
        this.claiming = false;
        this.logger.error({ err }, 'claiming runs failed');
        void this.armDue();
        this.checkIdle();
      },
    );
  }

  /** Pumps when the queue's next item waiting for a time is due, if that is sooner than the pump already set. */
  private async armDue(): Promise<void> {
    const at = await this.queue.nextAt().catch(() => this.clock() + LEASE_MS);
    if (at === undefined || at >= this.dueAt || this.stopping) return;
    clearTimeout(this.dueTimer);
    this.dueAt = at;
    this.dueTimer = setTimeout(
      () => {
        this.dueAt = Infinity;
        this.dueTimer = undefined;
        this.pump();
      },
      Math.max(0, at - this.clock()),
    );
    this.dueTimer.unref();
  }

  private start(c: Claim<NewRun>): void {
    if (this.startedThisTurn++ === 0) this.newTurn();
    this.calling++;
    let released = false;
    // The slot limits calls to agents, not commits: it frees as soon as the agent has answered, so
    // another session's run can start while this outcome waits for its group commit.
    const release = () => {
      if (released) return;
      released = true;
      this.calling--;
      if (this.startedThisTurn < RUNS_PER_TURN) this.pump();
      else this.schedulePump();
    };
    const p = this.execute(c, release)
      .catch((err) => {
        const run = { runId: c.id };
        // the claim is left to its lease: the run is due again once it runs out (or at the next start)
        if (err instanceof StorageUnavailableError)
          this.logger.warn({ err, ...run }, 'run left for the next start: the store could not write before the stop');
        else this.logger.error({ err, ...run }, 'run failed unexpectedly');
      })
      .finally(() => {
        release();
        this.inFlight.delete(c.id);
        this.pump();
        this.checkIdle();
      });
    this.inFlight.set(c.id, p);
  }

  /** Holds its generation while it runs: a reload does not dispose what it is using. */
  private execute(c: Claim<NewRun>, release: () => void): Promise<void> {
    return this.generations.use((gen) => this.executeOn(gen, c, release));
  }

  /**
   * A store call of a run, made again while the store cannot write (a full disk) until it can:
   * a run's claim is not ended while it is still `queued` or `running` on disk.
   */
  private stored<T>(log: Logger, what: string, call: () => Promise<T>): Promise<T> {
    return untilStored(call, { signal: this.storeGaveUp.signal, logger: log, what, onWait: this.onWait, onResume: this.onResume });
  }

  private readonly onWait = (): void => {
    this.waitingForStore++;
  };

  private readonly onResume = (): void => {
    this.waitingForStore--;
    this.pump();
  };

  /** `release` frees the run's concurrency slot; called once the agent call is over. */
  private async executeOn(gen: Generation, c: Claim<NewRun>, release: () => void): Promise<void> {
    const { records, queue } = this;
    const run = c.item;
    const id = c.id;
    // started twice already and never finished: interrupted by two restarts
    if (c.attempts >= 2) return this.interruptedTwice(c);
    const startedAt = this.clock();
    // Not awaited: writes commit in order, so `running` is stored before the outcome can be, and a
    // fast provider's run then costs one commit instead of two. A crash before this commit leaves the
    // run `queued`, which a restart runs again as it would after a crash just before the start.
    const started = records.startRun(id, startedAt);
    // a start the store could not write (a full disk) is kept and written with the run's outcome
    started.catch(
      (err) => err instanceof StorageUnavailableError || this.logger.error({ err, runId: id }, 'recording the start of a run failed'),
    );
    const log = this.logger.child({ runId: id, hook: run.hookName });
    const result = run.kind === 'deliver' ? ({ status: 'ok', text: run.message } as const) : await this.callFor(gen, id, run, log);
    release();
    if (result.status === 'aborted') {
      await queue.release(id, this.worker);
      log.info('run interrupted by shutdown; left queued');
      return;
    }
    const finishedAt = this.clock();
    // the route is chosen by the config serving now, which a reload during the call may have changed
    const outcome = await this.stored(log, 'choose the route of a reply', () =>
      buildOutcome(this.generations.current, records, {
        run,
        result,
        finishedAt,
        // a delivery without a model has no conversation and no summary (docs/mappings.md, "A mapping")
        ...(run.kind === 'deliver' ? { transcript: false } : { prompt: { content: run.message, at: startedAt }, summarize: true }),
        failedReason: NOT_OK,
      }),
    );
    // a forwarded run's summary and heartbeat are the other gateway's (docs/runtime.md, "Forwarded runs");
    // a delivery without a model has none
    if (!outcome.forwarded && run.kind !== 'deliver') outcome.event = summaryEvent(run, outcome, finishedAt);
    outcome.callbacks = runEvents(this.generations.current, run, outcome);
    await this.stored(log, 'store the outcome of a run', () => records.finishRun(outcome));
    await this.stored(log, 'end the claim of a run', () => queue.complete(id, this.worker));
    if (outcome.usage) this.deps.tokens?.add(run.agentId ?? 'none', run.model, outcome.usage);
    const d = outcome.delivery;
    // a skipped delivery says why (fixed phrases and channel names, never the reply or the recipient)
    log.info(
      {
        status: outcome.status,
        ms: finishedAt - startedAt,
        delivery: d.kind,
        ...(d.kind === 'skipped' ? { reason: d.reason } : {}),
        ...(outcome.forwarded ? { forwardedRunId: outcome.forwarded.runId } : {}),
      },
      'run finished',
    );
    if (outcome.delivery.kind === 'outbox') this.deps.notifyOutbox(outcome.delivery.entry);
    for (const e of outcome.callbacks) this.deps.notifyOutbox(e);
    if (run.wakeMode === 'now' && !outcome.forwarded) this.deps.requestHeartbeat();
  }

  /**
   * The agent call of a run: its agent's instructions, and the session's transcript unless the
   * session is new or isolated (docs/agents.md, "Sessions").
   */
  private async callFor(gen: Generation, id: string, run: NewRun, log: Logger): Promise<CallResult> {
    const history =
      run.newSession || run.sessionMode === 'isolated'
        ? []
        : await this.stored(log, 'read a transcript', () =>
            this.records.transcript(run.sessionKey, TRANSCRIPT_WINDOW, TRANSCRIPT_MAX_BYTES),
          );
    const agent = run.agentId === null ? undefined : gen.agents.byId.get(run.agentId);
    return callAgent(gen, {
      runId: id,
      sessionKey: run.sessionKey,
      model: run.model,
      thinking: run.thinking,
      messages: [...history.map((m) => ({ role: m.role, content: m.content })), { role: 'user' as const, content: run.message }],
      instructions: agent?.instructions ?? null,
      timeoutMs: run.timeoutSeconds * 1000,
      hook: { name: run.hookName, wakeMode: run.wakeMode, deliver: run.deliver },
      shutdown: this.shutdown,
    });
  }

  private async interruptedTwice(c: Claim<NewRun>): Promise<void> {
    const run = c.item;
    const at = this.clock();
    const result = { status: 'error' as const, error: 'interrupted twice by a service restart' };
    const o = await buildOutcome(this.generations.current, this.records, { run, result, finishedAt: at, failedReason: NOT_OK });
    o.event = summaryEvent(run, o, at);
    o.callbacks = runEvents(this.generations.current, run, o);
    const log = this.logger.child({ runId: c.id, hook: run.hookName });
    await this.stored(log, 'store the outcome of a run', () => this.records.finishRun(o));
    await this.stored(log, 'end the claim of a run', () => this.queue.complete(c.id, this.worker));
    for (const e of o.callbacks) this.deps.notifyOutbox(e);
    log.warn('run interrupted by a restart twice; marked error');
    if (run.wakeMode === 'now') this.deps.requestHeartbeat();
  }

  notify(): void {
    this.pump();
  }

  async recover(): Promise<{ queued: number; heartbeats: number }> {
    const heartbeats = await this.records.failInterruptedHeartbeats(this.clock(), 'interrupted by a service restart');
    const queued = this.queue.size().waiting;
    this.pump();
    return { queued, heartbeats };
  }

  queued(): number {
    return this.queue.size().waiting;
  }

  running(): number {
    return this.inFlight.size;
  }

  async stop(deadlineMs: number): Promise<void> {
    this.stopping = true;
    clearTimeout(this.dueTimer);
    if (this.inFlight.size)
      await stopWithin(Promise.allSettled([...this.inFlight.values()]), deadlineMs, () => {
        this.shutdown.abort(new Error('service shutting down'));
        this.storeGaveUp.abort();
      });
    clearInterval(this.renew);
  }

  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }
}
