/**
 * A real `redis-server` for tests, on a unix socket in a temporary directory: no TCP port (`--port 0`),
 * so test files running side by side never clash, and no snapshot or AOF unless a test asks for AOF.
 *
 * `redisSuite(name, fn)` wraps a describe block: with no `redis-server` installed it is skipped on a
 * developer's machine, and fails in CI (`process.env.CI` set), where `.ci/run` installs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { cleanup, tempDir } from './cli.ts';

export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));

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
  if (!REDIS_SERVER) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const dir = opts.dir ?? tempDir('hook-intake-redis-');
  const socket = join(dir, 'redis.sock');
  const args = [
    '--port', '0',
    '--unixsocket', socket,
    '--unixsocketperm', '700',
    '--dir', dir,
    '--save', '',
    '--appendonly', opts.aof ? 'yes' : 'no',
    ...(opts.aof ? ['--appendfsync', 'always'] : []),
    '--maxmemory-policy', 'noeviction',
    '--logfile', '',
    ...(opts.args ?? []),
  ];
  const proc = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  let out = '';
  const exited = new Promise<void>((r) => proc.once('exit', () => {
    running.delete(proc);
    r();
  }));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      // a server that never said it was ready is not left running
      proc.kill('SIGKILL');
      reject(new Error(`redis-server did not start within 10 s:\n${out}`));
    }, 10_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      if (/ready to accept connections/i.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}:\n${out}`));
    });
  });
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
