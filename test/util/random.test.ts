import { describe, expect, it } from 'vitest';
import { randomHex } from '../../src/util/random.ts';

describe('randomHex()', () => {
  it('returns two hex digits per byte', () => {
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    expect(randomHex(1)).toMatch(/^[0-9a-f]{2}$/);
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });

  it('never repeats across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) seen.add(randomHex(8));
    expect(seen.size).toBe(5000);
  });
});
