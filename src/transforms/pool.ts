/**
 * The transform workers of one generation. Each worker loads every transform
 * module of the generation when it starts (so a broken module fails the
 * generation build, not a request) and runs one call at a time.
 *
 * Deadlines: a call fails after `timeoutMs` counted from when it was queued.
 * If it was running, its worker is terminated (this stops even a synchronous
 * infinite loop) and replaced, so the main thread never waits on a transform
 * and other requests keep being answered. The calls' deadlines share one
 * timer (util/deadlines.ts).
 *
 * Size: the pool starts with `min` workers and grows, up to `max`, only when a
 * call has waited `scaleAfterMs` for a free worker (a slow or stuck
 * transform: its worker has answered nothing for that long); extra workers
 * retire after `idleMs` without work. A worker costs
 * ~17 MB (~33 MB once it strips TypeScript), so a steady pool of one keeps
 * memory low; one round trip costs ~10 µs CPU under concurrency (~24 µs when
 * calls are serial, 2 KiB payload).
 * Calls made during one turn of the event loop go to a worker in one message:
 * a message costs the main thread ~2.5 µs however small, and a burst of
 * requests then wakes the worker once. The worker answers each call as soon
 * as it is done (so a later stuck call cannot hold back answers already
 * made), on a port of its own: the first answer of a wake-up is an event, and
 * the ones queued behind it are taken from the port directly, without an
 * event each.
 */
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { createWorkerSource, initWorker, type WorkerSource } from './workers.ts';
import { TakenBack } from './taken-back.ts';
import { onNextTurn } from '../util/next-turn.ts';
import { Deadlines, type Entry } from '../util/deadlines.ts';

export { createWorkerSource, type SpareWorkerSource, type WorkerSource } from './workers.ts';

export interface TransformSpec {
  key: string;
  file: string;
  exportName?: string;
}

export class TransformLoadError extends Error {
  readonly errors: { key: string; message: string }[];
  constructor(errors: { key: string; message: string }[]) {
    super(errors.map((e) => `${e.key}: ${e.message}`).join('; '));
    this.errors = errors;
  }
}

export class TransformCallError extends Error {
  readonly timedOut: boolean;
  readonly detail: string;
  constructor(detail: string, timedOut: boolean, stack?: string) {
    super(detail);
    this.detail = detail;
    this.timedOut = timedOut;
    if (stack) this.stack = stack;
  }
}

/**
 * The request body of a call, sent as the JSON text it was parsed from: the
 * worker parses it into each context's `payload` (one object shared by the
 * call's contexts), which costs less than copying the parsed object across
 * threads. `deferred` names fields of each context's `action` whose value is
 * the JSON of the body (a message without a template); the worker computes
 * them only if the transform reads them.
 */
export interface CallBody {
  json: string;
  deferred?: readonly string[];
}

export interface TransformPool {
  /**
   * Runs `key` once per context (one round trip) and returns the results in
   * order. With `body`, the contexts come without `payload` (see CallBody).
   */
  call(key: string, contexts: unknown[], timeoutMs: number, body?: CallBody): Promise<unknown[]>;
  close(): Promise<void>;
  stats(): { workers: number; busy: number; queued: number; restarts: number; scaledUp: number };
}

export interface PoolOptions {
  min?: number;
  max: number;
  /** Workers to draw from (default: start each on demand). */
  source?: WorkerSource;
  scaleAfterMs?: number;
  idleMs?: number;
  onWorkerError?: (err: Error) => void;
}

interface Job {
  key: string;
  contexts: unknown[];
  body: CallBody | undefined;
  queuedAt: number;
  timeoutMs: number;
  /** Its deadline, watched until it is settled. */
  watch?: Entry<Job>;
  resolve: (r: unknown[]) => void;
  reject: (e: Error) => void;
  /** Set while the job is with a worker. */
  slot?: Slot;
  id?: number;
  sentAt?: number;
  /** Resolved or rejected. */
  settled?: boolean;
}

/** One call as sent to a worker (a message carries several). */
interface CallMessage {
  id: number;
  key: string;
  calls: unknown[];
  json?: string;
  deferred?: readonly string[];
}

interface Slot {
  worker: Worker;
  /** The worker's answers to calls. */
  replies: MessagePort;
  /** Shared with the worker: the range of calls taken back from it, which it skips (see `TakenBack`). */
  takenBack: BigInt64Array;
  /** Jobs sent to this worker, in order; the first is running, the rest wait behind it. */
  sent: Job[];
  /**
   * When the worker's last answers were taken (`Date.now()`, once per batch): it runs its calls in order, so the
   * first call in `sent` started no earlier than this, however long ago it was sent.
   */
  answeredAt: number;
  live: boolean;
  idleTimer?: NodeJS.Timeout;
}

/**
 * Calls a worker may hold at once. Sending ahead lets one wake-up of the
 * worker (and of the main thread for the answers) serve many calls under
 * load, instead of two thread wake-ups per call.
 */
const PIPELINE = 32;

interface Started {
  worker: Worker;
  takenBack: BigInt64Array;
  replies: MessagePort;
}

interface Reply {
  type: string;
  id: number;
  results?: unknown[];
  message?: string;
  stack?: string;
}

/** `forNext`: whether the source starts a spare for the next worker (see `WorkerSource.take`). */
async function startWorker(source: WorkerSource, specs: TransformSpec[], forNext = true): Promise<Started> {
  const shared = new SharedArrayBuffer(TakenBack.length * BigInt64Array.BYTES_PER_ELEMENT);
  const { port1, port2 } = new MessageChannel();
  const result = await initWorker(await source.take(forNext), specs, shared, port2);
  if ('errors' in result) {
    port1.close();
    throw new TransformLoadError(result.errors);
  }
  // the worker keeps the process alive (or not, as a spare); its answer port does not add to that
  port1.unref();
  return { worker: result.worker, takenBack: new BigInt64Array(shared), replies: port1 };
}

export async function createTransformPool(specs: TransformSpec[], opts: PoolOptions): Promise<TransformPool> {
  const min = Math.max(1, opts.min ?? 1);
  const max = Math.max(min, opts.max);
  const scaleAfterMs = opts.scaleAfterMs ?? 25;
  const idleMs = opts.idleMs ?? 10_000;
  const source = opts.source ?? createWorkerSource(0);
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let starting = 0;
  let nextId = 1;
  let closed = false;
  let restarts = 0;
  let scaledUp = 0;
  let rebalanceTimer: NodeJS.Timeout | undefined;
  const settle = (job: Job, err: Error | undefined, results?: unknown[]) => {
    job.settled = true;
    if (job.watch) deadlines.delete(job.watch);
    if (err) job.reject(err);
    else job.resolve(results ?? []);
  };

  const expire = (job: Job) => {
    // its answer may be waiting on the port, behind the timer in the event loop
    if (job.slot) drain(job.slot);
    if (job.settled) return;
    const slot = job.slot;
    if (slot && slot.sent[0] === job) drop(slot, new TransformCallError(`timed out after ${job.timeoutMs} ms`, true));
    else {
      // still queued, or waiting behind a slower call in a worker: give up on it alone
      if (slot) {
        slot.sent.splice(slot.sent.indexOf(job), 1);
        job.slot = undefined;
      } else queue.splice(queue.indexOf(job), 1);
      settle(job, new TransformCallError(`timed out after ${job.timeoutMs} ms waiting for a free worker`, true));
    }
  };
  const deadlines = new Deadlines<Job>(expire);

  const answer = (slot: Slot, m: Reply) => {
    // Looked up in the worker's own list (nearly always its first entry), not in a Map of calls by id:
    // with such a Map, the calls' requests were promoted to the old generation and stayed there until
    // the next full collection (about 380 KB a scavenge and 50 MB of peak memory under load; see
    // docs/performance.md, eleventh round). V8 replaces a Map's table as it grows and shrinks, in the
    // old generation once the table is there, and a replaced table still refers to its entries
    // (util/recycled.ts; confirmed in the twelfth round).
    const sent = slot.sent;
    let at = 0;
    while (at < sent.length && sent[at]!.id !== m.id) at++;
    if (at === sent.length) return; // a call that timed out while it waited behind another: its answer is not wanted
    const job = sent[at]!;
    sent.splice(at, 1);
    job.slot = undefined;
    settle(job, m.type === 'result' ? undefined : new TransformCallError(m.message ?? 'transform failed', false, m.stack), m.results);
  };

  /** Takes every answer the worker has already sent, without waiting for their events. */
  const drain = (slot: Slot) => {
    let r = receiveMessageOnPort(slot.replies);
    if (!r) return;
    slot.answeredAt = Date.now();
    for (; r; r = receiveMessageOnPort(slot.replies)) answer(slot, r.message as Reply);
  };

  const attach = ({ worker: w, takenBack, replies }: Started): Slot => {
    const slot: Slot = { worker: w, replies, takenBack, sent: [], answeredAt: 0, live: true };
    replies.on('message', (m: Reply) => {
      // one clock read for this answer and the ones drained behind it
      slot.answeredAt = Date.now();
      answer(slot, m);
      drain(slot);
      pump();
    });
    // an uncaught error inside the worker (e.g. thrown from a timer the transform set)
    w.on('error', (err) => {
      opts.onWorkerError?.(err);
      drop(slot, new TransformCallError(`transform worker crashed: ${err.message}`, false));
    });
    w.on('exit', () => drop(slot, new TransformCallError('transform worker exited', false)));
    return slot;
  };

  /**
   * Removes a worker. The call it was running fails with `reason`; the calls
   * waiting behind it never started, so they go back to the front of the queue.
   * Starts another worker if the pool fell below `min`.
   */
  const drop = (slot: Slot, reason?: TransformCallError) => {
    if (!slot.live) return;
    // answers sent before the worker stopped count, even if their events have not come yet
    drain(slot);
    slot.live = false;
    clearTimeout(slot.idleTimer);
    const [running, ...waiting] = slot.sent;
    slot.sent = [];
    if (running) {
      running.slot = undefined;
      settle(running, reason ?? new TransformCallError('transform worker stopped', false));
    }
    requeue(waiting);
    slot.replies.close();
    void slot.worker.terminate();
    const at = slots.indexOf(slot);
    if (at !== -1) slots.splice(at, 1);
    if (!closed && slots.length + starting < min) {
      restarts++;
      grow();
    }
    pump();
  };

  /** Puts calls that never started back at the front of the queue, in their order. */
  const requeue = (jobs: Job[]) => {
    for (const j of [...jobs].reverse()) {
      j.slot = undefined;
      j.id = undefined;
      j.sentAt = undefined;
      queue.unshift(j);
    }
  };

  /**
   * Takes back the calls waiting behind a slow one; the worker will skip them. Only those: the slow
   * call may not even have started yet (a worker slow to get to it), and it is still answered.
   */
  const reclaim = (slot: Slot) => {
    const waiting = slot.sent.splice(1);
    if (!waiting.length) return;
    Atomics.store(slot.takenBack, TakenBack.FROM, BigInt(waiting[0]!.id!));
    Atomics.store(slot.takenBack, TakenBack.THROUGH, BigInt(waiting[waiting.length - 1]!.id!));
    requeue(waiting);
  };

  /** Starts a worker: to replace one that was dropped, or (`scaling`) one more while calls wait. */
  const grow = (scaling = false) => {
    starting++;
    startWorker(source, specs, !scaling).then(
      (started) => {
        starting--;
        if (closed) {
          started.replies.close();
          void started.worker.terminate();
        }
        else {
          slots.push(attach(started));
          pump();
        }
      },
      (err: Error) => {
        starting--;
        opts.onWorkerError?.(err);
      },
    );
  };

  /**
   * How long the worker has been on its current call, at most: since that call was sent or since the
   * worker's last answer, whichever is later. Counted from the send alone, the last of the calls sent
   * together looked slow while the worker was still answering the ones before it, and the pool grew a
   * worker it did not need (docs/performance.md, fourteenth round).
   */
  const onCallFor = (slot: Slot, now: number) => now - Math.max(slot.sent[0]!.sentAt!, slot.answeredAt);

  /** A worker that can take another call now: alive, room in its pipeline, and not stuck on a slow one. */
  const ready = (slot: Slot, now: number) => slot.live && slot.sent.length < PIPELINE && (slot.sent.length === 0 || onCallFor(slot, now) < scaleAfterMs);

  /**
   * Runs while calls wait: takes back the calls queued behind a call that has
   * run past `scaleAfterMs` (with no answer from its worker for that long), and
   * starts one more worker per waiting call while no worker can take it (up to
   * `max`).
   */
  const rebalance = () => {
    rebalanceTimer = undefined;
    if (closed) return;
    // answers that reached the ports while this thread was busy (they wait behind this timer) count first
    for (const s of slots) drain(s);
    const now = Date.now();
    for (const s of slots) if (s.sent.length > 1 && onCallFor(s, now) >= scaleAfterMs) reclaim(s);
    if (queue.length && !slots.some((s) => ready(s, now)) && now - queue[0]!.queuedAt >= scaleAfterMs && slots.length + starting < max && starting < queue.length) {
      scaledUp++;
      grow(true);
    }
    pump();
  };

  const schedulePump = onNextTurn(() => pump());

  function pump(): void {
    const now = Date.now();
    // one message per worker for all the calls sent to it in this pump: one wake-up of the worker
    // (and one clone) for a burst of requests instead of one per call
    let outbox: Map<Slot, CallMessage[]> | undefined;
    while (queue.length) {
      let best: Slot | undefined;
      for (const s of slots) if (ready(s, now) && (!best || s.sent.length < best.sent.length)) best = s;
      if (!best) break;
      const job = queue.shift()!;
      clearTimeout(best.idleTimer);
      best.idleTimer = undefined;
      job.id = nextId++;
      job.sentAt = now;
      job.slot = best;
      best.sent.push(job);
      outbox ??= new Map();
      const list = outbox.get(best);
      const msg: CallMessage = { id: job.id, key: job.key, calls: job.contexts };
      if (job.body) {
        msg.json = job.body.json;
        if (job.body.deferred?.length) msg.deferred = job.body.deferred;
      }
      if (list) list.push(msg);
      else outbox.set(best, [msg]);
    }
    if (outbox) for (const [slot, jobs] of outbox) slot.worker.postMessage({ type: 'calls', jobs });
    if (!rebalanceTimer && (queue.length || slots.some((s) => s.sent.length > 1))) rebalanceTimer = setTimeout(rebalance, scaleAfterMs);
    // extra workers without work retire after a while
    if (slots.length > min) {
      for (const slot of slots) {
        if (slot.sent.length || slot.idleTimer) continue;
        slot.idleTimer = setTimeout(() => {
          slot.idleTimer = undefined;
          if (!slot.sent.length && slots.length > min) drop(slot);
        }, idleMs);
        slot.idleTimer.unref();
      }
    }
  }

  const started = await Promise.allSettled(Array.from({ length: min }, () => startWorker(source, specs)));
  const failure = started.find((r) => r.status === 'rejected');
  if (failure) {
    for (const r of started)
      if (r.status === 'fulfilled') {
        r.value.replies.close();
        void r.value.worker.terminate();
      }
    throw (failure as PromiseRejectedResult).reason;
  }
  for (const r of started) slots.push(attach((r as PromiseFulfilledResult<Started>).value));

  return {
    call(key, contexts, timeoutMs, body) {
      if (closed) return Promise.reject(new TransformCallError('the transform pool is closed', false));
      return new Promise<unknown[]>((resolve, reject) => {
        const job: Job = { key, contexts, body, queuedAt: Date.now(), timeoutMs, resolve, reject };
        queue.push(job);
        job.watch = deadlines.add(job, performance.now() + timeoutMs);
        // calls made during one turn of the event loop go out together
        schedulePump();
      });
    },
    async close() {
      closed = true;
      clearTimeout(rebalanceTimer);
      deadlines.clear();
      const pending = [...queue.splice(0), ...slots.flatMap((s) => s.sent)];
      for (const job of pending) settle(job, new TransformCallError('the transform pool is closed', false));
      await Promise.all(
        slots.splice(0).map((s) => {
          s.live = false;
          s.sent = [];
          clearTimeout(s.idleTimer);
          s.replies.close();
          return s.worker.terminate();
        }),
      );
    },
    stats: () => ({
      workers: slots.length,
      busy: slots.filter((s) => s.sent.length).length,
      // calls not running yet: in the pool's queue or sent ahead behind another call
      queued: queue.length + slots.reduce((n, s) => n + Math.max(0, s.sent.length - 1), 0),
      restarts,
      scaledUp,
    }),
  };
}
