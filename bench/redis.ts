/**
 * A redis-server for `npm run bench -- --redis`: on a unix socket in the scenario's directory, with the
 * append-only file written on every command and synced every second (`appendfsync everysec`): an answered
 * write survives a crash of either process, as SQLite's WAL with `synchronous=normal` does, and up to a
 * second of them may be lost to a power cut, as with SQLite. Its CPU counts toward the Redis driver's.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { track } from './servers.ts';

export interface BenchRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));

export async function startBenchRedis(dir: string): Promise<BenchRedis> {
  if (!REDIS_SERVER) throw new Error('--redis: redis-server not found (apt-get install redis-server)');
  const socket = join(dir, 'redis.sock');
  const args = ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--dir', dir, '--save', '', '--appendonly', 'yes',
    '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction', '--logfile', ''];
  const proc = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  track(proc);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      if (/ready to accept connections/i.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
  });
  return {
    url: `unix://${socket}`,
    pid: proc.pid!,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
