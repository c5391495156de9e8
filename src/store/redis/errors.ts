/**
 * The Redis driver's failures as the storage contract names them (../errors.ts), translated where a
 * call leaves the driver (`atBoundary`). A server that cannot be reached, or that refuses writes for
 * now, is `StorageUnavailableError`; a script's refusal of something that exists already is
 * `ConflictError` (`IdempotencyTakenError` for a key stored first by another request). Anything else
 * (a bug, a script error) is left as it is.
 */
import { ConflictError, IdempotencyTakenError, StorageUnavailableError } from '../errors.ts';

/** The connection's errors: the server is down, gone or unreachable. */
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOENT', 'EHOSTUNREACH']);
/**
 * Replies of a server that cannot take the write now: still loading its data, unable to persist
 * (MISCONF), out of memory under `noeviction`, a replica after a failover (READONLY), or a primary
 * that cannot reach enough replicas (NOREPLICAS).
 */
const REFUSALS = /^(LOADING|MISCONF|OOM|READONLY|NOREPLICAS|MASTERDOWN|BUSY)\b/;

/** `err` as the contract's error when it is one of those, else `err` itself. */
export function contractError(err: unknown): unknown {
  if (typeof err !== 'object' || err === null || err instanceof StorageUnavailableError || err instanceof ConflictError) return err;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  // ioredis gives up on a command after its reconnection attempts, or once the client is closed
  if (name === 'MaxRetriesPerRequestError' || text === 'Connection is closed.') return new StorageUnavailableError(text, { cause: err });
  if (name === 'ReplyError') {
    if (REFUSALS.test(text)) return new StorageUnavailableError(text, { cause: err });
    // the scripts' own refusals (lua/records/accept.lua, lua/includes/callbacks.lua)
    if (text.includes('IDEMPOTENCY_TAKEN'))
      return new IdempotencyTakenError('the idempotency key was answered by another request', { cause: err });
    if (text.includes('RUN_TAKEN')) return new ConflictError('a run with this id exists', { cause: err });
    if (text.includes('ENTRY_TAKEN')) return new ConflictError('an outbox entry with this id exists', { cause: err });
    return err;
  }
  if (typeof code === 'string' && NET_CODES.has(code)) return new StorageUnavailableError(text || code, { cause: err });
  return err;
}

const rethrow = (err: unknown): never => {
  throw contractError(err);
};

/**
 * `part` as the rest of the service sees it: each of its methods rejects (or throws) with the
 * contract's error where its failure is one. Its other properties read through; its methods still
 * call each other directly. A round trip to Redis costs far more than the extra call.
 */
export function atBoundary<T extends object>(part: T): T {
  const out = Object.create(part) as Record<string, unknown>;
  for (const name of methodNames(part)) {
    const method = (part as Record<string, (...a: unknown[]) => unknown>)[name]!;
    out[name] = (...args: unknown[]) => {
      try {
        const r = method.apply(part, args);
        return r instanceof Promise ? r.catch(rethrow) : r;
      } catch (err) {
        return rethrow(err);
      }
    };
  }
  return out as T;
}

/** The methods of `o`'s classes, up to Object's own. */
function methodNames(o: object): Set<string> {
  const names = new Set<string>();
  for (let p = Object.getPrototypeOf(o); p && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const name of Object.getOwnPropertyNames(p))
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(p, name)?.value === 'function') names.add(name);
  return names;
}
