/**
 * The store's word on a storage config (src/store/config.ts), whatever its driver: whether it can be
 * used, and how `check` shows it; and `check` refusing a Redis url the driver cannot read, as a config
 * problem naming `storage.url`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisStorage, SqliteStorage } from '../../src/config/storage.ts';
import { describeStorage, inspectStorage, storageIssues } from '../../src/store/config.ts';
import { cleanup, runInProcess, tempDir } from '../helpers/cli.ts';

const sqlite: SqliteStorage = { driver: 'sqlite', path: '/srv/hi.db', synchronous: 'full', locking: 'normal', timeoutSeconds: 5 };
const redis = (url: string): RedisStorage => ({ driver: 'redis', url, prefix: 'hi:', instanceTimeoutSeconds: 5, timeoutSeconds: 5 });

describe('storageIssues()', () => {
  it('has nothing to say of a usable config', () => {
    expect(storageIssues(sqlite)).toEqual([]);
    expect(storageIssues(redis('unix:///run/redis.sock?db=2'))).toEqual([]);
  });

  it.each([
    ['http://localhost:6379', 'the scheme "http:" is not redis:, rediss: or unix:'],
    ['redis://localhost/x', 'the database must be a number, not "x"'],
    ['unix:///', 'a unix url needs the socket path'],
  ])('names storage.url for %s', (url, reason) => {
    expect(storageIssues(redis(url))).toEqual([{ path: 'storage.url', message: expect.stringContaining(reason) }]);
  });
});

describe('describeStorage()', () => {
  it('shows the file and its settings, or the server without its password', () => {
    expect(describeStorage(sqlite)).toBe('sqlite /srv/hi.db (synchronous=full, locking=normal)');
    expect(describeStorage(redis('redis://app:s3cret@redis.internal:6380/2'))).toBe(
      'redis redis://app:%E2%80%A6@redis.internal:6380/2 (prefix hi:, instance timeout 5 s)',
    );
  });

  it('has no server to ask for a file', async () => {
    expect(await inspectStorage(sqlite)).toBeUndefined();
  });
});

describe('hook-intake check', () => {
  const dir = tempDir();
  afterAll(() => cleanup(dir));

  it('refuses a Redis url the driver cannot read, naming storage.url', async () => {
    const config = join(dir, 'hook-intake.json');
    writeFileSync(config, JSON.stringify({ storage: { driver: 'redis', url: 'http://localhost:6379' } }));
    const { code, stdout, stderr } = await runInProcess(['check', '--config', config, '--data', join(dir, 'data')]);
    expect([code, stdout]).toEqual([1, '']);
    expect(stderr).toContain(`${config}: storage.url: the scheme "http:" is not redis:, rediss: or unix:`);
  });
});
