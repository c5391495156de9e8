/** The store cannot be opened: the message says why and names the file or server. */
export class StoreOpenError extends Error {}

/** The database is held by another process (with exclusive locking, by another server on the same data directory). */
export class StoreInUseError extends StoreOpenError {}

/** The database was made by another build, with another layout: nothing converts it. */
export class StoreSchemaError extends StoreOpenError {}

/**
 * An accepted request's idempotency key was stored first by another request, on this or another
 * instance sharing the store, between the check and the write: nothing of this one was stored, and it
 * is answered as a repeat of the first.
 */
export class IdempotencyTakenError extends Error {}
