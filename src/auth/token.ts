/**
 * Constant-time token comparison. Both sides are hashed first so the compare
 * takes the same time whatever the candidate's length, and the configured
 * token's digest is computed once per generation, not per request.
 */
import { hash, timingSafeEqual } from 'node:crypto';

export interface TokenMatcher {
  matches(candidate: string): boolean;
}

// one-shot hash: no Hash object per request
const digest = (s: string) => hash('sha256', s, 'buffer');

export function createTokenMatcher(token: string): TokenMatcher {
  const expected = digest(token);
  return {
    matches(candidate) {
      return timingSafeEqual(digest(candidate), expected);
    },
  };
}

/** A short, stable name for a token in the admin log: the first 16 hex digits of its SHA-256, never the token. */
export function tokenFingerprint(token: string): string {
  return hash('sha256', token, 'hex').slice(0, 16);
}
