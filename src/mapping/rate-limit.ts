/**
 * Per-mapping rate limits (`rateLimit: {max, perSeconds}`): a fixed window per
 * mapping id, shared by all clients. State survives reloads (keyed by id) and
 * starts over when the limit itself is changed.
 */
export interface RateLimiter {
  /** Counts one request; returns seconds to wait when the mapping is over its limit. */
  take(id: string, limit: { max: number; perSeconds: number }, now: number): number | undefined;
}

export function createRateLimiter(): RateLimiter {
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
