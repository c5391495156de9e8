/**
 * The transform workers of one generation. Each worker loads every transform
 * module of the generation when it starts (so a broken module fails the
 * generation build, not a request) and runs its calls one at a time, in order.
 *
 * Deadlines: a call fails after `timeoutMs` counted from when it was queued.
 * If it was running, its worker is terminated (this stops even a synchronous
 * infinite loop) and replaced, so the main thread never waits on a transform
 * and other requests keep being answered. The calls' deadlines share one
 * timer (util/deadlines.ts).
 *
 * Size: the pool starts with `min` workers and grows, up to `max`, only when a
 * call has waited `scaleAfterMs` for a free worker (a slow or stuck transform:
 * its worker has answered nothing for that long); extra workers retire after
 * `idleMs` without work. Each worker is an isolate of its own, tens of
 * megabytes (measured: docs/performance.md, "Memory"), so a steady pool of
 * one keeps memory low.
 *
 * Cost: calls made during one turn go to a worker in one message, a worker
 * holds up to `PIPELINE` calls, and it answers on a port of its own that the
 * pool drains without an event per answer. Under load a call costs several
 * times less than through a pool library (measured: docs/development.md,
 * "Transform workers").
 */
import { receiveMessageOnPort } from 'node:worker_threads';
import { TransformCallError, type CallBody, type PoolOptions, type PoolStats, type TransformPool, type TransformSpec } from './calls.ts';
import { PIPELINE, startWorker, stopWorker, type CallMessage, type Job, type Reply, type Slot, type Started } from './slot.ts';
import { createWorkerSource, type WorkerSource } from './workers.ts';
import { TakenBack } from './taken-back.ts';
import { onNextTurn } from '../util/next-turn.ts';
import { Deadlines } from '../util/deadlines.ts';

export { createWorkerSource, type SpareWorkerSource, type WorkerSource } from './workers.ts';
export {
  TransformCallError,
  TransformLoadError,
  type CallBody,
  type PoolOptions,
  type TransformPool,
  type TransformSpec,
} from './calls.ts';

type Sizes = Required<Omit<PoolOptions, 'source' | 'onWorkerError'>>;

export async function createTransformPool(specs: TransformSpec[], opts: PoolOptions): Promise<TransformPool> {
  const min = Math.max(1, opts.min ?? 1);
  const sizes: Sizes = { min, max: Math.max(min, opts.max), scaleAfterMs: opts.scaleAfterMs ?? 25, idleMs: opts.idleMs ?? 10_000 };
  const source = opts.source ?? createWorkerSource(0);
  const started = await Promise.allSettled(Array.from({ length: min }, () => startWorker(source, specs)));
  const failure = started.find((r) => r.status === 'rejected');
  if (failure) {
    for (const r of started) if (r.status === 'fulfilled') void stopWorker(r.value);
    throw failure.reason;
  }
  const pool = new Pool(specs, source, sizes, opts.onWorkerError);
  for (const r of started) if (r.status === 'fulfilled') pool.attach(r.value);
  return pool;
}

class Pool implements TransformPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly deadlines = new Deadlines<Job>((job) => this.expire(job));
  /** Calls made during one turn of the event loop go out together. */
  private readonly schedulePump = onNextTurn(() => this.pump());
  private starting = 0;
  private nextId = 1;
  private closed = false;
  private restarts = 0;
  private scaledUp = 0;
  private rebalanceTimer: NodeJS.Timeout | undefined;
  private readonly specs: TransformSpec[];
  private readonly source: WorkerSource;
  private readonly sizes: Sizes;
  private readonly onWorkerError: ((err: Error) => void) | undefined;

  constructor(specs: TransformSpec[], source: WorkerSource, sizes: Sizes, onWorkerError: ((err: Error) => void) | undefined) {
    this.specs = specs;
    this.source = source;
    this.sizes = sizes;
    this.onWorkerError = onWorkerError;
  }

  call(key: string, contexts: unknown[], timeoutMs: number, body?: CallBody): Promise<unknown[]> {
    if (this.closed) return Promise.reject(new TransformCallError('the transform pool is closed', false));
    return new Promise<unknown[]>((resolve, reject) => {
      const job: Job = { key, contexts, body, queuedAt: Date.now(), timeoutMs, resolve, reject };
      this.queue.push(job);
      job.watch = this.deadlines.add(job, performance.now() + timeoutMs);
      this.schedulePump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.rebalanceTimer);
    this.deadlines.clear();
    const pending = [...this.queue.splice(0), ...this.slots.flatMap((s) => s.sent)];
    for (const job of pending) this.settle(job, new TransformCallError('the transform pool is closed', false));
    await Promise.all(
      this.slots.splice(0).map((s) => {
        s.live = false;
        s.sent = [];
        clearTimeout(s.idleTimer);
        return stopWorker(s);
      }),
    );
  }

  stats(): PoolStats {
    return {
      workers: this.slots.length,
      busy: this.slots.filter((s) => s.sent.length).length,
      // calls not running yet: in the pool's queue or sent ahead behind another call
      queued: this.queue.length + this.slots.reduce((n, s) => n + Math.max(0, s.sent.length - 1), 0),
      restarts: this.restarts,
      scaledUp: this.scaledUp,
    };
  }

  /** Starts serving through a worker that has loaded the modules. */
  attach(started: Started): void {
    const slot: Slot = { ...started, sent: [], answeredAt: 0, live: true };
    slot.replies.on('message', (m: Reply) => {
      // one clock read for this answer and the ones drained behind it
      slot.answeredAt = Date.now();
      this.answer(slot, m);
      this.drain(slot);
      this.pump();
    });
    // an uncaught error inside the worker (e.g. thrown from a timer the transform set)
    slot.worker.on('error', (err) => {
      this.onWorkerError?.(err);
      this.drop(slot, new TransformCallError(`transform worker crashed: ${err.message}`, false));
    });
    slot.worker.on('exit', () => this.drop(slot, new TransformCallError('transform worker exited', false)));
    this.slots.push(slot);
  }

  private settle(job: Job, err: Error | undefined, results?: unknown[]): void {
    job.settled = true;
    if (job.watch) this.deadlines.delete(job.watch);
    if (err) job.reject(err);
    else job.resolve(results ?? []);
  }

  private expire(job: Job): void {
    // its answer may be waiting on the port, behind the timer in the event loop
    if (job.slot) this.drain(job.slot);
    if (job.settled) return;
    const slot = job.slot;
    if (slot && slot.sent[0] === job) return this.drop(slot, new TransformCallError(`timed out after ${job.timeoutMs} ms`, true));
    // still queued, or waiting behind a slower call in a worker: give up on it alone
    if (slot) {
      slot.sent.splice(slot.sent.indexOf(job), 1);
      job.slot = undefined;
    } else this.queue.splice(this.queue.indexOf(job), 1);
    this.settle(job, new TransformCallError(`timed out after ${job.timeoutMs} ms waiting for a free worker`, true));
  }

  private answer(slot: Slot, m: Reply): void {
    // Looked up in the worker's own list (nearly always its first entry), not in a Map of calls by id: V8
    // replaces a Map's table as it grows and shrinks, a replaced table still refers to its entries, and
    // under load that kept the calls' requests alive into the old generation (more peak memory; measured:
    // docs/performance.md, "Ids, deadlines and collections").
    const sent = slot.sent;
    let at = 0;
    while (at < sent.length && sent[at]!.id !== m.id) at++;
    if (at === sent.length) return; // a call that timed out while it waited behind another: its answer is not wanted
    const job = sent[at]!;
    sent.splice(at, 1);
    job.slot = undefined;
    this.settle(job, m.type === 'result' ? undefined : new TransformCallError(m.message ?? 'transform failed', false, m.stack), m.results);
  }

  /** Takes every answer the worker has already sent, without waiting for their events. */
  private drain(slot: Slot): void {
    let r = receiveMessageOnPort(slot.replies);
    if (!r) return;
    slot.answeredAt = Date.now();
    for (; r; r = receiveMessageOnPort(slot.replies)) this.answer(slot, r.message as Reply);
  }

  /**
   * Removes a worker. The call it was running fails with `reason`; the calls
   * waiting behind it never started, so they go back to the front of the queue.
   * Starts another worker if the pool fell below `min`.
   */
  private drop(slot: Slot, reason?: TransformCallError): void {
    if (!slot.live) return;
    // answers sent before the worker stopped count, even if their events have not come yet
    this.drain(slot);
    slot.live = false;
    clearTimeout(slot.idleTimer);
    const [running, ...waiting] = slot.sent;
    slot.sent = [];
    if (running) {
      running.slot = undefined;
      this.settle(running, reason ?? new TransformCallError('transform worker stopped', false));
    }
    this.requeue(waiting);
    void stopWorker(slot);
    const at = this.slots.indexOf(slot);
    if (at !== -1) this.slots.splice(at, 1);
    if (!this.closed && this.slots.length + this.starting < this.sizes.min) {
      this.restarts++;
      this.grow();
    }
    this.pump();
  }

  /** Puts calls that never started back at the front of the queue, in their order. */
  private requeue(jobs: Job[]): void {
    for (const j of [...jobs].reverse()) {
      j.slot = undefined;
      j.id = undefined;
      j.sentAt = undefined;
      this.queue.unshift(j);
    }
  }

  /**
   * Takes back the calls waiting behind a slow one; the worker will skip them. Only those: the slow
   * call may not even have started yet (a worker slow to get to it), and it is still answered.
   */
  private reclaim(slot: Slot): void {
    const waiting = slot.sent.splice(1);
    if (!waiting.length) return;
    Atomics.store(slot.takenBack, TakenBack.FROM, BigInt(waiting[0]!.id!));
    Atomics.store(slot.takenBack, TakenBack.THROUGH, BigInt(waiting[waiting.length - 1]!.id!));
    this.requeue(waiting);
  }

  /**
   * Starts a worker: to replace one that was dropped, or (`scaling`) one more while calls wait. A
   * replacement asks the source for a spare for next time (a stuck transform is likely to be stuck
   * again); growth does not, as the extra worker retires once the burst is over.
   */
  private grow(scaling = false): void {
    this.starting++;
    startWorker(this.source, this.specs, !scaling).then(
      (started) => {
        this.starting--;
        if (this.closed) return void stopWorker(started);
        this.attach(started);
        this.pump();
      },
      (err: Error) => {
        this.starting--;
        this.onWorkerError?.(err);
      },
    );
  }

  /**
   * How long the worker has been on its current call, at most: since that call was sent or since the
   * worker's last answer, whichever is later. Counted from the send alone, the last of several calls
   * sent together would look slow while the worker is still answering the ones before it.
   */
  private onCallFor(slot: Slot, now: number): number {
    return now - Math.max(slot.sent[0]!.sentAt!, slot.answeredAt);
  }

  /** A worker that can take another call now: alive, room in its pipeline, and not stuck on a slow one. */
  private ready(slot: Slot, now: number): boolean {
    return slot.live && slot.sent.length < PIPELINE && (slot.sent.length === 0 || this.onCallFor(slot, now) < this.sizes.scaleAfterMs);
  }

  /**
   * Runs while calls wait: takes back the calls queued behind a call that has
   * run past `scaleAfterMs` (with no answer from its worker for that long), and
   * starts one more worker per waiting call while no worker can take it (up to
   * `max`).
   */
  private rebalance(): void {
    this.rebalanceTimer = undefined;
    if (this.closed) return;
    // answers that reached the ports while this thread was busy (they wait behind this timer) count first
    for (const s of this.slots) this.drain(s);
    const now = Date.now();
    const { scaleAfterMs, max } = this.sizes;
    for (const s of this.slots) if (s.sent.length > 1 && this.onCallFor(s, now) >= scaleAfterMs) this.reclaim(s);
    const waited = this.queue.length > 0 && now - this.queue[0]!.queuedAt >= scaleAfterMs;
    const room = this.slots.length + this.starting < max && this.starting < this.queue.length;
    if (waited && room && !this.slots.some((s) => this.ready(s, now))) {
      this.scaledUp++;
      this.grow(true);
    }
    this.pump();
  }

  private pump(): void {
    const now = Date.now();
    if (this.queue.length) this.send(now);
    if (!this.rebalanceTimer && (this.queue.length || this.slots.some((s) => s.sent.length > 1))) {
      this.rebalanceTimer = setTimeout(() => this.rebalance(), this.sizes.scaleAfterMs);
    }
    if (this.slots.length > this.sizes.min) this.retireIdle();
  }

  /**
   * Sends the queued calls to the least busy ready workers, one message per worker: one wake-up of
   * the worker (and one clone) for a burst of requests instead of one per call.
   */
  private send(now: number): void {
    let outbox: Map<Slot, CallMessage[]> | undefined;
    while (this.queue.length) {
      let best: Slot | undefined;
      for (const s of this.slots) if (this.ready(s, now) && (!best || s.sent.length < best.sent.length)) best = s;
      if (!best) break;
      const job = this.queue.shift()!;
      clearTimeout(best.idleTimer);
      best.idleTimer = undefined;
      job.id = this.nextId++;
      job.sentAt = now;
      job.slot = best;
      best.sent.push(job);
      const msg: CallMessage = { id: job.id, key: job.key, calls: job.contexts };
      if (job.body) {
        msg.json = job.body.json;
        if (job.body.deferred?.length) msg.deferred = job.body.deferred;
      }
      outbox ??= new Map();
      const list = outbox.get(best);
      if (list) list.push(msg);
      else outbox.set(best, [msg]);
    }
    if (outbox) for (const [slot, jobs] of outbox) slot.worker.postMessage({ type: 'calls', jobs });
  }

  /** Workers beyond `min` without work retire after `idleMs`. */
  private retireIdle(): void {
    for (const slot of this.slots) {
      if (slot.sent.length || slot.idleTimer) continue;
      slot.idleTimer = setTimeout(() => {
        slot.idleTimer = undefined;
        if (!slot.sent.length && this.slots.length > this.sizes.min) this.drop(slot);
      }, this.sizes.idleMs);
      slot.idleTimer.unref();
    }
  }
}
