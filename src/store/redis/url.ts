/**
 * `storage.url` as client options: `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS), or
 * `unix:///path/to/redis.sock[?db=n&password=…]`. A bad url is refused with the reason, naming the key;
 * `shown` is the url without its password, for logs and errors.
 */
import type { RedisOptions } from 'ioredis';

export class RedisUrlError extends Error {}

export interface ParsedUrl {
  options: RedisOptions;
  shown: string;
}

export function parseRedisUrl(url: string): ParsedUrl {
  const bad = (why: string) =>
    new RedisUrlError(`storage.url: ${why} (expected redis://host:port/db, rediss://… or unix:///path/to/redis.sock)`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw bad(`${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//…@'))} is not a url`);
  }
  const password = u.password ? decodeURIComponent(u.password) : (u.searchParams.get('password') ?? undefined);
  const username = u.username ? decodeURIComponent(u.username) : undefined;
  const shownUrl = new URL(u.href);
  if (shownUrl.password) shownUrl.password = '…';
  if (shownUrl.searchParams.has('password')) shownUrl.searchParams.set('password', '…');
  const shown = shownUrl.href;
  const dbOf = (s: string | null): number => {
    if (s === null || s === '') return 0;
    if (!/^\d{1,2}$/.test(s)) throw bad(`the database must be a number, not ${JSON.stringify(s)}`);
    return Number(s);
  };
  const auth = { ...(password !== undefined ? { password } : {}), ...(username ? { username } : {}) };
  switch (u.protocol) {
    case 'unix:': {
      const path = decodeURIComponent(u.pathname);
      if (!path || path === '/') throw bad('a unix url needs the socket path');
      return { options: { path, db: dbOf(u.searchParams.get('db')), ...auth }, shown };
    }
    case 'redis:':
    case 'rediss:': {
      if (!u.hostname) throw bad('the url has no host');
      const port = u.port ? Number(u.port) : 6379;
      const db = dbOf(u.pathname.replace(/^\//, '') || null);
      const tls = u.protocol === 'rediss:' ? { tls: { servername: u.hostname } } : {};
      return { options: { host: u.hostname.replace(/^\[|\]$/g, ''), port, db, ...auth, ...tls }, shown };
    }
    default:
      throw bad(`the scheme ${JSON.stringify(u.protocol)} is not redis:, rediss: or unix:`);
  }
}
