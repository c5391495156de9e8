/**
 * Starting transform workers. A worker first becomes idle (its TypeScript
 * loader and jiti ready), then `initWorker` hands it a generation's modules.
 * A `WorkerSource` can keep idle spares so that a reload only pays for loading
 * the modules instead of starting a worker, which takes many times as long,
 * more when the machine is busy (docs/transforms.md, "Spares").
 */
import { Worker, type MessagePort } from 'node:worker_threads';

// worker-entry.js turns on the compile cache (each thread has its own), then loads worker.ts: a worker whose
// modules are all in the cache never loads the type-stripping compiler (measured: docs/performance.md, "Memory")
const WORKER_URL = new URL('./worker-entry.js', import.meta.url);
const MEMORY_LIMIT_MB = 256;

export interface InitError {
  key: string;
  message: string;
}

/**
 * Starts a worker and resolves once it waits for `init`. A `spare` (kept for the reload after an
 * edit) also loads the type-stripping compiler while it waits, for the module just edited (see
 * worker.ts).
 */
export function spawnIdle(spare = false): Promise<Worker> {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER_URL, {
      resourceLimits: { maxOldGenerationSizeMb: MEMORY_LIMIT_MB },
      stdout: false,
      stderr: false,
      workerData: { spare },
    });
    const done = (err?: Error) => {
      w.off('message', onMessage);
      w.off('error', done);
      w.off('exit', onExit);
      if (err) {
        void w.terminate();
        reject(new Error(`transform worker failed to start: ${err.message}`));
      } else resolve(w);
    };
    const onMessage = (m: { type: string }) => done(m.type === 'idle' ? undefined : new Error(`unexpected message ${m.type}`));
    const onExit = (code: number) => done(new Error(`exited with code ${code}`));
    w.on('message', onMessage);
    w.on('error', done);
    w.on('exit', onExit);
  });
}

/**
 * Hands an idle worker the modules to load; resolves with the worker, or with
 * the modules that failed. `takenBack` is shared with the worker: the range of
 * call ids it skips (the pool gave them elsewhere; see taken-back.ts).
 * `replies` is the port the worker answers calls on (moved to the worker).
 */
export function initWorker(
  w: Worker,
  specs: { key: string; file: string; exportName?: string }[],
  takenBack: SharedArrayBuffer,
  replies: MessagePort,
): Promise<{ worker: Worker } | { errors: InitError[] }> {
  return new Promise((resolve) => {
    const done = (m: { type: string; errors?: InitError[] } | undefined, err?: Error) => {
      w.off('message', done);
      w.off('error', onError);
      if (m?.type === 'ready') return resolve({ worker: w });
      void w.terminate();
      resolve({ errors: m?.errors ?? [{ key: '?', message: `transform worker failed: ${err?.message ?? 'unknown'}` }] });
    };
    const onError = (err: Error) => done(undefined, err);
    w.on('message', done);
    w.on('error', onError);
    w.postMessage({ type: 'init', specs, takenBack, replies }, [replies]);
  });
}

export interface WorkerSource {
  /**
   * A worker, a spare if one is ready. `forNext` (default true): start a spare for the next take,
   * as for a reload or a worker replaced after a deadline; false when a pool grows.
   */
  take(forNext?: boolean): Promise<Worker>;
  close(): Promise<void>;
}

/** How long spares are kept after the last `take` (`createWorkerSource`). */
export const SPARE_KEEP_MS = 5 * 60_000;

export interface SpareWorkerSource extends WorkerSource {
  /** Idle workers, ready or starting. */
  spares(): number;
  /**
   * Keep one idle worker at all times from now on (`true`), or none beyond what recent takes
   * asked for (`false`, which ends the idle ones now). `serve` keeps one while its configuration
   * has transforms, so that a reload never waits for a worker to start.
   */
  standby(on: boolean): void;
  /**
   * A change was seen and a reload will follow: the standby, if it is the idle worker the reload
   * will take, loads the type-stripping compiler now rather than when it strips the edited module.
   */
  prepare(): void;
}

/**
 * Keeps up to `spares` idle workers while workers are being taken, and one at all times while
 * `standby` is on. The first `take` (the first configuration's workers) starts none. Every later
 * `take` (a reload, a worker replaced after a deadline) starts one for the next, which also loads
 * the type-stripping compiler (see worker.ts), so a run of edits never waits for a worker's
 * start-up (docs/transforms.md, "Spares"); these spares retire after `keepMs` without a `take`. The
 * standby is a worker without the compiler (about half the memory; measured: docs/performance.md,
 * "Memory"): started when `standby` is turned on, and again whenever no other
 * idle worker is left, so the first save after a start or after a quiet spell finds a worker
 * ready too; it loads the compiler when `prepare` says a reload is coming. A pool that grows
 * takes a spare if one is ready, but never the standby, and starts none: growth comes from a
 * slow transform or a stalled worker, and a spare beside the extra worker would double what it
 * costs, memory that the allocator keeps after both have ended. Idle workers do not keep
 * the process alive. `spawn` starts a worker
 * (`compiler`: loading the compiler while it waits); tests pass their own.
 */
export function createWorkerSource(
  spares: number,
  keepMs = SPARE_KEEP_MS,
  spawn: (compiler: boolean) => Promise<Worker> = spawnIdle,
): SpareWorkerSource {
  return new Spares(spares, keepMs, spawn);
}

class Spares implements SpareWorkerSource {
  private readonly idle: Promise<Worker>[] = [];
  private closed = false;
  private standing = false;
  private taken = 0;
  /** The standby while it is idle and has not been told to load the compiler. */
  private cold: Promise<Worker> | undefined;
  private retireTimer: NodeJS.Timeout | undefined;
  private readonly count: number;
  private readonly keepMs: number;
  private readonly spawn: (compiler: boolean) => Promise<Worker>;

  constructor(count: number, keepMs: number, spawn: (compiler: boolean) => Promise<Worker>) {
    this.count = count;
    this.keepMs = keepMs;
    this.spawn = spawn;
  }

  async take(forNext = true): Promise<Worker> {
    // a pool that grows leaves the standby for the next reload
    const next = forNext || this.idle.length > (this.standing ? 1 : 0) ? this.idle.shift() : undefined;
    if (next === this.cold) this.cold = undefined;
    if (++this.taken > 1 && forNext) this.refill();
    this.keepStandby();
    if (next) {
      try {
        const w = await next;
        w.ref();
        return w;
      } catch {
        // a spare that failed to start: start one now instead
      }
    }
    return this.spawn(false);
  }

  spares(): number {
    return this.idle.length;
  }

  prepare(): void {
    const p = this.idle[0] === this.cold ? this.cold : undefined;
    this.cold = undefined;
    p?.then(
      (w) => w.postMessage({ type: 'warm' }),
      () => undefined,
    );
  }

  standby(on: boolean): void {
    this.standing = on;
    if (on) return this.keepStandby();
    clearTimeout(this.retireTimer);
    this.retireTimer = undefined;
    void terminate(this.idle.splice(0));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retireTimer);
    await terminate(this.idle.splice(0));
  }

  private startSpare(compiler: boolean): void {
    const p = this.spawn(compiler);
    this.idle.push(p);
    if (!compiler) this.cold = p;
    p.then(
      (w) => w.unref(),
      () => {
        // one that failed to start is no spare; the next take starts a worker itself
        const at = this.idle.indexOf(p);
        if (at !== -1) this.idle.splice(at, 1);
      },
    );
  }

  private keepStandby(): void {
    if (!this.closed && this.standing && this.idle.length === 0) this.startSpare(false);
  }

  private retire(): void {
    this.retireTimer = undefined;
    void terminate(this.idle.splice(0));
    this.keepStandby();
  }

  private refill(): void {
    while (!this.closed && this.idle.length < this.count) this.startSpare(true);
    clearTimeout(this.retireTimer);
    this.retireTimer = setTimeout(() => this.retire(), this.keepMs);
    this.retireTimer.unref();
  }
}

async function terminate(ps: Promise<Worker>[]): Promise<void> {
  const all = await Promise.allSettled(ps);
  await Promise.all(all.map((r) => (r.status === 'fulfilled' ? r.value.terminate() : undefined)));
}
