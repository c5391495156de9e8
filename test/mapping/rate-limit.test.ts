/**
 * Per-mapping rate limits: a fixed window per mapping id, on the clock the caller passes.
 */
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/mapping/rate-limit.ts';

const LIMIT = { max: 3, perSeconds: 2 };

describe('createRateLimiter()', () => {
  it('takes max requests in a window, then says how many whole seconds are left, at least 1', () => {
    const l = createRateLimiter();
    expect([0, 10, 20].map((t) => l.take('a', LIMIT, t))).toEqual([undefined, undefined, undefined]);
    expect(l.take('a', LIMIT, 30)).toBe(2);
    expect(l.take('a', LIMIT, 1000)).toBe(1);
    expect(l.take('a', LIMIT, 1999)).toBe(1);
  });

  it('serves again once the window that began with the first request has passed', () => {
    const l = createRateLimiter();
    for (const t of [0, 1, 2]) l.take('a', LIMIT, t);
    expect(l.take('a', LIMIT, 1999)).toBe(1);
    expect(l.take('a', LIMIT, 2000)).toBeUndefined();
    expect(l.take('a', LIMIT, 2001)).toBeUndefined();
    expect(l.take('a', LIMIT, 2002)).toBeUndefined();
    expect(l.take('a', LIMIT, 2003)).toBe(2);
  });

  it('keeps a window per mapping id', () => {
    const l = createRateLimiter();
    for (const t of [0, 1, 2]) l.take('a', LIMIT, t);
    expect(l.take('a', LIMIT, 3)).toBe(2);
    expect(l.take('b', LIMIT, 3)).toBeUndefined();
  });

  it('starts over when the limit itself changes', () => {
    const l = createRateLimiter();
    for (const t of [0, 1, 2]) l.take('a', LIMIT, t);
    expect(l.take('a', LIMIT, 3)).toBe(2);
    expect(l.take('a', { max: 4, perSeconds: 2 }, 4)).toBeUndefined();
  });
});
