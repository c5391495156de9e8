/**
 * Storage errors that are the disk's fault, not the write's: the database or
 * disk is full, an I/O error, the file is locked by another process, has
 * become read-only or cannot be opened. They pass when the disk recovers
 * (space freed, a device back), so the write is worth trying again, and an
 * HTTP sender is told to retry (503), not that it hit a bug.
 */

/** SQLite's primary result codes (the low byte of an extended code) for such failures. */
const SQLITE_BUSY = 5;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const TRANSIENT = new Set([SQLITE_BUSY, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN]);

/** The same failures as the file system reports them. */
const FS_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS']);

/** A Redis server unreachable (the connection's errors), or refusing writes for now. */
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOENT', 'EHOSTUNREACH']);
/**
 * Replies of a server that cannot take the write now: still loading its data, unable to persist
 * (MISCONF), out of memory under `noeviction`, a replica after a failover (READONLY), or a primary
 * that cannot reach enough replicas (NOREPLICAS).
 */
const REDIS_REFUSALS = /^(LOADING|MISCONF|OOM|READONLY|NOREPLICAS|MASTERDOWN|BUSY)\b/;

export function isStorageUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, errcode, name, message } = err as { code?: unknown; errcode?: unknown; name?: unknown; message?: unknown };
  if (code === 'ERR_SQLITE_ERROR') return typeof errcode === 'number' && TRANSIENT.has(errcode & 0xff);
  if (name === 'MaxRetriesPerRequestError' || (typeof message === 'string' && message === 'Connection is closed.')) return true;
  if (name === 'ReplyError' && typeof message === 'string') return REDIS_REFUSALS.test(message);
  return typeof code === 'string' && (FS_CODES.has(code) || NET_CODES.has(code));
}
