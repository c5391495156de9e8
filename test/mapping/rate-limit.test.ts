/** Per-mapping rate limits: in memory for one instance, in the store's shared windows for several. */
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/mapping/rate-limit.ts';
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
