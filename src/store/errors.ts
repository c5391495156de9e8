/**
 * The errors of the storage contract. A driver throws these, translated from its own failures at its
 * boundary (src/store/sqlite/errors.ts, src/store/redis/errors.ts), so that nothing above the store
 * knows a driver's error shapes: any other error a store call rejects with is a bug, not an outage.
 */

/** The store cannot be opened: the message says why and names the file or server. */
export class StoreOpenError extends Error {}

/** The database is held by another process (with exclusive locking, by another server on the same data directory). */
export class StoreInUseError extends StoreOpenError {}

/** The database was made by another build, with another layout: nothing converts it. */
export class StoreSchemaError extends StoreOpenError {}

/** How long a sender is told to wait when the store cannot write (`Retry-After` of the 503, docs/http.md). */
export const STORAGE_RETRY_AFTER_SECONDS = 30;

/**
 * The store cannot read or write for now, for a reason that passes: the disk is full or failing, the
 * file is locked or read-only, the server cannot be reached or refuses writes (out of memory, unable
 * to persist, a replica). Nothing of the call was stored, and the same call is worth making again:
 * the runtime retries it, an HTTP sender is answered `503 STORAGE_UNAVAILABLE` with `Retry-After`.
 * The message carries the driver's own, for the log.
 */
export class StorageUnavailableError extends Error {
  /** How long to wait before trying again, in seconds. */
  readonly retryAfterSeconds: number;

  constructor(message: string, opts: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(`storage unavailable: ${message}`, { cause: opts.cause });
    this.name = 'StorageUnavailableError';
    this.retryAfterSeconds = opts.retryAfterSeconds ?? STORAGE_RETRY_AFTER_SECONDS;
  }
}

/**
 * The store did not answer within a request's `storage.timeoutSeconds` (a stalled disk, a Redis
 * holding writes or being failed over): the request is answered 503 like any storage failure, but
 * a write sent to a server may still land after it; the sender's retry with the same idempotency key
 * then gets the first answer (docs/redis.md, "Timeouts").
 */
export class StorageTimeoutError extends StorageUnavailableError {
  constructor(seconds: number) {
    super(`no answer within ${seconds} s (storage.timeoutSeconds)`);
    this.name = 'StorageTimeoutError';
  }
}

/** A write refused because what it would create exists already (a run id taken): nothing of it was stored. */
export class ConflictError extends Error {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'ConflictError';
  }
}

/**
 * An accepted request's idempotency key was stored first by another request, on this or another
 * instance sharing the store, between the check and the write: nothing of this one was stored, and it
 * is answered as a repeat of the first.
 */
export class IdempotencyTakenError extends ConflictError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts);
    this.name = 'IdempotencyTakenError';
  }
}
