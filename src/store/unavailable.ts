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

export function isStorageUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, errcode } = err as { code?: unknown; errcode?: unknown };
  if (code === 'ERR_SQLITE_ERROR') return typeof errcode === 'number' && TRANSIENT.has(errcode & 0xff);
  return typeof code === 'string' && FS_CODES.has(code);
}
