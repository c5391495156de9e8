/** The driver's connection to Redis: opened once, with a clear error naming the server (never its password). */
import { Redis } from 'ioredis';
import { StoreOpenError } from '../errors.ts';
import { parseRedisUrl } from './url.ts';

export async function connectRedis(url: string, connectTimeoutMs = 5000): Promise<{ client: Redis; shown: string }> {
  const { options, shown } = parseRedisUrl(url);
  let opened = false;
  const client = new Redis({
    ...options,
    lazyConnect: true,
    // commands of one turn of the event loop go out in one write
    enableAutoPipelining: true,
    // a command fails (storage unavailable: 503, retried by the runtime) after two reconnection attempts
    maxRetriesPerRequest: 2,
    connectTimeout: connectTimeoutMs,
    // opening fails at the first refusal; once open, the client reconnects after a lost connection
    retryStrategy: (times) => (opened ? Math.min(times * 100, 2000) : null),
  });
  // ioredis reports connection trouble as events too; the calls that fail say it where it matters
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.disconnect();
    throw new StoreOpenError(`storage.url: cannot reach Redis at ${shown}: ${(err as Error).message}`, { cause: err });
  }
  opened = true;
  return { client, shown };
}
