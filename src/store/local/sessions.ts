/**
 * Console sessions in this process's memory (`Sessions`), for a store one process owns (SQLite): the
 * values the Redis driver keeps with a time to live, kept here in a Map and gone after theirs, on the
 * store's clock. At most `maxSessions` are kept; the first signed in goes first.
 */
import type { Sessions } from '../roles.ts';

interface Kept {
  value: string;
  until: number;
}

export class LocalSessions implements Sessions {
  private readonly kept = new Map<string, Kept>();
  private readonly clock: () => number;
  private readonly maxSessions: number;

  constructor(opts: { clock?: () => number; maxSessions?: number } = {}) {
    this.clock = opts.clock ?? Date.now;
    this.maxSessions = opts.maxSessions ?? 1000;
  }

  put(key: string, value: string, ttlMs: number, onlyIfKept: boolean): Promise<void> {
    const until = this.clock() + ttlMs;
    const e = this.live(key);
    if (e) {
      // an existing key keeps its place: the order is sign-in order
      e.value = value;
      e.until = until;
    } else if (!onlyIfKept) {
      this.kept.set(key, { value, until });
      for (const k of this.kept.keys()) {
        if (this.kept.size <= this.maxSessions) break;
        this.kept.delete(k);
      }
    }
    return Promise.resolve();
  }

  get(key: string): Promise<string | undefined> {
    return Promise.resolve(this.live(key)?.value);
  }

  delete(key: string): Promise<void> {
    this.kept.delete(key);
    return Promise.resolve();
  }

  private live(key: string): Kept | undefined {
    const e = this.kept.get(key);
    if (e && e.until <= this.clock()) {
      this.kept.delete(key);
      return undefined;
    }
    return e;
  }
}
