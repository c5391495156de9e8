/** Per-mapping rate limits: in memory for one instance, in the store's shared windows for several. */
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/intake/rate-limit.ts';
import { memoryCounter } from '../helpers/shared-counter.ts';

const LIMIT = { max: 3, perSeconds: 10 };
const T0 = 1_000_000;

describe('createRateLimiter()', () => {
  it('in memory: takes max requests per window, then says how long to wait', () => {
    const l = createRateLimiter();
    expect([1, 2, 3].map(() => l.take('m', LIMIT, T0))).toEqual([undefined, undefined, undefined]);
    expect(l.take('m', LIMIT, T0 + 4_000)).toBe(6);
    expect(l.take('m', LIMIT, T0 + 10_000)).toBeUndefined();
  });

  it('shared: the limit holds for all instances together, and a changed limit starts over', async () => {
    const counter = memoryCounter();
    const [a, b] = [createRateLimiter(counter), createRateLimiter(counter)];
    expect(await a.take('m', LIMIT, T0)).toBeUndefined();
    expect(await b.take('m', LIMIT, T0)).toBeUndefined();
    expect(await a.take('m', LIMIT, T0)).toBeUndefined();
    expect(await b.take('m', LIMIT, T0 + 4_000)).toBe(6);
    expect(await a.take('other', LIMIT, T0 + 4_000)).toBeUndefined();
    expect(await a.take('m', { max: 4, perSeconds: 10 }, T0 + 4_000)).toBeUndefined();
    expect(await b.take('m', LIMIT, T0 + 10_000)).toBeUndefined();
  });
});

const WINDOW = { max: 3, perSeconds: 2 };

describe('createRateLimiter() in memory: the fixed window, on the clock the caller passes', () => {
  it('takes max requests in a window, then says how many whole seconds are left, at least 1', () => {
    const l = createRateLimiter();
    expect([0, 10, 20].map((t) => l.take('a', WINDOW, t))).toEqual([undefined, undefined, undefined]);
    expect(l.take('a', WINDOW, 30)).toBe(2);
    expect(l.take('a', WINDOW, 1000)).toBe(1);
    expect(l.take('a', WINDOW, 1999)).toBe(1);
  });

  it('serves again once the window that began with the first request has passed', () => {
    const l = createRateLimiter();
    for (const t of [0, 1, 2]) l.take('a', WINDOW, t);
    expect(l.take('a', WINDOW, 1999)).toBe(1);
    expect(l.take('a', WINDOW, 2000)).toBeUndefined();
    expect(l.take('a', WINDOW, 2001)).toBeUndefined();
    expect(l.take('a', WINDOW, 2002)).toBeUndefined();
    expect(l.take('a', WINDOW, 2003)).toBe(2);
  });

  it('keeps a window per mapping id', () => {
    const l = createRateLimiter();
    for (const t of [0, 1, 2]) l.take('a', WINDOW, t);
    expect(l.take('a', WINDOW, 3)).toBe(2);
    expect(l.take('b', WINDOW, 3)).toBeUndefined();
  });

  it('starts over when the limit itself changes', () => {
    const l = createRateLimiter();
    for (const t of [0, 1, 2]) l.take('a', WINDOW, t);
    expect(l.take('a', WINDOW, 3)).toBe(2);
    expect(l.take('a', { max: 4, perSeconds: 2 }, 4)).toBeUndefined();
  });
});
