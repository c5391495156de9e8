/**
 * A real `redis-server` for tests, on a unix socket in a temporary directory: no TCP port (`--port 0`),
 * so test files running side by side never clash, and no snapshot or AOF unless a test asks for AOF.
 *
 * `redisSuite(name, fn)` wraps a describe block: with no `redis-server` installed it is skipped on a
 * developer's machine, and fails in CI (`process.env.CI` set), where `.ci/run` installs it.
 */
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { cleanup, tempDir } from './cli.ts';

import { REDIS_SERVER, spawnRedis } from './redis-process.ts';

export { REDIS_SERVER };

export interface RedisServer {
  /** The socket's path. */
  socket: string;
  /** `unix://<socket>`, as `storage.url` takes it. */
  url: string;
  dir: string;
  /** A client for the test's own reads (closed by `stop`). */
  client: Redis;
  /** Empties every database (between tests). */
  flush(): Promise<void>;
  /** Kills the server at once, as a crash would (`SIGKILL`). */
  kill(): Promise<void>;
  /** Shuts the server down and removes its directory. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** Append-only file with `appendfsync always` (crash-safety tests). */
  aof?: boolean;
  /** More `redis-server` arguments, as `['--name', 'value']`. */
  args?: string[];
  /** Where the server keeps its files (a restart on the same data); the caller removes it. Default: a new one, removed by `stop`. */
  dir?: string;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

export async function startRedis(opts: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = opts.dir ?? tempDir('hook-intake-redis-');
  const args = [
    '--appendonly',
    opts.aof ? 'yes' : 'no',
    ...(opts.aof ? ['--appendfsync', 'always'] : []),
    '--maxmemory-policy',
    'noeviction',
    ...(opts.args ?? []),
  ];
  const { proc, socket, exited } = await spawnRedis(dir, args);
  running.add(proc);
  void exited.then(() => running.delete(proc));
  const client = new Redis({ path: socket, lazyConnect: false });
  // a test that kills the server sees its own errors; this client's reconnect attempts are not one
  client.on('error', () => {});
  return {
    socket,
    url: `unix://${socket}`,
    dir,
    client,
    flush: async () => {
      await client.flushall();
    },
    kill: async () => {
      proc.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      client.disconnect();
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        await exited;
      }
      if (!opts.dir) cleanup(dir);
    },
  };
}

/** `describe(name, fn)` when redis-server is installed; otherwise skipped, or failing in CI. */
export function redisSuite(name: string, fn: () => void): void {
  if (REDIS_SERVER) {
    describe(name, fn);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('needs redis-server, which CI installs (.ci/run)', () => {
        throw new Error('redis-server is not installed: apt-get install redis-server');
      });
    });
    return;
  }
  describe.skip(name, fn);
}
