/** The Redis driver's form of `storage` (src/config/storage.ts): whether its url can be used, and how `check` shows it. */
import type { RedisStorage } from '../../config/storage.ts';
import { parseRedisUrl, RedisUrlError } from './url.ts';

/** Problems of the url, by key path (`storage.url`): none when the driver can use it. */
export function redisIssues(s: RedisStorage): { path: string; message: string }[] {
  try {
    parseRedisUrl(s.url);
    return [];
  } catch (err) {
    if (!(err instanceof RedisUrlError)) throw err;
    return [{ path: 'storage.url', message: err.message.replace(/^storage\.url: /, '') }];
  }
}

/** The server without its password, the key prefix and the instance timeout. */
export function describeRedis(s: RedisStorage): string {
  return `redis ${parseRedisUrl(s.url).shown} (prefix ${s.prefix}, instance timeout ${s.instanceTimeoutSeconds} s)`;
}
