/**
 * A redis-server for `npm run bench -- --redis`: on a unix socket in the scenario's directory, with the
 * append-only file written on every command and synced every second (`appendfsync everysec`): an answered
 * write survives a crash of either process, as SQLite's WAL with `synchronous=normal` does, and up to a
 * second of them may be lost to a power cut, as with SQLite. Its CPU counts toward the Redis driver's.
 */
import { REDIS_SERVER, spawnRedis } from '../test/helpers/redis-process.ts';
import { track } from './servers.ts';

export interface BenchRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export { REDIS_SERVER };

export async function startBenchRedis(dir: string): Promise<BenchRedis> {
  if (!REDIS_SERVER) throw new Error('--redis: redis-server not found (apt-get install redis-server)');
  const { proc, socket, exited } = await spawnRedis(dir, [
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--maxmemory-policy',
    'noeviction',
  ]);
  track(proc);
  return {
    url: `unix://${socket}`,
    pid: proc.pid!,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
