/**
 * Many deadlines under one timer (src/util/deadlines.ts): each item expires
 * at its own deadline and not before, a shorter deadline added later is
 * honoured, deleted items never expire, and the timer never keeps the process
 * alive. Fake timers and a fake clock: no sleeps.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Deadlines, type Entry } from '../../src/util/deadlines.ts';
import { rng } from '../helpers/rng.ts';

function watch() {
  const expired: string[] = [];
  const d = new Deadlines<string>((name) => expired.push(name));
  const add = (name: string, inMs: number): Entry<string> => d.add(name, performance.now() + inMs);
  return { d, expired, add };
}

describe('Deadlines', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('expires an item at its deadline, not before', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { d, expired, add } = watch();
    add('a', 1000);
    vi.advanceTimersByTime(999);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    expect(d.size).toBe(0);
  });

  it('honours a shorter deadline added after a longer one', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { expired, add } = watch();
    add('long', 10_000);
    add('short', 50);
    vi.advanceTimersByTime(50);
    expect(expired).toEqual(['short']);
    vi.advanceTimersByTime(9_949);
    expect(expired).toEqual(['short']);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['short', 'long']);
  });

  it('never expires a deleted item, and clear forgets everything', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { d, expired, add } = watch();
    const a = add('a', 100);
    add('b', 200);
    d.delete(a);
    d.delete(a); // twice: nothing more
    expect(d.size).toBe(1);
    vi.advanceTimersByTime(150);
    expect(expired).toEqual([]);
    add('c', 100);
    d.clear();
    vi.advanceTimersByTime(1_000);
    expect(expired).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('expires each of many items at its own time, whatever the order they came in', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const random = rng(20261122);
    const { d, expired, add } = watch();
    const due = new Map<string, number>();
    const deleted = new Set<string>();
    const live: Entry<string>[] = [];
    const start = performance.now();
    for (let i = 0; i < 500; i++) {
      // added over time, with deadlines 1 ms to 2 s away; some are done early
      vi.advanceTimersByTime(Math.floor(random() * 3));
      const name = `i${i}`;
      const entry = add(name, 1 + Math.floor(random() * 2000));
      due.set(name, entry.deadline);
      live.push(entry);
      if (random() < 0.2) {
        // any entry not expired yet: the newest, the oldest or one in between
        const at = Math.floor(random() * live.length);
        const victim = live[at]!;
        live.splice(at, 1);
        if (!expired.includes(victim.item)) {
          d.delete(victim);
          deleted.add(victim.item);
        }
      }
    }
    // step through time one millisecond at a time: what has expired is exactly what is due
    for (let t = performance.now(); t <= start + 4000; t++) {
      vi.advanceTimersByTime(1);
      const now = performance.now();
      const shouldHave = [...due].filter(([n, at]) => at <= now && !deleted.has(n)).map(([n]) => n);
      expect(new Set(expired)).toEqual(new Set(shouldHave));
    }
    expect(expired.length).toBe(500 - deleted.size);
    expect(d.size).toBe(0);
  });

  it('keeps no timer that holds the process open', () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { d, add } = watch();
    add('a', 60_000);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
    d.clear();
  });
});
