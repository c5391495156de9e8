/**
 * Which storage errors count as the disk's fault (retried, answered 503) and
 * which as the write's (a bug or a constraint: not retried, answered 500).
 */
import { describe, expect, it } from 'vitest';
import { isStorageUnavailable } from '../../src/store/unavailable.ts';
import { sqliteError } from '../helpers/storage.ts';

describe('isStorageUnavailable()', () => {
  it.each([
    ['SQLITE_FULL', sqliteError(13, 'database or disk is full')],
    ['SQLITE_IOERR_WRITE (extended)', sqliteError(778, 'disk I/O error')],
    ['SQLITE_BUSY', sqliteError(5, 'database is locked')],
    ['SQLITE_READONLY', sqliteError(8, 'attempt to write a readonly database')],
    ['ENOSPC', Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })],
    ['Redis unreachable', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })],
    ['Redis retries used up', Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' })],
    ['Redis cannot persist', Object.assign(new Error('MISCONF Redis is configured to save RDB snapshots'), { name: 'ReplyError' })],
    ['Redis out of memory', Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'"), { name: 'ReplyError' })],
    ['a Redis replica', Object.assign(new Error("READONLY You can't write against a read only replica"), { name: 'ReplyError' })],
  ])('%s: yes', (_name, err) => expect(isStorageUnavailable(err)).toBe(true));

  it.each([
    ['SQLITE_CONSTRAINT', sqliteError(2067, 'UNIQUE constraint failed: runs.id')],
    ['SQLITE_ERROR', sqliteError(1, 'no such table: runs')],
    ['a plain error', new Error('boom')],
    ['a Redis script error', Object.assign(new Error('ERR user_script:1: RUN_TAKEN a run with this id exists'), { name: 'ReplyError' })],
    ['not an error', 'database or disk is full'],
    ['undefined', undefined],
  ])('%s: no', (_name, err) => expect(isStorageUnavailable(err)).toBe(false));
});
