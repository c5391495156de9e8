/**
 * The roles every driver gives whether one process owns the store or several share it (src/store/roles.ts):
 * counters in fixed windows, console sessions with a time to live, and what a store says of itself. On
 * SQLite they are the process's own (src/store/local/), on Redis the service's; callers use them the same way.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/roles.ts';
import { until } from '../helpers/cli.ts';

export function sharedRolesContract(store: () => Store): void {
  describe('counters', () => {
    it('count in a fixed window per key, start a new window once it has ended, and start over after a reset', async () => {
      const { counters } = store();
      expect(await counters.countInWindow('auth:1.2.3.4', 60_000, 1_000)).toEqual({ count: 1, start: 1_000 });
      expect(await counters.countInWindow('auth:1.2.3.4', 60_000, 2_000)).toEqual({ count: 2, start: 1_000 });
      expect(await counters.countInWindow('auth:5.6.7.8', 60_000, 2_000)).toEqual({ count: 1, start: 2_000 });
      expect(await counters.countInWindow('auth:1.2.3.4', 60_000, 60_999)).toEqual({ count: 3, start: 1_000 });
      expect(await counters.countInWindow('auth:1.2.3.4', 60_000, 61_000)).toEqual({ count: 1, start: 61_000 });
      await counters.resetCount('auth:1.2.3.4');
      expect(await counters.countInWindow('auth:1.2.3.4', 60_000, 62_000)).toEqual({ count: 1, start: 62_000 });
      expect(await counters.countInWindow('auth:5.6.7.8', 60_000, 62_000)).toEqual({ count: 1, start: 62_000 });
    });
  });

  describe('sessions', () => {
    it('keep a value under its key until it is deleted', async () => {
      const { sessions } = store();
      expect(await sessions.get('s1')).toBeUndefined();
      await sessions.put('s1', 'one', 60_000, false);
      await sessions.put('s2', 'two', 60_000, false);
      expect([await sessions.get('s1'), await sessions.get('s2')]).toEqual(['one', 'two']);
      await sessions.put('s1', 'one again', 60_000, false);
      expect(await sessions.get('s1')).toBe('one again');
      await sessions.delete('s1');
      expect([await sessions.get('s1'), await sessions.get('s2')]).toEqual([undefined, 'two']);
    });

    it('update only a value still kept when asked to (a use does not bring back a session signed out meanwhile)', async () => {
      const { sessions } = store();
      await sessions.put('gone', 'x', 60_000, true);
      expect(await sessions.get('gone')).toBeUndefined();
      await sessions.put('kept', 'x', 60_000, false);
      await sessions.put('kept', 'y', 60_000, true);
      expect(await sessions.get('kept')).toBe('y');
    });

    it('let a value go once its time to live has passed', async () => {
      const { sessions } = store();
      await sessions.put('short', 'x', 1, false);
      await sessions.put('long', 'y', 60_000, false);
      await until(async () => (await sessions.get('short')) === undefined);
      expect(await sessions.get('long')).toBe('y');
    });
  });

  describe('the store itself', () => {
    it('says whether several processes share it, and gives its warnings, figures and takeover poll without probing', async () => {
      const s = store();
      expect(typeof s.capabilities.sharedByProcesses).toBe('boolean');
      expect(Array.isArray(await s.startupWarnings())).toBe(true);
      for (const h of s.histograms()) expect(h).toMatchObject({ name: expect.stringMatching(/^hook_intake_/), buckets: expect.any(Array) });
      const stop = s.pollTakeovers(() => {});
      expect(typeof stop).toBe('function');
      stop();
    });
  });
}
