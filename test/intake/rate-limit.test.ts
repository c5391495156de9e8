/** Per-mapping rate limits, counted in a store's counters (here the in-process ones SQLite gives; Redis's in test/store/). */
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/intake/rate-limit.ts';
import { LocalCounters } from '../../src/store/local/counters.ts';

const LIMIT = { max: 3, perSeconds: 10 };
const T0 = 1_000_000;

describe('createRateLimiter()', () => {
  it('takes max requests per window, then says how long to wait', async () => {
    const l = createRateLimiter(new LocalCounters());
    for (let i = 0; i < 3; i++) expect(await l.take('m', LIMIT, T0)).toBeUndefined();
    expect(await l.take('m', LIMIT, T0 + 4_000)).toBe(6);
    expect(await l.take('m', LIMIT, T0 + 10_000)).toBeUndefined();
  });

  it('on counters several limiters share, the limit holds for all of them together, and a changed limit starts over', async () => {
    const counters = new LocalCounters();
    const [a, b] = [createRateLimiter(counters), createRateLimiter(counters)];
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

describe('createRateLimiter(): the fixed window, on the clock the caller passes', () => {
  const takes = async (l: ReturnType<typeof createRateLimiter>, id: string, times: number[], limit = WINDOW) => {
    const out = [];
    for (const t of times) out.push(await l.take(id, limit, t));
    return out;
  };

  it('takes max requests in a window, then says how many whole seconds are left, at least 1', async () => {
    const l = createRateLimiter(new LocalCounters());
    expect(await takes(l, 'a', [0, 10, 20, 30, 1000, 1999])).toEqual([undefined, undefined, undefined, 2, 1, 1]);
  });

  it('serves again once the window that began with the first request has passed', async () => {
    const l = createRateLimiter(new LocalCounters());
    expect(await takes(l, 'a', [0, 1, 2, 1999, 2000, 2001, 2002, 2003])).toEqual([
      undefined,
      undefined,
      undefined,
      1,
      undefined,
      undefined,
      undefined,
      2,
    ]);
  });

  it('keeps a window per mapping id', async () => {
    const l = createRateLimiter(new LocalCounters());
    expect(await takes(l, 'a', [0, 1, 2, 3])).toEqual([undefined, undefined, undefined, 2]);
    expect(await l.take('b', WINDOW, 3)).toBeUndefined();
  });

  it('starts over when the limit itself changes', async () => {
    const l = createRateLimiter(new LocalCounters());
    expect(await takes(l, 'a', [0, 1, 2, 3])).toEqual([undefined, undefined, undefined, 2]);
    expect(await l.take('a', { max: 4, perSeconds: 2 }, 4)).toBeUndefined();
  });
});
