/**
 * One worker of a transform pool as the main thread sees it (starting it
 * with a generation's modules, what is sent to it, what it answers), and
 * the calls the pool keeps.
 */
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { TransformLoadError, type CallBody, type TransformSpec } from './calls.ts';
import type { Entry } from '../util/deadlines.ts';
import { initWorker, type WorkerSource } from './workers.ts';
import { TakenBack } from './taken-back.ts';

/**
 * Calls a worker may hold at once. Sending ahead lets one wake-up of the
 * worker (and of the main thread for the answers) serve many calls under
 * load, instead of two thread wake-ups per call.
 */
export const PIPELINE = 32;

/** A call as the pool keeps it, from when it is made until it is settled. */
export interface Job {
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
  settled?: boolean;
}

/** One call as sent to a worker (a message carries several). */
export interface CallMessage {
  id: number;
  key: string;
  calls: unknown[];
  json?: string;
  deferred?: readonly string[];
}

export interface Reply {
  type: string;
  id: number;
  results?: unknown[];
  message?: string;
  stack?: string;
}

export interface Slot {
  worker: Worker;
  /** The worker's answers to calls. */
  replies: MessagePort;
  /** Shared with the worker: the range of calls taken back from it, which it skips (see `TakenBack`). */
  takenBack: BigInt64Array;
  /** Calls sent to this worker, in order; the first is running, the rest wait behind it. */
  sent: Job[];
  /**
   * When the worker's last answers were taken (`Date.now()`, once per batch): it runs its calls in order, so the
   * first call in `sent` started no earlier than this, however long ago it was sent.
   */
  answeredAt: number;
  live: boolean;
  idleTimer?: NodeJS.Timeout;
}

/** A worker that has loaded a generation's modules, before the pool serves through it. */
export type Started = Pick<Slot, 'worker' | 'takenBack' | 'replies'>;

/** A worker from `source` with `specs` loaded. `forNext`: whether the source starts a spare for the next worker (see `WorkerSource.take`). */
export async function startWorker(source: WorkerSource, specs: TransformSpec[], forNext = true): Promise<Started> {
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

export function stopWorker(s: Started): Promise<number> {
  s.replies.close();
  return s.worker.terminate();
}
