/**
 * Per-mapping rate limits (`rateLimit: {max, perSeconds}`): a fixed window per
 * mapping id, shared by all clients. State survives reloads (keyed by id) and
 * starts over when the limit itself is changed.
 */
import type { SharedCounter } from '../store/types.ts';

export interface RateLimiter {
  /** Counts one request; returns seconds to wait when the mapping is over its limit. */
  take(id: string, limit: { max: number; perSeconds: number }, now: number): number | undefined | Promise<number | undefined>;
}

/**
 * With `shared` (a store several instances share), the window is counted there, so the limit holds
 * for the whole service rather than per instance: one round trip per request of a limited mapping.
 */
export function createRateLimiter(shared?: SharedCounter): RateLimiter {
  if (shared)
    return {
      async take(id, limit, now) {
        const span = limit.perSeconds * 1000;
        // a changed limit starts over: it is part of the key
        const w = await shared.countInWindow(`rate:${id}:${limit.max}/${limit.perSeconds}`, span, now);
        return w.count > limit.max ? Math.max(1, Math.ceil((w.start + span - now) / 1000)) : undefined;
      },
    };
  const windows = new Map<string, { start: number; count: number; max: number; perSeconds: number }>();
  return {
    take(id, limit, now) {
      let w = windows.get(id);
      const span = limit.perSeconds * 1000;
      if (!w || w.max !== limit.max || w.perSeconds !== limit.perSeconds || now - w.start >= span) {
        w = { start: now, count: 0, max: limit.max, perSeconds: limit.perSeconds };
        windows.set(id, w);
      }
      if (w.count >= limit.max) return Math.max(1, Math.ceil((w.start + span - now) / 1000));
      w.count++;
      return undefined;
    },
  };
}
