/**
 * What runs while the service answers, and the order it stops in.
 */
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { GenerationRef } from '../generation/ref.ts';
import type { Generation } from '../generation/types.ts';
import type { Store } from '../store/roles.ts';
import type { Reloader } from '../generation/reload.ts';
import type { Drain } from '../http/connection.ts';
import { watchSources, type SourceWatcher } from '../config/watch.ts';
import type { SpareWorkerSource } from '../transforms/pool.ts';
import { settlesWithin } from '../util/deadline.ts';
import type { ConsoleFeed } from '../http/stream.ts';
import type { Waits } from '../intake/wait.ts';
import { createRetention, type Retention } from '../runtime/retention.ts';
import { runtimeLogger } from './runtime.ts';
import type { Runtime } from './runtime.ts';

const IDEMPOTENCY_PRUNE_MS = 10 * 60 * 1000;

export interface BackgroundParts {
  store: Store;
  generations: GenerationRef;
  runtime: Runtime;
  reloader: Reloader;
  first: Generation;
  workers: SpareWorkerSource | undefined;
  logger: Logger;
  clock: () => number;
  watch: boolean;
}

/** What runs once the service answers: the runtime's loops, the plugins, the watcher, idempotency pruning and retention. */
export async function startBackground(p: BackgroundParts) {
  const { store, runtime, first, workers, logger, clock } = p;
  runtime.heartbeat.start();
  runtime.outbox.start();
  // on a store other instances share: take over what one of them left when it stopped (never called on one this process owns)
  const unwatch = store.pollTakeovers(() => {
    runtime.runner.notify();
    runtime.heartbeat.poll();
    runtime.outbox.notify();
  });
  await first.start();
  // started once the service answers, so it costs the start nothing; the first save then finds it ready
  workers?.standby(first.transforms !== undefined);
  const watcher = p.watch
    ? watchSources(
        first.sources,
        (paths) => void p.reloader.reload(`changed: ${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ', …' : ''}`),
        first.config.hooks.reloadDebounceMs,
        () => workers?.prepare(),
      )
    : undefined;
  const prune = setInterval(() => {
    store.records.pruneIdempotency(clock()).catch((err) => logger.warn({ err }, 'idempotency prune failed'));
  }, IDEMPOTENCY_PRUNE_MS);
  prune.unref();
  const retention = createRetention({
    records: store.records,
    generations: p.generations,
    logger: runtimeLogger(logger, 'retention'),
    clock,
  });
  retention.start();
  return {
    watcher,
    retention,
    /** Stops the timers and the shared store's watch; the rest stops in `stopAll`. */
    stop(): void {
      clearInterval(prune);
      unwatch();
    },
  };
}

export interface Running {
  server: Server;
  drain: Drain;
  feed: ConsoleFeed;
  /** Requests waiting for their runs (docs/waiting.md). */
  waits: Waits;
  retention: Retention;
  watcher: SourceWatcher | undefined;
  runtime: Runtime;
  generations: GenerationRef;
  store: Store;
  workers: SpareWorkerSource | undefined;
  logger: Logger;
}

/** Stops the service in order, within one budget: intake, then work, then replies, plugins and the store. */
export async function stopAll(r: Running): Promise<void> {
  const { generations, logger } = r;
  // one budget for the whole shutdown (wall time: the injected clock may be a test's)
  const deadline = Date.now() + generations.current.config.gateway.shutdownTimeoutSeconds * 1000;
  const left = () => Math.max(0, deadline - Date.now());
  // stop intake first: no new connections; busy ones close after their answer (which says
  // `Connection: close`), idle keep-alive ones once runs and heartbeats have stopped; a request
  // arriving on one meanwhile is refused with 503 (docs/runtime.md, "Shutdown")
  let drained!: () => void;
  const intake = r.drain.close(new Promise<void>((res) => (drained = res)), left);
  // the console's event streams would hold their connections open to the end of the budget
  r.feed.close();
  // requests waiting for their runs are answered 503 now, while there is time to send it: their runs are
  // stored (one running finishes below or is queued again), and a repeat of the key finds them (docs/waiting.md)
  r.waits.stop();
  await r.retention.stop();
  await r.watcher?.close();
  // meanwhile no run or heartbeat starts; the ones running may finish within the budget
  await Promise.all([r.runtime.runner.stop(left()), r.runtime.heartbeat.stop(left())]);
  drained();
  await intake;
  // replies of runs that just finished go out if there is time left; the rest stays in the outbox
  await r.runtime.outbox.stop(left());
  // plugin instances stop (a service may still be storing) before the store closes, within what is left of the budget;
  // what is still stopping then is left behind
  const disposed = generations.disposeAll().catch((err) => logger.error({ err }, 'stopping plugin instances failed'));
  if (!(await settlesWithin(disposed, left()))) logger.warn('plugin instances did not stop within the shutdown timeout');
  await r.store.close();
  await r.workers?.close();
  logger.info('stopped');
}
