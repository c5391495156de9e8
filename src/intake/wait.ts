/**
 * The wait step (docs/waiting.md): a `/hooks/agent` request with `waitForCompletion` keeps its answer until
 * its run finished and its delivery ended, at most a time limit. Waiting requests are not runs: they take no
 * place in the runner, only one of a bounded number of places here. A run is followed through the store's
 * word of runs that ended (`Store.ends`: in this process on SQLite, from any instance on Redis), and read
 * again when told; every request waiting for one run shares one entry, so each is told the same.
 */
import type { Logger } from 'pino';
import { errors } from '../errors.ts';
import type { RunEnds, RunRecords } from '../store/roles.ts';
import type { Run } from '../store/types.ts';
import { hasEnded } from './completion.ts';

/** How many requests may wait at once (docs/waiting.md); one more is answered 503. */
export const MAX_WAITING = 1000;
/** The `Retry-After` of a request refused because too many wait, or answered because the service stops. */
export const WAIT_RETRY_SECONDS = 5;

/** How a wait ended: the run ended, the time limit passed, or the service is stopping. */
export type WaitEnd = { kind: 'ended'; run: Run } | { kind: 'timeout' } | { kind: 'stopping' };

export interface WaitsDeps {
  runs: Pick<RunRecords, 'getRun'>;
  ends: RunEnds;
  logger: Logger;
  /** Most requests waiting at once (default MAX_WAITING). */
  max?: number;
}

export class Waits {
  private readonly deps: WaitsDeps;
  private readonly max: number;
  /** The waits of each run followed, by run id. */
  private readonly byRun = new Map<string, Set<(end: WaitEnd) => void>>();
  private places = 0;
  private listening: Promise<unknown> | undefined;
  private stopped = false;

  constructor(deps: WaitsDeps) {
    this.deps = deps;
    this.max = deps.max ?? MAX_WAITING;
  }

  /** Requests waiting now (places taken). */
  get waiting(): number {
    return this.places;
  }

  /**
   * Takes a place for a request that will wait, before anything of it is stored: `503` with `Retry-After` when
   * all places are taken, or when the service is stopping. Give it back with `release`.
   */
  reserve(): void {
    if (this.stopped) throw errors.shuttingDown();
    if (this.places >= this.max)
      throw errors.unavailable(`too many requests are waiting for their runs (${this.max}); try again later`, WAIT_RETRY_SECONDS);
    this.places++;
  }

  release(): void {
    this.places--;
  }

  /** Waits for run `runId` to end, at most `limitMs`; never rejects. */
  wait(runId: string, limitMs: number): Promise<WaitEnd> {
    if (this.stopped) return Promise.resolve({ kind: 'stopping' });
    return new Promise((resolve) => {
      const waits = this.byRun.get(runId) ?? new Set();
      this.byRun.set(runId, waits);
      const done = (end: WaitEnd) => {
        clearTimeout(timer);
        waits.delete(done);
        if (!waits.size && this.byRun.get(runId) === waits) this.byRun.delete(runId);
        resolve(end);
      };
      const timer = setTimeout(() => done({ kind: 'timeout' }), limitMs);
      waits.add(done);
      // listening first, then the run read: a run that ends in between is told, one that ended before is read
      this.listen().then(
        () => this.check(runId),
        (err: unknown) => {
          // without word of the run's end, waiting could only run out: answered at once, the run stored
          this.deps.logger.warn({ err, runId }, 'cannot follow the run a request waits for');
          done({ kind: 'timeout' });
        },
      );
    });
  }

  /** Ends every wait (the service stops: their runs are stored, and carry on after it); later waits end at once. */
  stop(): void {
    this.stopped = true;
    for (const waits of [...this.byRun.values()]) for (const done of [...waits]) done({ kind: 'stopping' });
  }

  private listen(): Promise<unknown> {
    const l = (this.listening ??= this.deps.ends.listen((runId) => this.told(runId)));
    // a failure is not kept: the next wait tries again
    l.catch(() => {
      if (this.listening === l) this.listening = undefined;
    });
    return l;
  }

  private told(runId: string | undefined): void {
    if (runId === undefined) for (const id of [...this.byRun.keys()]) this.check(id);
    else if (this.byRun.has(runId)) this.check(runId);
  }

  /** Reads the run; when it has ended, ends every wait for it. A failed read is left to the next word or the time limit. */
  private check(runId: string): void {
    this.deps.runs.getRun(runId).then(
      (run) => {
        if (!run || !hasEnded(run)) return;
        const waits = this.byRun.get(runId);
        if (waits) for (const done of [...waits]) done({ kind: 'ended', run });
      },
      (err: unknown) => this.deps.logger.warn({ err, runId }, 'reading a waited run failed'),
    );
  }
}
