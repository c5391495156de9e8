/**
 * Failed-authentication throttle per client address (docs/http.md, "Authentication"): more than
 * `max` failures within `windowMs` of the first one block that address until
 * the window passes. A success resets the count. Memory is bounded: at most
 * `maxEntries` addresses are tracked, expired ones are dropped first. Each
 * failure is counted in the store's counters too (`ThrottleOptions.counters`),
 * which on a store several instances share are the service's.
 */
import { LocalCounters } from '../store/local/counters.ts';
import type { Counters } from '../store/roles.ts';

export interface ThrottleOptions {
  max: number;
  windowMs: number;
  maxEntries?: number;
  /**
   * The store's counters (`Store.counters`; counters of its own when absent). Each failure is counted
   * there too, without waiting: their count, once it comes back, replaces the local one, so on a store
   * several instances share (Redis) an address spreading its failures over instances is blocked by each
   * once it has seen one of them after the total crossed the limit.
   */
  counters?: Counters;
}

interface Entry {
  count: number;
  start: number;
}

export class FailureThrottle {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly counters: Counters;
  private opts: ThrottleOptions;

  constructor(opts: ThrottleOptions) {
    this.opts = opts;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.counters = opts.counters ?? new LocalCounters();
  }

  /** New limits apply to later failures (config reload). */
  configure(opts: Omit<ThrottleOptions, 'counters'>): void {
    this.opts = { ...opts, maxEntries: this.maxEntries };
  }

  /** Seconds to wait when `client` is blocked now, else undefined. */
  blocked(client: string, now: number): number | undefined {
    const e = this.entries.get(client);
    if (!e) return undefined;
    if (now - e.start >= this.opts.windowMs) {
      this.entries.delete(client);
      return undefined;
    }
    return e.count > this.opts.max ? this.retryAfter(e, now) : undefined;
  }

  /** Records a failure; returns seconds to wait when this failure crosses the limit. */
  fail(client: string, now: number): number | undefined {
    let e = this.entries.get(client);
    if (!e || now - e.start >= this.opts.windowMs) {
      if (e) this.entries.delete(client);
      e = { count: 0, start: now };
      this.entries.set(client, e);
      if (this.entries.size > this.maxEntries) this.evict(now);
    }
    e.count++;
    this.share(client, e, now);
    return e.count > this.opts.max ? this.retryAfter(e, now) : undefined;
  }

  /** Counts the failure in the store's window and takes its count (and start) for this address's entry. */
  private share(client: string, e: Entry, now: number): void {
    this.counters.countInWindow(`auth:${client}`, this.opts.windowMs, now).then(
      (w) => {
        // the entry may have been reset (a success) or replaced (a new window) meanwhile
        if (this.entries.get(client) !== e || w.count < e.count) return;
        e.count = w.count;
        e.start = w.start;
      },
      () => {
        // the store cannot be reached: this instance's own count still holds
      },
    );
  }

  succeed(client: string): void {
    if (this.entries.size && this.entries.delete(client)) this.counters.resetCount(`auth:${client}`).catch(() => {});
  }

  size(): number {
    return this.entries.size;
  }

  private retryAfter(e: Entry, now: number): number {
    return Math.max(1, Math.ceil((e.start + this.opts.windowMs - now) / 1000));
  }

  private evict(now: number): void {
    // An entry is (re)inserted when its window starts, so Map order is window
    // order: expired entries come first. Drop from the front while an entry has
    // expired or there are still too many, and stop at the first live one, so a
    // full map costs O(1) per failure instead of a scan of every entry.
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.maxEntries && now - e.start < this.opts.windowMs) break;
      this.entries.delete(k);
    }
  }
}

/** Remembers when something was last done per key, at most once per `everyMs` (bounded). */
export class OncePer {
  private readonly seen = new Map<string, number>();
  private readonly everyMs: number;
  private readonly maxEntries: number;
  constructor(everyMs: number, maxEntries = 10_000) {
    this.everyMs = everyMs;
    this.maxEntries = maxEntries;
  }

  /** True when `key` has not been seen within `everyMs`; records it. */
  take(key: string, now: number): boolean {
    const last = this.seen.get(key);
    if (last !== undefined && now - last < this.everyMs) return false;
    this.seen.delete(key);
    this.seen.set(key, now);
    if (this.seen.size > this.maxEntries) {
      for (const k of this.seen.keys()) {
        this.seen.delete(k);
        if (this.seen.size <= this.maxEntries) break;
      }
    }
    return true;
  }
}
