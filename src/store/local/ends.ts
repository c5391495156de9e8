/**
 * Word of runs that ended within the process that owns the store (`RunEnds`, for the SQLite driver): a
 * call to each listener once the write that ended the run committed; nothing is stored or sent.
 */
import type { RunEnds } from '../roles.ts';

export class LocalRunEnds implements RunEnds {
  private readonly listeners = new Set<(runId: string | undefined) => void>();

  listen(fn: (runId: string | undefined) => void): Promise<() => void> {
    this.listeners.add(fn);
    return Promise.resolve(() => void this.listeners.delete(fn));
  }

  /** The run finished or its delivery ended, and the write that says so committed. */
  ended(runId: string): void {
    for (const fn of this.listeners) fn(runId);
  }
}
