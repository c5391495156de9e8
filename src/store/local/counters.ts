/**
 * Counters in this process's memory (`Counters`), for a store one process owns (SQLite): the windows
 * the Redis driver keeps on its server (lua/counters/countInWindow.lua), kept here in a Map, as cheap as
 * the process's own counting was. At most `maxKeys` windows are kept; a window that has ended is
 * dropped first, then the oldest.
 */
import type { Counters } from '../roles.ts';

interface Window {
  start: number;
  count: number;
  /** When it ends: `windowMs` after its start. */
  end: number;
}

export class LocalCounters implements Counters {
  private readonly windows = new Map<string, Window>();
  private readonly maxKeys: number;

  constructor(opts: { maxKeys?: number } = {}) {
    this.maxKeys = opts.maxKeys ?? 10_000;
  }

  countInWindow(key: string, windowMs: number, now: number): Promise<{ count: number; start: number }> {
    let w = this.windows.get(key);
    if (!w || now - w.start >= windowMs) {
      // a new window goes to the end of the Map, which stays in the order windows started
      if (w) this.windows.delete(key);
      w = { start: now, count: 0, end: now + windowMs };
      this.windows.set(key, w);
      if (this.windows.size > this.maxKeys) this.evict(now);
    }
    w.count++;
    return Promise.resolve({ count: w.count, start: w.start });
  }

  resetCount(key: string): Promise<void> {
    this.windows.delete(key);
    return Promise.resolve();
  }

  /** Drops ended windows from the front (the oldest), and the oldest live ones while there are too many. */
  private evict(now: number): void {
    for (const [k, w] of this.windows) {
      if (this.windows.size <= this.maxKeys && w.end > now) break;
      this.windows.delete(k);
    }
  }
}
