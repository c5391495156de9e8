/**
 * What callers of a transform pool see: the modules it loads, the calls it
 * takes, and the errors it fails them with (pool.ts re-exports all of it).
 */
import type { WorkerSource } from './workers.ts';

export interface TransformSpec {
  key: string;
  file: string;
  exportName?: string;
}

/** A module that did not load: its key, why, and the line of its file where it failed, when known. */
export interface LoadIssue {
  key: string;
  message: string;
  line?: number;
}

export class TransformLoadError extends Error {
  readonly errors: LoadIssue[];
  constructor(errors: LoadIssue[]) {
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

export interface PoolOptions {
  min?: number;
  max: number;
  /** Workers to draw from (default: start each on demand). */
  source?: WorkerSource;
  scaleAfterMs?: number;
  idleMs?: number;
  onWorkerError?: (err: Error) => void;
}

export interface PoolStats {
  workers: number;
  busy: number;
  queued: number;
  restarts: number;
  scaledUp: number;
}

export interface TransformPool {
  /**
   * Runs `key` once per context (one round trip) and returns the results in
   * order. With `body`, the contexts come without `payload` (see CallBody).
   */
  call(key: string, contexts: unknown[], timeoutMs: number, body?: CallBody): Promise<unknown[]>;
  close(): Promise<void>;
  stats(): PoolStats;
}
