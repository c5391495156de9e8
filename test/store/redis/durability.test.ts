/** `check` on the Redis driver: a warning unless an acknowledged write is on disk, read from a real server's settings. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redisDurability } from '../../../src/store/redis/durability.ts';
import { RedisStore } from '../../../src/store/redis/store.ts';
import { cleanup, runCli, runInProcess, tempDir } from '../../helpers/cli.ts';
import { redisSuite, startRedis } from '../../helpers/redis-server.ts';

const settings = (s: Record<string, string>) => async (name: string) => s[name];

describe('redisDurability()', () => {
  it('says nothing more with appendonly yes, appendfsync always and noeviction', async () => {
    const d = await redisDurability(
      settings({ appendonly: 'yes', appendfsync: 'always', 'maxmemory-policy': 'noeviction' }),
      'unix:///r.sock',
    );
    expect(d).toEqual({ line: 'redis persistence: appendonly yes, appendfsync always, maxmemory-policy noeviction', warnings: [] });
  });

  it.each([
    [{ appendonly: 'no', appendfsync: 'always' }, /appendonly no: an answered request is in its memory only/],
    [{ appendonly: 'yes', appendfsync: 'everysec' }, /appendfsync everysec: .* can lose the last second/],
    [{ appendonly: 'yes', appendfsync: 'no' }, /appendfsync no: the kernel writes the file when it likes/],
    [{}, /does not show its settings/],
  ])('warns for %j', async (s, warning) => {
    const d = await redisDurability(settings({ 'maxmemory-policy': 'noeviction', ...s }), 'unix:///r.sock');
    expect(d.warnings).toEqual([expect.stringMatching(warning)]);
  });

  it('warns when the server may evict keys', async () => {
    const d = await redisDurability(
      settings({ appendonly: 'yes', appendfsync: 'always', 'maxmemory-policy': 'allkeys-lru' }),
      'unix:///r.sock',
    );
    expect(d.warnings).toEqual([expect.stringContaining('maxmemory-policy allkeys-lru: when full it may evict')]);
  });
});

redisSuite('hook-intake check on the Redis driver', () => {
  /** `check` in this process (its output and exit code are what is checked), or through the real CLI (`run = runCli`). */
  const check = async (url: string, run = runInProcess) => {
    const dir = tempDir();
    try {
      const config = join(dir, 'hook-intake.json');
      writeFileSync(config, JSON.stringify({ storage: { driver: 'redis', url } }));
      return await run(['check', '--config', config, '--data', join(dir, 'data')]);
    } finally {
      cleanup(dir);
    }
  };

  it('warns about a server without an append-only file, and not about one that syncs each write', async () => {
    for (const aof of [false, true]) {
      const r = await startRedis({ aof });
      try {
        const { code, stdout } = await check(r.url);
        expect(code).toBe(0);
        expect(stdout).toContain(`storage: redis ${r.url}`);
        if (aof) expect(stdout).not.toContain('warning: Redis');
        else expect(stdout).toContain(`warning: Redis at ${r.url} has appendonly no`);
      } finally {
        await r.stop();
      }
    }
  });

  it('gives serve the same warnings at start', async () => {
    const r = await startRedis();
    try {
      const store = await RedisStore.open({ url: r.url });
      expect(await store.startupWarnings()).toEqual([expect.stringContaining('has appendonly no')]);
      await store.close();
    } finally {
      await r.stop();
    }
  });

  it('never prints the password of storage.url: check and serve on a server that cannot be reached', async () => {
    const secret = 'pw-7c1e9a4b0d';
    const url = `redis://app:${secret}@127.0.0.1:1/0`;
    // the real CLI: everything the process writes is searched for the password
    const checked = await check(url, runCli);
    expect(checked.stdout).toContain('warning: cannot reach Redis at redis://app:%E2%80%A6@127.0.0.1:1/0');
    const dir = tempDir();
    try {
      const config = join(dir, 'hook-intake.json');
      writeFileSync(config, JSON.stringify({ storage: { driver: 'redis', url } }));
      const served = await runCli(['serve', '--config', config, '--data', join(dir, 'data'), '--port', '0']);
      expect(served.code).not.toBe(0);
      expect(served.stderr).toContain('cannot reach Redis at redis://app:%E2%80%A6@127.0.0.1:1/0');
      for (const out of [checked.stdout, checked.stderr, served.stdout, served.stderr]) expect(out).not.toContain(secret);
    } finally {
      cleanup(dir);
    }
  });

  it('warns, without failing, when the server cannot be reached', async () => {
    const { code, stdout } = await check('unix:///nonexistent/redis.sock');
    expect(code).toBe(0);
    expect(stdout).toContain('warning: cannot reach Redis at unix:///nonexistent/redis.sock');
  });
});
