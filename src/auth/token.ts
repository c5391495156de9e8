/**
 * Constant-time token comparison. Both sides are hashed first so the compare
 * takes the same time whatever the candidate's length, and the configured
 * token's digest is computed once per generation, not per request.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export interface TokenMatcher {
  matches(candidate: string): boolean;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export function createTokenMatcher(token: string): TokenMatcher {
  const expected = digest(token);
  return {
    matches(candidate) {
      return timingSafeEqual(digest(candidate), expected);
    },
  };
}
