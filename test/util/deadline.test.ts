/** settlesWithin / stopWithin: wait for work in flight, then give up (and abort) at the deadline. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { settlesWithin, stopWithin } from '../../src/util/deadline.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A promise settled from outside. */
function pending<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('settlesWithin()', () => {
  it('is true when the work settles before the deadline, and leaves no timer behind', async () => {
    const w = pending();
    const r = settlesWithin(w.promise, 1_000);
    await vi.advanceTimersByTimeAsync(999);
    w.resolve();
    expect(await r).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('counts a rejection as settled', async () => {
    const w = pending();
    const r = settlesWithin(w.promise, 1_000);
    w.reject(new Error('boom'));
    expect(await r).toBe(true);
  });

  it('is false once the deadline passes first', async () => {
    const r = settlesWithin(new Promise(() => {}), 1_000);
    let result: boolean | undefined;
    void r.then((v) => (result = v));
    await vi.advanceTimersByTimeAsync(999);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toBe(false);
  });
});

describe('stopWithin()', () => {
  it('does not abort work that ends in time', async () => {
    const w = pending();
    const abort = vi.fn();
    const r = stopWithin(w.promise, 1_000, abort);
    await vi.advanceTimersByTimeAsync(500);
    w.resolve();
    expect(await r).toBe(true);
    expect(abort).not.toHaveBeenCalled();
  });

  it('aborts work still running at the deadline, then waits for it to end', async () => {
    const w = pending();
    const abort = vi.fn(() => w.reject(new Error('aborted')));
    let result: boolean | undefined;
    void stopWithin(w.promise, 1_000, abort).then((v) => (result = v));
    await vi.advanceTimersByTimeAsync(999);
    expect(abort).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(abort).toHaveBeenCalledOnce();
    expect(result).toBe(false);
  });

  it('resolves only once the aborted work has settled', async () => {
    const w = pending();
    let result: boolean | undefined;
    void stopWithin(w.promise, 0, () => {}).then((v) => (result = v));
    await vi.advanceTimersByTimeAsync(10);
    expect(result).toBeUndefined();
    w.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(result).toBe(false);
  });
});
