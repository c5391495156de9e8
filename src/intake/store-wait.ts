/**
 * How long a request waits on the store: `storage.timeoutSeconds` for all of its store calls together
 * (the idempotency read, a mapping's rate limit, the write of what it accepted). Past it the call
 * fails with `StorageTimeoutError`, answered `503 STORAGE_UNAVAILABLE` with `Retry-After`, so a sender
 * is not kept waiting past its own timeout by a stalled disk or a Redis that holds writes
 * (docs/redis.md, "Timeouts").
 *
 * The call itself is not cancelled: a write already sent to Redis may still land, and the sender's
 * retry with the same idempotency key then gets the first answer. A write SQLite has not committed yet
 * is dropped instead (the batch's `deadline`, sqlite/write-queue.ts).
 */
import { StorageTimeoutError } from '../store/errors.ts';

export class StoreWait {
  private readonly seconds: number;
  /** performance.now() at which the request's time on the store runs out. */
  private readonly end: number;

  constructor(seconds: number) {
    this.seconds = seconds;
    this.end = performance.now() + seconds * 1000;
  }

  /**
   * `call()` (a store call), failing with `StorageTimeoutError` once the request's time runs out; the
   * call is not made at all when none is left. `call` gets the deadline on Date.now's clock.
   */
  within<T>(call: (deadline: number) => Promise<T>): Promise<T> {
    const left = this.end - performance.now();
    if (left <= 0) return Promise.reject(new StorageTimeoutError(this.seconds));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new StorageTimeoutError(this.seconds)), left);
      call(Date.now() + left).then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }
}
