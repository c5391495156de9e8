import { describe, expect, it } from 'vitest';
import { Fifo } from '../../src/util/fifo.ts';

describe('Fifo', () => {
  it('gives items back in the order they came, across compactions', () => {
    const q = new Fifo<number>();
    const out: number[] = [];
    for (let i = 0; i < 5000; i++) {
      q.push(i);
      if (i % 3 === 0) out.push(q.shift()!);
    }
    while (q.length) out.push(q.shift()!);
    expect(out).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
  });

  it('keeps its length right while pushing and shifting', () => {
    const q = new Fifo<string>();
    q.push('a');
    q.push('b');
    expect(q.length).toBe(2);
    expect(q.shift()).toBe('a');
    expect(q.length).toBe(1);
  });
});
