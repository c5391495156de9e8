/** The driver's connection to Redis: opened once, with a clear error naming the server (never its password). */
import { Redis } from 'ioredis';
import { StoreOpenError } from '../errors.ts';
import { parseRedisUrl } from './url.ts';

export async function connectRedis(url: string, connectTimeoutMs = 5000): Promise<{ client: Redis; shown: string }> {
  let parsed: ReturnType<typeof parseRedisUrl>;
  try {
    parsed = parseRedisUrl(url);
  } catch (err) {
    // the config's check says so first (config.ts); a caller that skipped it gets the same words
    throw new StoreOpenError((err as Error).message, { cause: err });
  }
  const { options, shown } = parsed;
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
  let info: string;
  try {
    await client.connect();
    info = await client.info('server');
  } catch (err) {
    client.disconnect();
    throw new StoreOpenError(`storage.url: cannot reach Redis at ${shown}: ${(err as Error).message}`, { cause: err });
  }
  const version = /^redis_version:(\S+)/m.exec(info)?.[1];
  if (version && !atLeast(version, MIN_VERSION)) {
    client.disconnect();
    throw new StoreOpenError(`storage.url: Redis at ${shown} is version ${version}; the driver needs ${MIN_VERSION.join('.')} or later`);
  }
  opened = true;
  return { client, shown };
}

/** The scripts use `ZADD … GT`, new in Redis 6.2. */
export const MIN_VERSION = [6, 2];

/** True when `version` (`7.0.15`) is `min` or later. */
export function atLeast(version: string, min: number[]): boolean {
  const v = version.split('.').map(Number);
  for (let i = 0; i < min.length; i++) {
    const a = v[i] ?? 0;
    if (a !== min[i]) return a > min[i]!;
  }
  return true;
}
