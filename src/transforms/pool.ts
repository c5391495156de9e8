/**
 * The transform workers of one generation. Each worker loads every transform
 * module of the generation when it starts (so a broken module fails the
 * generation build, not a request) and runs one call at a time.
 *
 * Deadlines: a call fails after `timeoutMs` counted from when it was queued.
 * If it was running, its worker is terminated (this stops even a synchronous
 * infinite loop) and replaced, so the main thread never waits on a transform
 * and other requests keep being answered.
 *
 * Size: the pool starts with `min` workers and grows, up to `max`, only when a
 * call has waited `scaleAfterMs` for a free worker (a slow or stuck
 * transform); extra workers retire after `idleMs` without work. A worker costs
 * ~20–30 MB, so a steady pool of one keeps memory low; one round trip costs
 * ~10 µs CPU under concurrency (~24 µs when calls are serial, 2 KiB payload).
 */
import type { Worker } from 'node:worker_threads';
import { createWorkerSource, initWorker, type WorkerSource } from './workers.ts';

export { createWorkerSource, type WorkerSource } from './workers.ts';

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

export interface TransformPool {
  /** Runs `key` once per context (one round trip) and returns the results in order. */
  call(key: string, contexts: unknown[], timeoutMs: number): Promise<unknown[]>;
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
  queuedAt: number;
  resolve: (r: unknown[]) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  slot?: Slot;
}

interface Slot {
  worker: Worker;
  job?: Job;
  live: boolean;
  idleTimer?: NodeJS.Timeout;
}

async function startWorker(source: WorkerSource, specs: TransformSpec[]): Promise<Worker> {
  const result = await initWorker(await source.take(), specs);
  if ('errors' in result) throw new TransformLoadError(result.errors);
  return result.worker;
}

export async function createTransformPool(specs: TransformSpec[], opts: PoolOptions): Promise<TransformPool> {
  const min = Math.max(1, opts.min ?? 1);
  const max = Math.max(min, opts.max);
  const scaleAfterMs = opts.scaleAfterMs ?? 25;
  const idleMs = opts.idleMs ?? 10_000;
  const source = opts.source ?? createWorkerSource(0);
  const slots: Slot[] = [];
  const queue: Job[] = [];
  const calls = new Map<number, Job>();
  let starting = 0;
  let nextId = 1;
  let closed = false;
  let restarts = 0;
  let scaledUp = 0;
  let scaleTimer: NodeJS.Timeout | undefined;

  const attach = (w: Worker): Slot => {
    const slot: Slot = { worker: w, live: true };
    w.on('message', (m: { type: string; id: number; results?: unknown[]; message?: string; stack?: string }) => {
      const job = calls.get(m.id);
      if (!job) return;
      calls.delete(m.id);
      clearTimeout(job.timer);
      slot.job = undefined;
      if (m.type === 'result') job.resolve(m.results ?? []);
      else job.reject(new TransformCallError(m.message ?? 'transform failed', false, m.stack));
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

  /** Removes a worker (failing its call), and starts another if the pool fell below `min`. */
  const drop = (slot: Slot, reason?: TransformCallError) => {
    if (!slot.live) return;
    slot.live = false;
    clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = undefined;
    if (job) {
      clearTimeout(job.timer);
      for (const [id, j] of calls) if (j === job) calls.delete(id);
      job.reject(reason ?? new TransformCallError('transform worker stopped', false));
    }
    void slot.worker.terminate();
    const at = slots.indexOf(slot);
    if (at !== -1) slots.splice(at, 1);
    if (!closed && slots.length + starting < min) {
      restarts++;
      grow();
    }
  };

  const grow = () => {
    starting++;
    startWorker(source, specs).then(
      (w) => {
        starting--;
        if (closed) void w.terminate();
        else {
          slots.push(attach(w));
          pump();
        }
      },
      (err: Error) => {
        starting--;
        opts.onWorkerError?.(err);
      },
    );
  };

  const checkScale = () => {
    scaleTimer = undefined;
    if (closed || !queue.length) return;
    // one more worker per waiting call at most: a worker still starting already covers one
    if (Date.now() - queue[0]!.queuedAt >= scaleAfterMs && slots.length + starting < max && starting < queue.length) {
      scaledUp++;
      grow();
    }
    if (queue.length) scaleTimer = setTimeout(checkScale, scaleAfterMs);
  };

  function pump(): void {
    for (const slot of slots) {
      if (!queue.length) break;
      if (slot.job || !slot.live) continue;
      clearTimeout(slot.idleTimer);
      slot.idleTimer = undefined;
      const job = queue.shift()!;
      const id = nextId++;
      slot.job = job;
      job.slot = slot;
      calls.set(id, job);
      slot.worker.postMessage({ type: 'call', id, key: job.key, calls: job.contexts });
    }
    if (queue.length && !scaleTimer) scaleTimer = setTimeout(checkScale, scaleAfterMs);
    // extra workers without work retire after a while
    if (slots.length > min) {
      for (const slot of slots) {
        if (slot.job || slot.idleTimer) continue;
        slot.idleTimer = setTimeout(() => {
          if (!slot.job && slots.length > min) drop(slot);
        }, idleMs);
        slot.idleTimer.unref();
      }
    }
  }

  const started = await Promise.allSettled(Array.from({ length: min }, () => startWorker(source, specs)));
  const failure = started.find((r) => r.status === 'rejected');
  if (failure) {
    for (const r of started) if (r.status === 'fulfilled') void r.value.terminate();
    throw (failure as PromiseRejectedResult).reason;
  }
  for (const r of started) slots.push(attach((r as PromiseFulfilledResult<Worker>).value));

  return {
    call(key, contexts, timeoutMs) {
      if (closed) return Promise.reject(new TransformCallError('the transform pool is closed', false));
      return new Promise<unknown[]>((resolve, reject) => {
        const job: Job = {
          key,
          contexts,
          queuedAt: Date.now(),
          resolve,
          reject,
          timer: setTimeout(() => {
            if (job.slot) drop(job.slot, new TransformCallError(`timed out after ${timeoutMs} ms`, true));
            else {
              queue.splice(queue.indexOf(job), 1);
              reject(new TransformCallError(`timed out after ${timeoutMs} ms waiting for a free worker`, true));
            }
          }, timeoutMs),
        };
        queue.push(job);
        pump();
      });
    },
    async close() {
      closed = true;
      clearTimeout(scaleTimer);
      for (const job of queue.splice(0)) {
        clearTimeout(job.timer);
        job.reject(new TransformCallError('the transform pool is closed', false));
      }
      await Promise.all(
        slots.splice(0).map((s) => {
          s.live = false;
          clearTimeout(s.idleTimer);
          // the worker is terminated below, so the call it runs would never settle
          if (s.job) {
            clearTimeout(s.job.timer);
            s.job.reject(new TransformCallError('the transform pool is closed', false));
            s.job = undefined;
          }
          return s.worker.terminate();
        }),
      );
      calls.clear();
    },
    stats: () => ({ workers: slots.length, busy: slots.filter((s) => s.job).length, queued: queue.length, restarts, scaledUp }),
  };
}
