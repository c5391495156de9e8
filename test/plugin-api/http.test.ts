/**
 * Helpers shared by HTTP plugins: Retry-After, error texts, capped reads,
 * redaction and the retry rule for statuses.
 */
import { describe, expect, it } from 'vitest';
import {
  channelErrorForStatus,
  errorDetail,
  isRetryableStatus,
  parseRetryAfter,
  readCapped,
  redact,
  shorten,
} from '../../src/plugin-api/http.ts';

const NOW = Date.parse('2030-06-01T12:00:00Z');

describe('parseRetryAfter()', () => {
  it.each([
    ['120', 120_000],
    [' 3 ', 3000],
    ['1.5', 1500],
    ['Sat, 01 Jun 2030 12:00:30 GMT', 30_000],
    ['Sat, 01 Jun 2030 11:59:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    ['', undefined],
    [null, undefined],
  ])('%j → %s ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });
});

describe('errorDetail()', () => {
  it.each([
    ['{"error":{"message":"Invalid model","type":"x"}}', 'Invalid model'],
    ['{"error":"rate limited"}', 'rate limited'],
    ['{"message":"nope"}', 'nope'],
    ['{"detail":"Not Found"}', 'Not Found'],
    ['{"ok":false,"description":"Bad Request: chat not found"}', 'Bad Request: chat not found'],
    ['<html>502 Bad Gateway</html>', '<html>502 Bad Gateway</html>'],
    ['{"other":1}', '{"other":1}'],
  ])('%s → %s', (body, detail) => {
    expect(errorDetail(body)).toBe(detail);
  });
});

describe('isRetryableStatus()', () => {
  it.each([
    [408, true],
    [425, true],
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [409, false],
    [422, false],
  ])('%i → %s', (status, retryable) => {
    expect(isRetryableStatus(status)).toBe(retryable);
    expect(channelErrorForStatus(status, '', '10', NOW).retryAfterMs).toBe(retryable ? 10_000 : undefined);
  });
});

describe('readCapped()', () => {
  it('reads a body up to the cap and reports what was cut', async () => {
    expect(await readCapped(new Response('x'.repeat(100)), 10)).toEqual({ text: 'x'.repeat(10), truncated: true });
    expect(await readCapped(new Response('héllo'), 100)).toEqual({ text: 'héllo', truncated: false });
    expect(await readCapped(new Response(null), 100)).toEqual({ text: '', truncated: false });
  });
});

describe('redact() and shorten()', () => {
  it('removes every occurrence of each secret, ignoring empty or tiny ones', () => {
    expect(redact('key sk-1234 and sk-1234 again; x', ['sk-1234', undefined, 'x'])).toBe('key [redacted] and [redacted] again; x');
  });
  it('puts text on one line and cuts it with an ellipsis', () => {
    expect(shorten('a\n b\t\tc', 10)).toBe('a b c');
    expect(shorten('abcdefghijkl', 5)).toBe('abcd…');
  });
});
