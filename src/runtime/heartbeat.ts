/**
 * The heartbeat: a run of the main agent over the pending system events of
 * the main session. Triggered by the periodic timer or by `request()`
 * (wake `now`); requests within the coalescing window become one heartbeat.
 * The reply goes to the main route unless it is only `HEARTBEAT_OK`.
 *
 * Both triggers enqueue the main session's heartbeat task on the work queue
 * (a request due after the window, the timer due now) and claim it when due:
 * the queue keeps one waiting, so the requests of every instance on a store
 * coalesce there, and the one instance whose claim gets it runs it.
 *
 * One heartbeat takes every pending event, however many: it shows the newest
 * `agents.defaults.heartbeat.maxEvents` and counts the older ones by source,
 * so a backlog costs one agent call, not one per batch.
 */
import { uuidv7 } from '../util/uuid7.ts';
import type { Logger } from 'pino';
import type { Generation } from '../generation/types.ts';
import type { GenerationRef } from '../generation/ref.ts';
import type { EventRecords, MetaRecords, RunRecords, TaskQueue, Transcripts } from '../store/roles.ts';
import type { Claim, NewDelivery, NewRun, Task } from '../store/types.ts';
import { callAgent, Shutdown } from './agent-call.ts';
import { buildOutcome } from './outcome.ts';
import type { TokenTally } from './tokens.ts';
import { MAIN_SESSION } from '../names.ts';
import { LEASE_MS, TRANSCRIPT_MAX_BYTES, TRANSCRIPT_WINDOW } from './runner.ts';
import { untilStored } from './until-stored.ts';
import { stopWithin } from '../util/deadline.ts';
import { DEFAULT_HEARTBEAT_PROMPT, heartbeatPrompt, parseDuration } from './heartbeat-prompt.ts';

export const COALESCE_MS = 250;
/** The main session's heartbeat on the work queue: one waits at a time. */
const MAIN_TASK: Task = { kind: 'heartbeat', key: MAIN_SESSION };

export interface HeartbeatDeps {
  /** The heartbeat's records (`Store.records`): the pending events, its run, the main session's transcript, the main route. */
  records: RunRecords & EventRecords & Transcripts & MetaRecords;
  /** Where heartbeats are asked for and claimed (`Store.tasks`). */
  tasks: TaskQueue;
  generations: GenerationRef;
  logger: Logger;
  clock?: () => number;
  notifyOutbox: (entry?: NewDelivery) => void;
  coalesceMs?: number;
  /** Counts the tokens of each heartbeat once its outcome is stored (`/metrics`). */
  tokens?: TokenTally;
}

export interface Heartbeat {
  /** Asks for a heartbeat soon; calls within the coalescing window share one. */
  request(): void;
  /** (Re)arms the periodic timer from `agents.defaults.heartbeat.every`. */
  start(): void;
  /** Stops the timer and ignores new requests; a heartbeat in progress may finish within `deadlineMs`, then it is aborted. */
  stop(deadlineMs?: number): Promise<void>;
  /** Runs one heartbeat now (timer and tests). Returns the heartbeat run id, or undefined when nothing was pending. */
  beat(): Promise<string | undefined>;
  /** Resolves when no heartbeat is scheduled or running. */
  idle(): Promise<void>;
  /** Claims a heartbeat that is due and no one holds (another instance asked for it, or stopped while holding it). */
  poll(): void;
}

export function createHeartbeat(deps: HeartbeatDeps): Heartbeat {
  return new HeartbeatLoop(deps);
}

/**
 * The heartbeat's state: the periodic timer, the claim timer set for the heartbeat this process asked
 * for, the enqueues and claims under way, and the heartbeat running.
 */
class HeartbeatLoop implements Heartbeat {
  private readonly deps: HeartbeatDeps;
  private readonly records: HeartbeatDeps['records'];
  private readonly tasks: TaskQueue;
  private readonly generations: GenerationRef;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private readonly coalesceMs: number;
  private readonly worker = `heartbeat-${uuidv7()}`;
  private periodic: NodeJS.Timeout | undefined;
  /** A claim when the heartbeat this process asked for is due. */
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  /** When the heartbeat this process enqueued is due, until it tries to claim it. */
  private dueAt: number | undefined;
  /** Enqueues and claims under way. */
  private asking = 0;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  private readonly shutdown = new Shutdown();
  /** A heartbeat's store calls are made again while the store cannot write (a full disk), until a stop gives up. */
  private readonly storeGaveUp = new AbortController();
  private idleWaiters: (() => void)[] = [];

  constructor(deps: HeartbeatDeps) {
    this.deps = deps;
    this.records = deps.records;
    this.tasks = deps.tasks;
    this.generations = deps.generations;
    this.logger = deps.logger;
    this.clock = deps.clock ?? Date.now;
    this.coalesceMs = deps.coalesceMs ?? COALESCE_MS;
  }

  private stored<T>(what: string, call: () => Promise<T>): Promise<T> {
    return untilStored(call, { signal: this.storeGaveUp.signal, logger: this.logger, what });
  }

  private settle(): void {
    if (!this.timer && !this.running && !this.asking && this.idleWaiters.length) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const r of w) r();
    }
  }

  /**
   * Asks the queue for the main session's heartbeat, due at `at`: requests while one waits coalesce
   * there (across instances too), and whichever instance claims it runs it.
   */
  private want(at: number): void {
    if (this.stopped || (this.dueAt !== undefined && this.dueAt <= at)) return; // the queue would coalesce it
    this.dueAt = at;
    this.asking++;
    this.stored('request a heartbeat', () => this.tasks.enqueue(MAIN_TASK, at)).then(
      (due) => {
        this.asking--;
        // the heartbeat waiting may be due sooner (asked for by another instance)
        if (this.dueAt !== undefined) this.arm((this.dueAt = Math.min(this.dueAt, due)));
        this.settle();
      },
      (err) => {
        this.asking--;
        this.dueAt = undefined;
        this.logger.error({ err }, 'requesting a heartbeat failed');
        this.settle();
      },
    );
  }

  /** Claims at `at`, unless a claim is set for sooner; a heartbeat running claims again when it ends. */
  private arm(at: number): void {
    if (this.stopped || this.running || at >= this.timerAt) return;
    const wait = at - this.clock();
    if (wait <= 0) return this.fire();
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.fire(), wait);
  }

  private fire(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.running || this.stopped) return;
    const due = this.dueAt;
    this.dueAt = undefined;
    this.asking++;
    // the time the claim is made at: a timer may fire a moment before its time, and by the answer the
    // clock may have passed it, so "not due yet" is judged by the time the queue judged it at
    const asked = this.clock();
    const { tasks } = this;
    this.stored('claim a heartbeat', () => tasks.claim('heartbeat', this.worker, LEASE_MS, 1)).then(
      ([c]) => {
        this.asking--;
        if (c && this.stopped) void tasks.release(c.id, this.worker).catch(() => {});
        else if (c) this.run(c);
        // not due yet by the queue's clock: tried again at its time (one waiting behind another instance's
        // heartbeat is claimed by that instance when it ends its claim)
        else if (due !== undefined && due > asked) this.arm((this.dueAt = Math.min(this.dueAt ?? due, due)));
        this.settle();
      },
      (err) => {
        this.asking--;
        this.logger.error({ err }, 'claiming a heartbeat failed');
        this.settle();
      },
    );
  }

  private run(c: Claim<Task>): void {
    const { tasks } = this;
    const renew = setInterval(
      () =>
        void tasks
          .extend(c.id, this.worker, LEASE_MS)
          .catch((err) => this.logger.warn({ err }, 'renewing the lease of a heartbeat failed')),
      LEASE_MS / 3,
    );
    renew.unref();
    this.running = this.beat()
      .catch((err) => this.logger.error({ err }, 'heartbeat failed'))
      .then(() => this.stored('end the claim of a heartbeat', () => tasks.complete(c.id, this.worker)))
      .catch((err) => this.logger.error({ err }, 'ending the claim of a heartbeat failed'))
      .finally(() => {
        clearInterval(renew);
        this.running = undefined;
        // one asked for meanwhile waits behind this one: claimed when due (by this process or another)
        if (this.dueAt !== undefined) this.arm(this.dueAt);
        else this.fire();
        this.settle();
      });
  }

  /** Holds its generation while it runs: a reload does not dispose what it is using. */
  beat(): Promise<string | undefined> {
    return this.generations.use((gen) => this.beatOn(gen));
  }

  private async beatOn(gen: Generation): Promise<string | undefined> {
    const { records, clock } = this;
    const defaults = gen.config.agents.defaults;
    const { events, older } = await this.stored('read the pending events', () => records.pendingBacklog(defaults.heartbeat.maxEvents));
    if (!events.length) return undefined;
    const startedAt = clock();
    const prompt = heartbeatPrompt(events, defaults.heartbeat.prompt ?? DEFAULT_HEARTBEAT_PROMPT, older);
    const run = heartbeatRun(gen, prompt, startedAt);
    await this.stored('store the start of a heartbeat', () => records.insertHeartbeat(run, startedAt));
    const history = await this.stored('read the main transcript', () =>
      records.transcript(MAIN_SESSION, TRANSCRIPT_WINDOW, TRANSCRIPT_MAX_BYTES),
    );
    const agent = gen.agents.byId.get(gen.agents.defaultId)!;
    const result = await callAgent(gen, {
      runId: run.id,
      sessionKey: MAIN_SESSION,
      model: run.model,
      thinking: run.thinking,
      messages: [...history.map((m) => ({ role: m.role, content: m.content })), { role: 'user' as const, content: prompt }],
      instructions: agent.instructions,
      timeoutMs: run.timeoutSeconds * 1000,
      shutdown: this.shutdown,
    });
    const finishedAt = clock();
    const ended = result.status === 'aborted' ? { status: 'error' as const, error: 'interrupted by shutdown' } : result;
    const outcome = await this.stored('choose the route of a reply', () =>
      buildOutcome(gen, records, {
        run,
        result: ended,
        finishedAt,
        prompt: { content: prompt, at: startedAt },
        failedReason: 'heartbeat did not succeed',
        mainSession: true,
      }),
    );
    if (ended.status === 'ok') {
      // events are consumed only when the agent has actually seen them (the older ones as counts)
      outcome.consumedEventIds = events.map((e) => e.id);
      if (older.count) outcome.consumeOlder = true;
    }
    await this.stored('store the outcome of a heartbeat', () => records.finishRun(outcome));
    // the main agent's: heartbeats run the main session
    if (outcome.usage) this.deps.tokens?.add(run.agentId ?? 'none', run.model, outcome.usage);
    this.logger.info(
      {
        heartbeatId: run.id,
        events: events.length,
        olderEvents: older.count,
        status: outcome.status,
        delivery: outcome.delivery.kind,
        ...(outcome.delivery.kind === 'skipped' ? { reason: outcome.delivery.reason } : {}),
      },
      'heartbeat',
    );
    if (outcome.delivery.kind === 'outbox') this.deps.notifyOutbox(outcome.delivery.entry);
    return run.id;
  }

  request(): void {
    this.want(this.clock() + this.coalesceMs);
  }

  start(): void {
    if (this.periodic) clearInterval(this.periodic);
    this.periodic = undefined;
    const every = parseDuration(this.generations.current.config.agents.defaults.heartbeat.every);
    if (every > 0 && !this.stopped) {
      this.periodic = setInterval(() => this.want(this.clock()), every);
      this.periodic.unref();
    }
  }

  async stop(deadlineMs = 0): Promise<void> {
    this.stopped = true;
    this.dueAt = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.periodic) clearInterval(this.periodic);
    this.periodic = undefined;
    if (!this.running) return this.settle();
    await stopWithin(this.running, deadlineMs, () => {
      this.shutdown.abort(new Error('service shutting down'));
      this.storeGaveUp.abort();
    });
  }

  poll(): void {
    if (!this.running && !this.asking && !this.stopped) this.fire();
  }

  idle(): Promise<void> {
    if (!this.timer && !this.running && !this.asking) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }
}

/** The run a heartbeat stores: the main session's, trusted, its reply to the main route. */
function heartbeatRun(gen: Generation, prompt: string, startedAt: number): NewRun {
  // the main session's agent is the default one (docs/agents.md)
  const agent = gen.agents.byId.get(gen.agents.defaultId)!;
  return {
    id: uuidv7(),
    kind: 'heartbeat',
    hookName: 'heartbeat',
    label: 'heartbeat',
    trusted: true,
    sessionKey: MAIN_SESSION,
    message: prompt,
    model: agent.model,
    thinking: agent.thinking,
    timeoutSeconds: agent.timeoutSeconds,
    wakeMode: 'next-heartbeat',
    deliver: true,
    channel: 'last',
    to: null,
    agentId: agent.id,
    sessionMode: 'persistent',
    createdAt: startedAt,
  };
}
