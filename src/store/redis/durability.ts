/**
 * What `hook-intake check` says of a Redis server's settings: whether a write it acknowledges is on
 * disk (`appendonly`, `appendfsync`), and whether it may drop keys (`maxmemory-policy`). A 2xx means
 * the write reached Redis; only `appendonly yes` with `appendfsync always` makes that "on disk".
 */
import { Redis } from 'ioredis';
import { parseRedisUrl } from './url.ts';

/** Reads one setting (`CONFIG GET name`); undefined when the server does not say. */
export type ConfigGet = (name: string) => Promise<string | undefined>;

export interface Durability {
  /** One line for the summary. */
  line: string;
  warnings: string[];
}

export async function redisDurability(get: ConfigGet, shown: string): Promise<Durability> {
  const [aof, fsync, policy] = [await get('appendonly'), await get('appendfsync'), await get('maxmemory-policy')];
  const warnings: string[] = [];
  if (aof === undefined) {
    warnings.push(
      `Redis at ${shown} does not show its settings (CONFIG GET is refused): check that it runs with appendonly yes and appendfsync always (docs/redis.md)`,
    );
  } else if (aof !== 'yes') {
    warnings.push(
      `Redis at ${shown} has appendonly ${aof}: an answered request is in its memory only and is lost if it stops; ` +
        'set appendonly yes and appendfsync always so that a 2xx means on disk (docs/redis.md)',
    );
  } else if (fsync === 'everysec') {
    warnings.push(
      `Redis at ${shown} has appendfsync everysec: a write reaches its disk within about a second, so a power loss or crash of its machine ` +
        'can lose the last second of answered requests; appendfsync always makes a 2xx mean on disk (docs/redis.md)',
    );
  } else if (fsync !== 'always') {
    warnings.push(
      `Redis at ${shown} has appendfsync ${fsync}: the kernel writes the file when it likes (up to about 30 s later); set appendfsync always (docs/redis.md)`,
    );
  }
  if (policy !== undefined && policy !== 'noeviction')
    warnings.push(
      `Redis at ${shown} has maxmemory-policy ${policy}: when full it may evict stored runs, events and queue entries; set maxmemory-policy noeviction`,
    );
  const line =
    aof === undefined
      ? `redis persistence: unknown`
      : `redis persistence: appendonly ${aof}, appendfsync ${fsync}, maxmemory-policy ${policy}`;
  return { line, warnings };
}

/** Connects to `url` and reads its settings; a server that cannot be reached is a warning, not an error of the config. */
export async function checkRedis(url: string): Promise<Durability> {
  const { options, shown } = parseRedisUrl(url);
  const client = new Redis({ ...options, lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    const get: ConfigGet = async (name) => {
      try {
        const r = (await client.config('GET', name)) as string[];
        return r[1];
      } catch {
        return undefined;
      }
    };
    return await redisDurability(get, shown);
  } catch (err) {
    return {
      line: 'redis persistence: not checked',
      warnings: [`cannot reach Redis at ${shown} (${(err as Error).message}): its persistence settings were not checked`],
    };
  } finally {
    client.disconnect();
  }
}
