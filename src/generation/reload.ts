/**
 * Reloads: build a whole new generation beside the current one and swap it in
 * only when every step succeeded. A failed build keeps the last good
 * generation, logs each problem (file, key path, reason) and records them for
 * `GET /api/status`. Reloads never overlap: a change arriving during a build
 * triggers one more build after it.
 */
import type { Logger } from 'pino';
import { ConfigError, type ConfigIssue } from '../errors.ts';
import type { Generation } from './types.ts';
import type { GenerationRef } from './ref.ts';

export interface ReloaderDeps {
  generations: GenerationRef;
  build: () => Promise<Generation>;
  logger: Logger;
  clock?: () => number;
  onSwap?: (prev: Generation, next: Generation) => void;
}

export interface Reloader {
  /** Resolves true when a new generation went live, false when the build failed. */
  reload(reason: string): Promise<boolean>;
  /** Reloads that failed since start. */
  failures(): number;
}

export function createReloader(deps: ReloaderDeps): Reloader {
  const clock = deps.clock ?? Date.now;
  let running: Promise<boolean> | undefined;
  let queued: Promise<boolean> | undefined;
  let failures = 0;

  async function once(reason: string): Promise<boolean> {
    const started = clock();
    let next: Generation;
    try {
      next = await deps.build();
    } catch (err) {
      const issues: ConfigIssue[] =
        err instanceof ConfigError
          ? err.issues
          : [{ file: '', path: '', message: `reload failed: ${(err as Error)?.message ?? String(err)}` }];
      deps.generations.lastReloadError = { at: clock(), issues };
      failures++;
      for (const i of issues)
        deps.logger.error(
          { file: i.file, path: i.path, line: i.line, reason: i.message },
          'reload failed; keeping the current configuration',
        );
      return false;
    }
    const prev = deps.generations.swap(next);
    deps.logger.info({ generation: next.id, previous: prev.id, ms: clock() - started, reason }, 'configuration reloaded');
    try {
      deps.onSwap?.(prev, next);
    } catch (err) {
      // the new generation is live; what follows a swap (re-arming timers, the watch set) must not undo that
      deps.logger.error({ err }, 'after-reload step failed');
    }
    // its new plugin instances start now that it is live (a failure is logged by the instance, not fatal)
    await next.start();
    return true;
  }

  function reload(reason: string): Promise<boolean> {
    if (!running) {
      running = once(reason).finally(() => {
        running = undefined;
      });
      return running;
    }
    // a build is in progress: the change it may have missed gets one more build after it
    queued ??= running.then(() => {
      queued = undefined;
      return reload(reason);
    });
    return queued;
  }
  return { reload, failures: () => failures };
}
