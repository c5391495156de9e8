/**
 * The debounce of the config watcher (src/util/debounce.ts): one call per burst, with every path
 * noted in it, after the burst's last note; on vitest's fake timers (docs/development.md, "Time").
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { debouncePaths } from '../../src/util/debounce.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('debouncePaths()', () => {
  it('calls once per burst, debounceMs after its last note, with every path noted in it', () => {
    const calls: string[][] = [];
    const d = debouncePaths((paths) => calls.push(paths), 150);
    d.note('a.ts');
    vi.advanceTimersByTime(100);
    d.note('b.ts');
    vi.advanceTimersByTime(100);
    d.note('sub/c.ts');
    d.note('a.ts');
    vi.advanceTimersByTime(149);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual([['a.ts', 'b.ts', 'sub/c.ts']]);
    vi.advanceTimersByTime(10_000);
    expect(calls).toHaveLength(1);
    // a later burst is a call of its own, with only its paths
    d.note('d.ts');
    vi.advanceTimersByTime(150);
    expect(calls).toEqual([['a.ts', 'b.ts', 'sub/c.ts'], ['d.ts']]);
  });

  it('says when a burst begins, once, before the call', () => {
    const events: string[] = [];
    const d = debouncePaths(
      () => events.push('call'),
      150,
      () => events.push('burst'),
    );
    d.note('a.ts');
    d.note('b.ts');
    vi.advanceTimersByTime(150);
    d.note('c.ts');
    expect(events).toEqual(['burst', 'call', 'burst']);
  });

  it('calls nothing after cancel(), not even for the burst being gathered', () => {
    const calls: string[][] = [];
    const d = debouncePaths((paths) => calls.push(paths), 150);
    d.note('a.ts');
    d.cancel();
    d.note('b.ts');
    vi.advanceTimersByTime(10_000);
    expect(calls).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
