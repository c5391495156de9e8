/**
 * Log lines are joined per event-loop turn before they reach standard output
 * (src/log.ts): nothing is lost or reordered, and no write passes `MAX_WRITE`
 * unless a single line does. `printStdout` shares the logs' writer. Each line's
 * time is the clock's, to the millisecond.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchLines, createLogger, MAX_WRITE } from '../src/log.ts';
import { ROOT } from './helpers/cli.ts';

const turn = () => new Promise((r) => setImmediate(r));

function sink() {
  const writes: string[] = [];
  return { writes, target: { write: (c: string) => void writes.push(c) } };
}

describe('createLogger() times', () => {
  afterEach(() => vi.useRealTimers());

  it('stamps each line with the clock of its own millisecond, in ISO form', () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (s: string) => void lines.push(s) });
    const t0 = Date.UTC(2026, 10, 22, 8, 30, 0, 997);
    vi.useFakeTimers({ now: t0, toFake: ['Date'] });
    log.info('a');
    log.info('b');
    vi.setSystemTime(t0 + 4);
    log.info('c');
    vi.setSystemTime(t0 - 1000); // a clock stepped back
    log.info('d');
    expect(lines.map((l) => JSON.parse(l).time)).toEqual([
      '2026-11-22T08:30:00.997Z',
      '2026-11-22T08:30:00.997Z',
      '2026-11-22T08:30:01.001Z',
      '2026-11-22T08:29:59.997Z',
    ]);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['a', 'b', 'c', 'd']);
  });
});

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
    for (const l of ['1234\n', '5678\n', 'ab\n', `${'x'.repeat(14)}\n`, 'z\n']) b.write(l);
    await turn();
    expect(writes).toEqual(['1234\n5678\n', 'ab\n', `${'x'.repeat(14)}\n`, 'z\n']);
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

describe('printStdout()', () => {
  it('shares the log writer: blocks printed between log lines come after the lines logged before them, whole and in order', async () => {
    // a child process whose standard output is a pipe, as under a supervisor: 40 turns of 200 log lines each
    // (over 64 KiB a turn, so a turn takes more than one write), a multi-line block printed in each turn
    const script = `
      import { createLogger, printStdout } from ${JSON.stringify(join(ROOT, 'src/log.ts'))};
      const log = createLogger('info');
      for (let t = 0; t < 40; t++) {
        for (let i = 0; i < 200; i++) log.info({ t, i, pad: 'p'.repeat(150 + (i % 150)) }, 'line');
        printStdout('[block ' + t + ']\\n' + 'x'.repeat(3000) + '\\n[end ' + t + ']\\n');
        await new Promise((r) => setImmediate(r));
      }
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b));
    const code = await new Promise((r) => child.on('close', r));
    expect(code).toBe(0);
    const lines = out.split('\n').slice(0, -1);
    const logs = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { t: number; i: number });
    expect(logs.map((l) => l.t * 200 + l.i)).toEqual(Array.from({ length: 8000 }, (_, k) => k));
    for (let t = 0; t < 40; t++) {
      const at = lines.indexOf(`[block ${t}]`);
      expect(lines.slice(at + 1, at + 3)).toEqual(['x'.repeat(3000), `[end ${t}]`]);
      expect(lines[at - 1]).toContain(`"t":${t},"i":199,`);
    }
    expect(lines.filter((l) => !l.startsWith('{') && !/^(\[block \d+\]|x+|\[end \d+\])$/.test(l))).toEqual([]);
  });
});
