/**
 * Per-mapping rate limits (`rateLimit: {max, perSeconds}`): a fixed window per
 * mapping id, shared by all clients, counted in the store's counters (`Store.counters`:
 * the process's on SQLite, the service's on Redis). State survives reloads (keyed by
 * id) and starts over when the limit itself is changed (the limit is part of the key).
 */
import type { Counters } from '../store/roles.ts';

export interface RateLimiter {
  /** Counts one request; returns seconds to wait when the mapping is over its limit. */
  take(id: string, limit: { max: number; perSeconds: number }, now: number): Promise<number | undefined>;
}

export function createRateLimiter(counters: Counters): RateLimiter {
  return {
    async take(id, limit, now) {
      const span = limit.perSeconds * 1000;
      const w = await counters.countInWindow(`rate:${id}:${limit.max}/${limit.perSeconds}`, span, now);
      return w.count > limit.max ? Math.max(1, Math.ceil((w.start + span - now) / 1000)) : undefined;
    },
  };
}
