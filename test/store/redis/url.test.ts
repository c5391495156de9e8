/** `storage.url` as client options, the reason a bad one is refused (never with its password), and the oldest Redis the driver takes. */
import { describe, expect, it } from 'vitest';
import { parseRedisUrl, RedisUrlError } from '../../../src/store/redis/url.ts';
import { atLeast, MIN_VERSION } from '../../../src/store/redis/connect.ts';

describe('parseRedisUrl()', () => {
  it('takes redis:// with credentials, port and database, and shows it without the password', () => {
    const p = parseRedisUrl('redis://app:s3cr%40t@redis.internal:6380/2');
    expect(p.options).toEqual({ host: 'redis.internal', port: 6380, db: 2, username: 'app', password: 's3cr@t' });
    expect(p.shown).toBe('redis://app:%E2%80%A6@redis.internal:6380/2');
    expect(p.shown).not.toContain('s3cr');
  });

  it('defaults the port and database, and turns on TLS for rediss://', () => {
    expect(parseRedisUrl('redis://localhost').options).toEqual({ host: 'localhost', port: 6379, db: 0 });
    expect(parseRedisUrl('rediss://cache.example').options).toMatchObject({
      host: 'cache.example',
      port: 6379,
      tls: { servername: 'cache.example' },
    });
  });

  it('takes unix:// with the socket path, a database and a password in the query', () => {
    const p = parseRedisUrl('unix:///run/redis/redis.sock?db=3&password=hunter22');
    expect(p.options).toEqual({ path: '/run/redis/redis.sock', db: 3, password: 'hunter22' });
    expect(p.shown).not.toContain('hunter22');
  });

  it.each([
    ['not a url', /is not a url/],
    ['http://localhost:6379', /scheme "http:" is not redis:, rediss: or unix:/],
    ['unix://', /needs the socket path/],
    ['redis://localhost/abc', /database must be a number/],
  ])('refuses %s, naming the key', (url, reason) => {
    expect(() => parseRedisUrl(url)).toThrow(RedisUrlError);
    expect(() => parseRedisUrl(url)).toThrow(/^storage\.url: /);
    expect(() => parseRedisUrl(url)).toThrow(reason);
  });

  it('does not repeat the password of a url it cannot parse', () => {
    expect(() => parseRedisUrl('redis://u:topsecret@bad host')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('topsecret') }),
    );
  });
});

describe('atLeast()', () => {
  it.each([
    ['7.0.15', true],
    ['6.2.0', true],
    ['6.2', true],
    ['6.0.20', false],
    ['5.0.7', false],
    ['10.0.0', true],
  ])('%s against 6.2: %s', (version, ok) => {
    expect(atLeast(version, MIN_VERSION)).toBe(ok);
  });
});
