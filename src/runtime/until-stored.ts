/**
 * Store calls the runtime does not give up on when the disk fails for a while
 * (full, an I/O error): the outcome of a run whose agent has answered, the
 * record of a send the channel has taken, and the reads that lead to them.
 * Such a call is made again, 1 s, 2 s, 4 s … apart (at most 30 s), until the
 * store answers or the service stops; any other error is thrown at once.
 */
import type { Logger } from 'pino';
import { StorageUnavailableError } from '../store/errors.ts';

export const STORE_RETRY_FIRST_MS = 1000;
export const STORE_RETRY_MAX_MS = 30_000;

export interface StoreRetry {
  /** Aborted when the service stops: the call is then given up, with the storage error it last got. */
  signal: AbortSignal;
  logger: Logger;
  /** What the call does, for the log: `store the outcome of a run`. */
  what: string;
  /** Called at the first storage failure, and once more when the call is done or given up. */
  onWait?: () => void;
  onResume?: () => void;
}

export function untilStored<T>(call: () => Promise<T>, r: StoreRetry): Promise<T> {
  // the common case costs one `catch`: the retries start at the first failure
  return call().catch((err: unknown) => {
    if (!(err instanceof StorageUnavailableError) || r.signal.aborted) throw err;
    return retry(call, r, err);
  });
}

async function retry<T>(call: () => Promise<T>, r: StoreRetry, first: unknown): Promise<T> {
  r.logger.warn({ err: first }, `${r.what}: storage unavailable; trying again until it works`);
  r.onWait?.();
  try {
    let err = first;
    for (let failures = 1; ; failures++) {
      await pause(Math.min(STORE_RETRY_FIRST_MS * 2 ** (failures - 1), STORE_RETRY_MAX_MS), r.signal, err);
      try {
        const v = await call();
        r.logger.info({ tries: failures + 1 }, `${r.what}: done, the store can write again`);
        return v;
      } catch (e) {
        if (!(e instanceof StorageUnavailableError) || r.signal.aborted) throw e;
        err = e;
      }
    }
  } finally {
    r.onResume?.();
  }
}

/** Waits `ms`; rejects with `err` if `signal` aborts first. */
function pause(ms: number, signal: AbortSignal, err: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(err);
    const onAbort = () => {
      clearTimeout(t);
      reject(err);
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
