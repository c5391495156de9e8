/**
 * The SQLite driver's failures as the storage contract names them (../errors.ts). A failure of the
 * disk, not of the write (the database or disk full, an I/O error, the file locked by another
 * process, become read-only or not openable) passes when the disk recovers, so it is
 * `StorageUnavailableError`; a row that exists already is `ConflictError`. Anything else (a bug, a
 * schema mismatch) is left as it is.
 */
import { ConflictError, StorageUnavailableError } from '../errors.ts';

/** SQLite's primary result codes (the low byte of an extended code). */
const SQLITE_BUSY = 5;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
/** Extended codes of a row that exists already. */
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const TRANSIENT = new Set([SQLITE_BUSY, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN]);

/** The same failures as the file system reports them (the write-ahead log's sync, a directory). */
const FS_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS']);

/** `err` as the contract's error when it is one of those, else `err` itself. */
export function contractError(err: unknown): unknown {
  if (typeof err !== 'object' || err === null || err instanceof StorageUnavailableError || err instanceof ConflictError) return err;
  const { code, errcode, message } = err as { code?: unknown; errcode?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(code);
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
    if (TRANSIENT.has(errcode & 0xff)) return new StorageUnavailableError(text, { cause: err });
    if (errcode === SQLITE_CONSTRAINT_PRIMARYKEY || errcode === SQLITE_CONSTRAINT_UNIQUE)
      return new ConflictError(`a record with this id exists (${text})`, { cause: err });
    return err;
  }
  if (typeof code === 'string' && FS_CODES.has(code)) return new StorageUnavailableError(text, { cause: err });
  return err;
}
