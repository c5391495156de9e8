/**
 * The failed-authentication throttle (docs/http.md, "Authentication") and the once-per-period
 * gate used for the deprecation warning. Time is passed in: no clocks, no sleeps.
 */
import { describe, expect, it } from 'vitest';
import { FailureThrottle, OncePer } from '../../src/auth/throttle.ts';
import { LocalCounters } from '../../src/store/local/counters.ts';

const WINDOW = 60_000;
const T0 = 1_000_000;

/** Records `count` failures for `client` at `at` and returns what the last one answered. */
function failTimes(t: FailureThrottle, client: string, count: number, at = T0): number | undefined {
  let last: number | undefined;
  for (let i = 0; i < count; i++) last = t.fail(client, at);
  return last;
}

describe('FailureThrottle on counters several instances share', () => {
  const settled = () => new Promise((r) => setImmediate(r));

  it('blocks an address whose failures, spread over instances, cross the limit together', async () => {
    const counters = new LocalCounters();
    const [a, b] = [
      new FailureThrottle({ max: 4, windowMs: WINDOW, counters }),
      new FailureThrottle({ max: 4, windowMs: WINDOW, counters }),
    ];
    failTimes(a, 'x', 2);
    failTimes(b, 'x', 2);
    await settled();
    expect(a.blocked('x', T0)).toBeUndefined();
    // the fifth failure in all, on b: b blocks once the shared count is back, and a at its next failure
    b.fail('x', T0);
    await settled();
    expect(b.blocked('x', T0 + 1_000)).toBe(59);
    expect(a.blocked('x', T0 + 1_000)).toBeUndefined();
    a.fail('x', T0 + 1_000);
    await settled();
    expect(a.blocked('x', T0 + 1_000)).toBe(59);
  });

  it('a success resets the shared count too', async () => {
    const counters = new LocalCounters();
    const a = new FailureThrottle({ max: 4, windowMs: WINDOW, counters });
    failTimes(a, 'x', 3);
    await settled();
    a.succeed('x');
    await settled();
    expect(await counters.countInWindow('auth:x', WINDOW, T0)).toEqual({ count: 1, start: T0 });
  });

  it('keeps its own count when the shared counter fails', async () => {
    const a = new FailureThrottle({
      max: 2,
      windowMs: WINDOW,
      counters: { countInWindow: () => Promise.reject(new Error('down')), resetCount: async () => {} },
    });
    expect(failTimes(a, 'x', 3)).toBe(60);
    await settled();
    expect(a.blocked('x', T0)).toBe(60);
  });
});

describe('FailureThrottle', () => {
  it('allows 20 failures and blocks from the 21st, for the rest of the window', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW });
    expect(failTimes(t, '10.0.0.1', 20)).toBeUndefined();
    expect(t.blocked('10.0.0.1', T0)).toBeUndefined();
    expect(t.fail('10.0.0.1', T0)).toBe(60);
    expect(t.blocked('10.0.0.1', T0)).toBe(60);
  });

  it('answers Retry-After as the whole seconds left in the window, at least 1', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW });
    failTimes(t, 'a', 21);
    expect(t.blocked('a', T0 + 15_000)).toBe(45);
    expect(t.blocked('a', T0 + 15_001)).toBe(45); // 44.999 s rounds up
    expect(t.blocked('a', T0 + 59_999)).toBe(1);
  });

  it('unblocks when the window that started with the first failure has passed', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW });
    failTimes(t, 'a', 10, T0);
    failTimes(t, 'a', 11, T0 + 30_000);
    expect(t.blocked('a', T0 + 59_999)).toBe(1);
    expect(t.blocked('a', T0 + WINDOW)).toBeUndefined();
  });

  it('starts counting afresh after the window', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW });
    failTimes(t, 'a', 20, T0);
    expect(t.fail('a', T0 + WINDOW)).toBeUndefined();
    expect(failTimes(t, 'a', 19, T0 + WINDOW)).toBeUndefined();
    expect(t.fail('a', T0 + WINDOW)).toBe(60);
  });

  it('forgets the failures of a client that then succeeds', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW });
    failTimes(t, 'a', 20);
    t.succeed('a');
    expect(failTimes(t, 'a', 20)).toBeUndefined();
    expect(t.blocked('a', T0)).toBeUndefined();
  });

  it('counts each client address separately', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW });
    failTimes(t, 'a', 21);
    expect(t.blocked('a', T0)).toBe(60);
    expect(t.blocked('b', T0)).toBeUndefined();
    expect(t.fail('b', T0)).toBeUndefined();
  });

  it('applies new limits from configure() to later failures', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW });
    failTimes(t, 'a', 5);
    t.configure({ max: 5, windowMs: 10_000 });
    expect(t.fail('a', T0)).toBe(10);
  });

  it('tracks at most maxEntries addresses, dropping expired and then the oldest ones', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW, maxEntries: 1_000 });
    let largest = 0;
    for (let i = 0; i < 100_000; i++) {
      t.fail(`2001:db8::${i.toString(16)}`, T0 + i);
      largest = Math.max(largest, t.size());
    }
    expect(largest).toBe(1_000);
    expect(t.size()).toBe(1_000);
    // the newest addresses are the ones kept
    failTimes(t, '2001:db8::1869f', 20, T0 + 99_999);
    expect(t.blocked('2001:db8::1869f', T0 + 99_999)).toBe(60);
  });

  it('keeps the default bound of 10,000 addresses', () => {
    const t = new FailureThrottle({ max: 20, windowMs: WINDOW });
    for (let i = 0; i < 100_000; i++) t.fail(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, T0);
    expect(t.size()).toBe(10_000);
  });

  it('drops expired entries before live ones when it is full', () => {
    const t = new FailureThrottle({ max: 2, windowMs: WINDOW, maxEntries: 3 });
    t.fail('old', T0);
    failTimes(t, 'blocked', 3, T0 + 30_000);
    t.fail('c', T0 + 30_000);
    t.fail('d', T0 + WINDOW + 1); // 'old' has expired: it goes, 'blocked' stays
    expect(t.size()).toBe(3);
    expect(t.blocked('blocked', T0 + WINDOW + 1)).toBe(30);
  });
});

describe('OncePer', () => {
  it('says yes once per period per key', () => {
    const once = new OncePer(3_600_000);
    expect(once.take('a', T0)).toBe(true);
    expect(once.take('a', T0 + 3_599_999)).toBe(false);
    expect(once.take('b', T0)).toBe(true);
    expect(once.take('a', T0 + 3_600_000)).toBe(true);
    expect(once.take('a', T0 + 3_600_001)).toBe(false);
  });

  it('forgets the oldest keys beyond its bound', () => {
    const once = new OncePer(3_600_000, 2);
    once.take('a', T0);
    once.take('b', T0);
    once.take('c', T0);
    expect(once.take('b', T0)).toBe(false);
    expect(once.take('a', T0)).toBe(true); // forgotten, so allowed again
  });
});
