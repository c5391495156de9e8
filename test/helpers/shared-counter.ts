/** A SharedCounter in memory, as the Redis driver's behaves: one per "store", shared by the instances given it. */
import type { SharedCounter } from '../../src/store/types.ts';

export function memoryCounter(): SharedCounter & { windows: Map<string, { start: number; count: number }> } {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    windows,
    async countInWindow(key, windowMs, now) {
      let w = windows.get(key);
      if (!w || now - w.start >= windowMs) windows.set(key, (w = { start: now, count: 0 }));
      w.count++;
      return { ...w };
    },
    async resetCount(key) {
      windows.delete(key);
    },
  };
}
