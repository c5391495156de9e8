/**
 * Retention (docs/configuration.md, "Retention"): every `retention.pruneEverySeconds`, what is older than its `retention.*Days`
 * is pruned through `RetentionRecords.prune`, a small batch at a time with a pause between batches, so a request's
 * write never waits behind more than one batch. `hook-intake prune` runs the same passes at once.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import type { RetentionRecords } from '../store/roles.ts';
import type { PruneBefore, PruneCounts } from '../store/types.ts';
import type { GenerationRef } from '../generation/ref.ts';
import { TRANSCRIPT_WINDOW } from './runner.ts';

const DAY_MS = 86_400_000;

/** Rows of each kind one batch removes at most. */
export const PRUNE_BATCH = 200;

/** The cutoffs of `retention` at `now`. */
export function pruneBefore(retention: Config['retention'], now: number): PruneBefore {
  return {
    runs: now - retention.runsDays * DAY_MS,
    events: now - retention.eventsDays * DAY_MS,
    requests: now - retention.requestsDays * DAY_MS,
    // what an agent is shown of a session stays
    sessionLines: TRANSCRIPT_WINDOW,
  };
}

export const noCounts = (): PruneCounts => ({ runs: 0, events: 0, messages: 0, deliveries: 0, requests: 0 });

/** Prunes in batches until nothing is left to prune (or `stopped()`), `pause` between batches; resolves with the totals. */
export async function pruneAll(
  records: RetentionRecords,
  before: PruneBefore,
  opts: { batch?: number; pause?: () => Promise<void>; stopped?: () => boolean } = {},
): Promise<PruneCounts> {
  const total = noCounts();
  for (;;) {
    const { more, ...c } = await records.prune(before, opts.batch ?? PRUNE_BATCH);
    for (const k of Object.keys(total) as (keyof PruneCounts)[]) total[k] += c[k];
    if (!more || opts.stopped?.()) return total;
    await opts.pause?.();
  }
}

export interface RetentionDeps {
  /** `Store.records`. */
  records: RetentionRecords;
  generations: GenerationRef;
  logger: Logger;
  clock: () => number;
  /** Between two batches (default: 20 ms of wall time, so requests' writes go first). */
  pause?: () => Promise<void>;
}

export interface Retention {
  /** One whole pass now, at the clock's time; resolves with what it removed. */
  runOnce(): Promise<PruneCounts>;
  start(): void;
  /** Stops the timer and waits for a pass under way to end after its current batch. */
  stop(): Promise<void>;
}

export function createRetention(deps: RetentionDeps): Retention {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<PruneCounts> | undefined;
  let stopped = false;
  const pause = deps.pause ?? (() => new Promise<void>((r) => setTimeout(r, 20)));

  const runOnce = () =>
    (running ??= (async () => {
      const cfg = deps.generations.current.config;
      const before = pruneBefore(cfg.retention, deps.clock());
      const started = performance.now();
      const total = await pruneAll(deps.records, before, { pause, stopped: () => stopped });
      if (Object.values(total).some((n) => n > 0))
        deps.logger.info({ pruned: total, ms: Math.round(performance.now() - started) }, 'retention: pruned');
      return total;
    })().finally(() => (running = undefined)));

  const schedule = () => {
    if (stopped) return;
    const every = deps.generations.current.config.retention.pruneEverySeconds * 1000;
    timer = setTimeout(() => {
      runOnce()
        .catch((err: Error) => deps.logger.warn({ reason: err.message }, 'retention: pruning failed'))
        .finally(schedule);
    }, every);
    timer.unref();
  };

  return {
    runOnce,
    start: schedule,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
