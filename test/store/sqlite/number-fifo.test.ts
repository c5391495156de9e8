import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NumberFifo } from '../../../src/store/sqlite/number-fifo.ts';

describe('NumberFifo', () => {
  it('gives numbers back in the order they came, across growing, wrapping and shrinking', () => {
    const q = new NumberFifo();
    const out: number[] = [];
    const pushed: number[] = [];
    // every other integer: none follows the one before it, so each takes a slot of its own
    const push = () => {
      const n = pushed.length * 2;
      pushed.push(n);
      q.push(n);
    };
    // grow past several doublings while the head moves, so the ring wraps before each resize
    for (let i = 0; i < 20_000; i++) {
      push();
      if (i % 3 === 0) out.push(q.shift()!);
    }
    const peak = q.capacity;
    expect(peak).toBeGreaterThanOrEqual(q.length);
    while (q.length > 10) out.push(q.shift()!);
    // worked off: the buffer shrank back with it
    expect(q.capacity).toBeLessThan(peak);
    for (let i = 0; i < 3000; i++) push();
    while (q.length) out.push(q.shift()!);
    expect(out).toEqual(pushed);
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
  });

  it('starts with the slots asked for and shrinks back to them', () => {
    const q = new NumberFifo(8);
    expect(q.capacity).toBe(8);
    for (let i = 0; i < 100; i++) q.push(i * 2);
    expect(q.capacity).toBe(128);
    const out: number[] = [];
    while (q.length) out.push(q.shift()!);
    expect(out).toEqual(Array.from({ length: 100 }, (_, i) => i * 2));
    expect(q.capacity).toBe(8);
  });

  it('holds rowids beyond 32 bits exactly', () => {
    const q = new NumberFifo();
    q.push(2 ** 40 + 3);
    q.push(Number.MAX_SAFE_INTEGER);
    expect([q.shift(), q.shift()]).toEqual([2 ** 40 + 3, Number.MAX_SAFE_INTEGER]);
  });

  it('keeps a million consecutive integers in its smallest buffer', () => {
    const q = new NumberFifo();
    const start = 2 ** 33;
    for (let i = 0; i < 1_000_000; i++) q.push(start + i);
    expect(q.length).toBe(1_000_000);
    expect(q.capacity).toBe(1024);
    let expected = start;
    let bad = 0;
    for (let v = q.shift(); v !== undefined; v = q.shift()) if (v !== expected++) bad++;
    expect(bad).toBe(0);
    expect(expected).toBe(start + 1_000_000);
    expect(q.length).toBe(0);
  });

  it('gives back any mix of runs and jumps, pushed and shifted in any order, as a plain queue would', () => {
    // each step: push a run of `len` integers `gap` after the last one pushed, then shift `take`
    const step = fc.record({
      gap: fc.integer({ min: 1, max: 3 }),
      len: fc.integer({ min: 1, max: 700 }),
      take: fc.integer({ min: 0, max: 900 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const q = new NumberFifo();
        const model: number[] = [];
        const out: number[] = [];
        const expected: number[] = [];
        let last = -1;
        for (const { gap, len, take } of steps) {
          for (let i = 0; i < len; i++) {
            last += i === 0 ? gap : 1;
            q.push(last);
            model.push(last);
          }
          for (let i = 0; i < take && model.length; i++) {
            expected.push(model.shift()!);
            out.push(q.shift()!);
          }
          if (q.length !== model.length) return false;
        }
        while (model.length) expected.push(model.shift()!);
        while (q.length) out.push(q.shift()!);
        return q.shift() === undefined && out.length === expected.length && out.every((v, i) => v === expected[i]);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses what is not a non-negative integer', () => {
    const q = new NumberFifo();
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => q.push(bad)).toThrow(RangeError);
    expect(q.length).toBe(0);
  });
});
