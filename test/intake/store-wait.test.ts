/** A request's time on the store (docs/redis.md, "Timeouts"): its store calls share one budget, past which they fail as a timeout. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreWait } from '../../src/intake/store-wait.ts';
import { StorageTimeoutError, StorageUnavailableError } from '../../src/store/errors.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A store call that answers only when told to. */
function held<T>() {
  let answer!: (v: T) => void;
  const p = new Promise<T>((r) => (answer = r));
  return { p, answer };
}

describe('StoreWait.within()', () => {
  it('gives the call its answer when it comes in time, with the deadline on Date.now’s clock', async () => {
    const wait = new StoreWait(5);
    const deadlines: number[] = [];
    const v = wait.within(async (deadline) => {
      deadlines.push(deadline);
      return 'stored';
    });
    await expect(v).resolves.toBe('stored');
    expect(deadlines[0]).toBe(Date.now() + 5000);
  });

  it('gives an answer that comes just in time', async () => {
    const call = held<string>();
    const v = new StoreWait(5).within(() => call.p);
    await vi.advanceTimersByTimeAsync(4999);
    call.answer('stored');
    await expect(v).resolves.toBe('stored');
  });

  it('fails a call still waiting when the time runs out, as a storage failure a 503 answers', async () => {
    const call = held<string>();
    const err = new StoreWait(5).within(() => call.p).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5000);
    expect(await err).toBeInstanceOf(StorageTimeoutError);
    expect(await err).toBeInstanceOf(StorageUnavailableError);
    expect(String(await err)).toMatch(/no answer within 5 s \(storage\.timeoutSeconds\)/);
  });

  it('shares one budget between the calls of a request: the second gets what the first left', async () => {
    const wait = new StoreWait(5);
    const first = held<void>();
    const a = wait.within(() => first.p);
    await vi.advanceTimersByTimeAsync(3000);
    first.answer();
    await a;
    const second = held<void>();
    const deadlines: number[] = [];
    const b = wait
      .within((d) => {
        deadlines.push(d);
        return second.p;
      })
      .catch((e: unknown) => e);
    expect(deadlines[0]).toBe(Date.now() + 2000);
    await vi.advanceTimersByTimeAsync(2000);
    expect(await b).toBeInstanceOf(StorageTimeoutError);
  });

  it('does not make a call once the time is out', async () => {
    const wait = new StoreWait(1);
    await vi.advanceTimersByTimeAsync(1000);
    const call = vi.fn(async () => 'x');
    await expect(wait.within(call)).rejects.toBeInstanceOf(StorageTimeoutError);
    expect(call).not.toHaveBeenCalled();
  });

  it('passes on the call’s own failure', async () => {
    const boom = new StorageUnavailableError('disk full');
    await expect(new StoreWait(5).within(() => Promise.reject(boom))).rejects.toBe(boom);
  });
});
