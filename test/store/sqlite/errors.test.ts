/**
 * Which SQLite failures the driver reports as the storage contract's errors: the disk's fault
 * (retried, answered 503) as StorageUnavailableError, a row that exists as ConflictError, and the
 * rest (a bug) as they are, answered 500.
 */
import { describe, expect, it } from 'vitest';
import { ConflictError, StorageUnavailableError } from '../../../src/store/errors.ts';
import { contractError } from '../../../src/store/sqlite/errors.ts';
import { sqliteError } from '../../helpers/storage.ts';

describe('the SQLite driver: contractError()', () => {
  it.each([
    ['SQLITE_FULL', sqliteError(13, 'database or disk is full')],
    ['SQLITE_IOERR_WRITE (extended)', sqliteError(778, 'disk I/O error')],
    ['SQLITE_BUSY', sqliteError(5, 'database is locked')],
    ['SQLITE_READONLY', sqliteError(8, 'attempt to write a readonly database')],
    ['SQLITE_CANTOPEN', sqliteError(14, 'unable to open database file')],
    ['ENOSPC', Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })],
    ['EIO', Object.assign(new Error('i/o error'), { code: 'EIO' })],
  ])('%s: storage unavailable, with the cause and its message', (_name, err) => {
    const e = contractError(err);
    expect(e).toBeInstanceOf(StorageUnavailableError);
    expect((e as StorageUnavailableError).cause).toBe(err);
    expect((e as StorageUnavailableError).message).toBe(`storage unavailable: ${err.message}`);
    expect((e as StorageUnavailableError).retryAfterSeconds).toBe(30);
  });

  it.each([
    ['SQLITE_CONSTRAINT_PRIMARYKEY', sqliteError(1555, 'UNIQUE constraint failed: runs.id')],
    ['SQLITE_CONSTRAINT_UNIQUE', sqliteError(2067, 'UNIQUE constraint failed: runs.id')],
  ])('%s: a conflict', (_name, err) => expect(contractError(err)).toBeInstanceOf(ConflictError));

  it.each([
    ['SQLITE_CONSTRAINT_NOTNULL', sqliteError(1299, 'NOT NULL constraint failed: runs.id')],
    ['SQLITE_ERROR', sqliteError(1, 'no such table: runs')],
    ['a plain error', new Error('boom')],
    ['a Redis refusal', Object.assign(new Error('OOM command not allowed'), { name: 'ReplyError' })],
    ['not an error', 'database or disk is full'],
    ['undefined', undefined],
  ])('%s: left as it is', (_name, err) => expect(contractError(err)).toBe(err));
});
