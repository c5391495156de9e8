import { describe, expect, it } from 'vitest';
import { NumberFifo } from '../../src/util/number-fifo.ts';

describe('NumberFifo', () => {
  it('gives numbers back in the order they came, across growing, wrapping and shrinking', () => {
    const q = new NumberFifo();
    const out: number[] = [];
    let next = 0;
    // grow past several doublings while the head moves, so the ring wraps before each resize
    for (let i = 0; i < 20_000; i++) {
      q.push(next++);
      if (i % 3 === 0) out.push(q.shift()!);
    }
    const peak = q.capacity;
    expect(peak).toBeGreaterThanOrEqual(q.length);
    while (q.length > 10) out.push(q.shift()!);
    // worked off: the buffer shrank back with it
    expect(q.capacity).toBeLessThan(peak);
    for (let i = 0; i < 3000; i++) q.push(next++);
    while (q.length) out.push(q.shift()!);
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
  });

  it('holds rowids beyond 32 bits exactly', () => {
    const q = new NumberFifo();
    q.push(2 ** 40 + 3);
    q.push(Number.MAX_SAFE_INTEGER);
    expect([q.shift(), q.shift()]).toEqual([2 ** 40 + 3, Number.MAX_SAFE_INTEGER]);
  });
});
