/**
 * RecycledMap and RecycledSet behave as a Map and a Set do, across the copies they make of
 * themselves every RECYCLE_AFTER deletions: same entries, same order, same answers. (What the
 * copies are for, memory under load, is measured by the benchmarks, not here.)
 */
import { describe, expect, it } from 'vitest';
import { RECYCLE_AFTER, RecycledMap, RecycledSet } from '../../src/util/recycled.ts';
import { rng } from '../helpers/rng.ts';

describe('RecycledMap', () => {
  it('answers as a Map does over random sets and deletes, and a clear, spanning several copies', () => {
    const next = rng(7);
    const real = new Map<string, number>();
    const ours = new RecycledMap<string, number>();
    const ops = RECYCLE_AFTER * 16;
    for (let i = 0; i < ops; i++) {
      const key = `k${Math.floor(next() * 40)}`;
      const r = next();
      if (i === ops / 2) {
        ours.clear();
        real.clear();
      } else if (r < 0.5) {
        expect(ours.set(key, i)).toBe(ours);
        real.set(key, i);
      } else expect(ours.delete(key)).toBe(real.delete(key));
      expect(ours.size).toBe(real.size);
      expect(ours.get(key)).toBe(real.get(key));
      expect(ours.has(key)).toBe(real.has(key));
      if (i % 97 === 0) {
        // insertion order survives the copies
        expect([...ours]).toEqual([...real]);
        expect([...ours.keys()]).toEqual([...real.keys()]);
        expect([...ours.values()]).toEqual([...real.values()]);
        expect([...ours.entries()]).toEqual([...real.entries()]);
      }
    }
    expect([...ours]).toEqual([...real]);
  });

  it('keeps entries that outlive many copies, and forgets deleted ones', () => {
    const m = new RecycledMap<number, string>();
    m.set(-1, 'kept');
    for (let i = 0; i < RECYCLE_AFTER * 3 + 5; i++) {
      m.set(i, 'x');
      expect(m.delete(i)).toBe(true);
      expect(m.delete(i)).toBe(false);
    }
    expect([...m]).toEqual([[-1, 'kept']]);
  });
});

describe('RecycledSet', () => {
  it('answers as a Set does over random adds and deletes, and a clear, spanning several copies', () => {
    const next = rng(11);
    const real = new Set<number>();
    const ours = new RecycledSet<number>();
    const ops = RECYCLE_AFTER * 16;
    for (let i = 0; i < ops; i++) {
      const v = Math.floor(next() * 30);
      const r = next();
      if (i === ops / 2) {
        ours.clear();
        real.clear();
      } else if (r < 0.5) {
        expect(ours.add(v)).toBe(ours);
        real.add(v);
      } else expect(ours.delete(v)).toBe(real.delete(v));
      expect(ours.size).toBe(real.size);
      expect(ours.has(v)).toBe(real.has(v));
      if (i % 89 === 0) {
        expect([...ours]).toEqual([...real]);
        expect([...ours.values()]).toEqual([...real.values()]);
      }
    }
    expect([...ours]).toEqual([...real]);
  });
});
