/**
 * `request.rejected` events (docs/callbacks.md, "Events"): a request to a hook refused `401` for its
 * token or signature. Nothing else of a refusal is stored, so the event is a write of its own, made
 * after the answer (a failure to store it is logged, never answered). Bounded: at most
 * `REJECTIONS_PER_MINUTE` a minute per process; the ones over that are counted, and the next event
 * stored says how many were left out, so a flood of refused requests cannot fill the disk.
 */
import type { Logger } from 'pino';
import type { HookError } from '../errors.ts';
import type { Generation } from '../generation/types.ts';
import { isBuiltInHook } from '../names.ts';
import type { AcceptRecords } from '../store/roles.ts';
import type { NewDelivery } from '../store/types.ts';
import { rejectedEvents } from './events.ts';

export const REJECTIONS_PER_MINUTE = 10;
const MINUTE = 60_000;

export interface RejectionDeps {
  records: AcceptRecords;
  /** Hands the outbox an entry this process just committed. */
  notifyOutbox: (entry: NewDelivery) => void;
  logger: Logger;
}

export class RejectionEvents {
  private readonly deps: RejectionDeps;
  private windowStart = -Infinity;
  private stored = 0;
  /** Events left out since the last one stored. */
  private notReported = 0;

  constructor(deps: RejectionDeps) {
    this.deps = deps;
  }

  /** A request to the hook named `name` (the path after the prefix) was refused with `e` at `at`. */
  report(gen: Generation, name: string, e: HookError, at: number): void {
    if (e.status !== 401 || !gen.callbacks.wants('request.rejected')) return;
    const hook = rejectedHook(gen, name);
    if (hook === undefined || !gen.callbacks.targets(hook, 'request.rejected').length) return;
    if (!this.take(at)) return;
    const callbacks = rejectedEvents(gen, hook, e.status, e.code, at, this.notReported);
    this.notReported = 0;
    this.deps.records.accept({ events: [], runs: [], callbacks }).then(
      () => {
        for (const c of callbacks) this.deps.notifyOutbox(c);
      },
      (err: unknown) =>
        this.deps.logger.warn({ err: { message: (err as Error).message }, hook }, 'a request.rejected event was not stored'),
    );
  }

  /** One more event this minute while the budget lasts; the ones over it are counted. */
  private take(now: number): boolean {
    if (now - this.windowStart >= MINUTE) {
      if (this.notReported)
        this.deps.logger.warn(
          { notReported: this.notReported, perMinute: REJECTIONS_PER_MINUTE },
          'request.rejected events over the budget',
        );
      this.windowStart = now;
      this.stored = 0;
    }
    if (this.stored < REJECTIONS_PER_MINUTE) {
      this.stored++;
      return true;
    }
    this.notReported++;
    return false;
  }
}

/**
 * The hook a refused request is counted against: `wake` and `agent` by name; a named hook by the first
 * mapping whose `match.path` is the name (a source preset's id is its path). Another path names no hook.
 */
export function rejectedHook(gen: Generation, name: string): string | undefined {
  if (isBuiltInHook(name)) return name;
  return gen.pipelines.find((p) => p.path === name)?.id;
}
