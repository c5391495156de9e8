/**
 * Starting a real `redis-server` on a unix socket, for the tests (redis-server.ts) and the bench
 * (bench/redis.ts). No TCP port (`--port 0`), no snapshots; the caller adds the rest of the
 * arguments. Free of vitest, so the bench can import it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));

export interface RedisProcess {
  proc: ChildProcess;
  socket: string;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

/** Starts redis-server in `dir` with `args` after the common ones; resolves once it accepts connections, within 10 s. */
export async function spawnRedis(dir: string, args: readonly string[]): Promise<RedisProcess> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const socket = join(dir, 'redis.sock');
  const common = ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--dir', dir, '--save', '', '--logfile', ''];
  const proc = spawn(REDIS_SERVER, [...common, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let out = '';
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
  return { proc, socket, exited };
}
