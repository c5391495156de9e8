/**
 * Token comparison: equal tokens match, anything else does not, and no
 * candidate (of any length) makes the comparison throw.
 */
import { describe, expect, it } from 'vitest';
import { createTokenMatcher } from '../../src/auth/token.ts';

const TOKEN = 'hk_3f9a0c1e2b7d4a6f8e0c1b2a3d4e5f60';

describe('createTokenMatcher()', () => {
  const matcher = createTokenMatcher(TOKEN);

  it('matches the configured token', () => {
    expect(matcher.matches(TOKEN)).toBe(true);
  });

  it.each([
    ['a different token of the same length', TOKEN.replace(/0$/, '1')],
    ['a prefix', TOKEN.slice(0, -1)],
    ['a longer string', `${TOKEN}x`],
    ['another case', TOKEN.toUpperCase()],
    ['surrounding whitespace', ` ${TOKEN}`],
    ['the empty string', ''],
    ['a very long string', 'x'.repeat(100_000)],
    ['non-ASCII text', 'токен'],
  ])('refuses %s', (_what, candidate) => {
    expect(matcher.matches(candidate)).toBe(false);
  });

  it('compares by content, not by identity', () => {
    expect(createTokenMatcher(`${'a'.repeat(3)}b`).matches(['a', 'a', 'a', 'b'].join(''))).toBe(true);
  });
});
