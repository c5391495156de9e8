/**
 * Which Redis failures the driver reports as the storage contract's errors: a server unreachable or
 * refusing writes for now as StorageUnavailableError, the scripts' refusals as conflicts, the rest
 * (a bug) as they are.
 */
import { describe, expect, it } from 'vitest';
import { ConflictError, IdempotencyTakenError, StorageUnavailableError } from '../../../src/store/errors.ts';
import { atBoundary, contractError } from '../../../src/store/redis/errors.ts';

const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

describe('the Redis driver: contractError()', () => {
  it.each([
    ['unreachable', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })],
    ['a socket gone', Object.assign(new Error('connect ENOENT /run/redis.sock'), { code: 'ENOENT' })],
    ['retries used up', Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' })],
    ['a closed client', new Error('Connection is closed.')],
    ['cannot persist', reply('MISCONF Redis is configured to save RDB snapshots')],
    ['out of memory', reply("OOM command not allowed when used memory > 'maxmemory'")],
    ['a replica', reply("READONLY You can't write against a read only replica")],
    ['loading', reply('LOADING Redis is loading the dataset in memory')],
  ])('%s: storage unavailable', (_name, err) => {
    const e = contractError(err);
    expect(e).toBeInstanceOf(StorageUnavailableError);
    expect((e as Error).cause).toBe(err);
  });

  it('the scripts refusals: conflicts', () => {
    expect(contractError(reply('ERR user_script:1: IDEMPOTENCY_TAKEN the key was answered already'))).toBeInstanceOf(IdempotencyTakenError);
    expect(contractError(reply('ERR user_script:1: RUN_TAKEN a run with this id exists'))).toBeInstanceOf(ConflictError);
  });

  it.each([
    ['a script error', reply('ERR user_script:3: attempt to compare nil with number')],
    ['a plain error', new Error('boom')],
    ['a SQLite failure', Object.assign(new Error('database or disk is full'), { code: 'ERR_SQLITE_ERROR', errcode: 13 })],
    ['undefined', undefined],
  ])('%s: left as it is', (_name, err) => expect(contractError(err)).toBe(err));
});

describe('atBoundary()', () => {
  class Part {
    readonly name = 'part';
    calls = 0;
    async down(): Promise<void> {
      this.calls++;
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    }
    size(): number {
      return this.inner();
    }
    private inner(): number {
      return 3;
    }
    broken(): void {
      throw new Error('a bug');
    }
  }

  it('translates rejections, passes results and other errors through, and reads properties of the part', async () => {
    const raw = new Part();
    const part = atBoundary(raw);
    await expect(part.down()).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(part.size()).toBe(3);
    expect(() => part.broken()).toThrow('a bug');
    expect([part.name, raw.calls]).toEqual(['part', 1]);
  });
});
