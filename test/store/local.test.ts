/**
 * The counters and sessions a store one process owns keeps in that process's memory (src/store/local/):
 * bounded, whatever an address or a client sends, on the clock they are given. Their behaviour as roles
 * is the contract's (test/store/contract-shared.ts).
 */
import { describe, expect, it } from 'vitest';
import { LocalCounters } from '../../src/store/local/counters.ts';
import { LocalSessions } from '../../src/store/local/sessions.ts';

describe('LocalCounters', () => {
  it('keeps at most maxKeys windows: ended ones go first, then the oldest', async () => {
    const c = new LocalCounters({ maxKeys: 2 });
    await c.countInWindow('short', 10, 0);
    await c.countInWindow('a', 1_000, 0);
    await c.countInWindow('a', 1_000, 1);
    // 'short' has ended by 20: it goes, 'a' stays with its count
    await c.countInWindow('b', 1_000, 20);
    expect(await c.countInWindow('a', 1_000, 21)).toEqual({ count: 3, start: 0 });
    // none has ended: the oldest window ('a') goes
    await c.countInWindow('c', 1_000, 22);
    expect(await c.countInWindow('b', 1_000, 23)).toEqual({ count: 2, start: 20 });
    expect(await c.countInWindow('a', 1_000, 24)).toEqual({ count: 1, start: 24 });
  });
});

describe('LocalSessions', () => {
  it('lets a value go when its time to live has passed on its clock', async () => {
    let now = 0;
    const s = new LocalSessions({ clock: () => now });
    await s.put('k', 'v', 100, false);
    now = 99;
    expect(await s.get('k')).toBe('v');
    now = 100;
    expect(await s.get('k')).toBeUndefined();
    await s.put('k', 'again', 100, true);
    expect(await s.get('k')).toBeUndefined();
  });

  it('keeps at most maxSessions, dropping the first one put; a value put again keeps its place', async () => {
    const s = new LocalSessions({ maxSessions: 2 });
    await s.put('one', '1', 60_000, false);
    await s.put('two', '2', 60_000, false);
    await s.put('one', '1b', 60_000, true);
    await s.put('three', '3', 60_000, false);
    expect([await s.get('one'), await s.get('two'), await s.get('three')]).toEqual([undefined, '2', '3']);
  });
});
