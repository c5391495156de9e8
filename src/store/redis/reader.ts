/**
 * The Redis store read by a process that does not serve from it (`StoreReader`, roles.ts): plain reads
 * on one connection. Unlike a `RedisStore` it keeps no presence key and loads no scripts, so the
 * instances serving from the server do not count it as one of them and nothing of it is written.
 */
import type { Redis } from 'ioredis';
import type { StoreReader } from '../roles.ts';
import { connectRedis } from './connect.ts';
import { atBoundary } from './errors.ts';
import { readEvent, readRun } from './records.ts';
import { RedisKeptRequests } from './requests.ts';

export interface RedisReaderOptions {
  url: string;
  prefix?: string;
  connectTimeoutMs?: number;
}

class RunsAndEvents {
  private readonly client: Redis;
  private readonly p: string;

  constructor(client: Redis, p: string) {
    this.client = client;
    this.p = p;
  }

  getRun(id: string) {
    return readRun(this.client, this.p, id);
  }

  getEvent(id: string) {
    return readEvent(this.client, this.p, id);
  }
}

export async function openRedisReader(opts: RedisReaderOptions): Promise<StoreReader> {
  const { client } = await connectRedis(opts.url, opts.connectTimeoutMs);
  const p = opts.prefix ?? 'hook-intake:';
  return {
    driver: 'redis',
    requests: atBoundary(new RedisKeptRequests(client, p)),
    records: atBoundary(new RunsAndEvents(client, p)),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
