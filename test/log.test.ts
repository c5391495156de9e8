/**
 * Log lines are joined per event-loop turn before they reach standard output
 * (src/log.ts): nothing is lost or reordered, and no write passes 4 KiB
 * unless a single line does.
 */
import { describe, expect, it } from 'vitest';
import { batchLines, MAX_WRITE } from '../src/log.ts';

const turn = () => new Promise((r) => setImmediate(r));

function sink() {
  const writes: string[] = [];
  return { writes, target: { write: (c: string) => void writes.push(c) } };
}

describe('batchLines()', () => {
  it('hands the lines of one turn over on the next, in one write', async () => {
    const { writes, target } = sink();
    const b = batchLines(target);
    b.write('a\n');
    b.write('b\n');
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toEqual(['a\nb\n']);
    b.write('c\n');
    await turn();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('splits at line ends so that no write passes the limit; a longer line goes alone', async () => {
    const { writes, target } = sink();
    const b = batchLines(target, 10);
    for (const l of ['1234\n', '5678\n', 'ab\n', 'x'.repeat(14) + '\n', 'z\n']) b.write(l);
    await turn();
    expect(writes).toEqual(['1234\n5678\n', 'ab\n', 'x'.repeat(14) + '\n', 'z\n']);
  });

  it('counts bytes, not characters', async () => {
    const { writes, target } = sink();
    const b = batchLines(target, 8);
    b.write('üü\n'); // 5 bytes
    b.write('üü\n');
    await turn();
    expect(writes).toEqual(['üü\n', 'üü\n']);
  });

  it('keeps every line, in order, across many turns and the default limit', async () => {
    const { writes, target } = sink();
    const b = batchLines(target);
    const sent: string[] = [];
    for (let t = 0; t < 20; t++) {
      for (let i = 0; i < 50 + t * 10; i++) {
        const l = `{"turn":${t},"i":${i},"pad":"${'p'.repeat((i * 37) % 300)}"}\n`;
        sent.push(l);
        b.write(l);
      }
      await turn();
    }
    expect(writes.join('')).toBe(sent.join(''));
    expect(Math.max(...writes.map((w) => Buffer.byteLength(w)))).toBeLessThanOrEqual(MAX_WRITE);
    expect(writes.every((w) => w.endsWith('\n'))).toBe(true);
  });

  it('flush hands over what is pending at once (the exit hook)', () => {
    const { writes, target } = sink();
    const b = batchLines(target);
    b.write('last\n');
    b.flush();
    expect(writes).toEqual(['last\n']);
  });
});
