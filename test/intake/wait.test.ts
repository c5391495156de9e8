/**
 * The wait step's waits (src/intake/wait.ts, docs/waiting.md): a wait ends when its run and the run's delivery ended,
 * when its time limit passes, or when the service stops; waits share one read per word; places are bounded. On
 * vitest's fake timers and a store whose runs the test sets, told of ends through the in-process `RunEnds`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type WaitEnd, Waits } from '../../src/intake/wait.ts';
import type { RunEnds } from '../../src/store/roles.ts';
import type { Run, RunDelivery } from '../../src/store/types.ts';
import { newRun } from '../helpers/records.ts';
import { captureLogger } from '../helpers/runtime.ts';

const run = (id: string, status: Run['status'], delivery: RunDelivery['status']): Run => ({
  ...newRun({ id }),
  status,
  attempts: 1,
  startedAt: 1,
  finishedAt: status === 'ok' ? 2 : null,
  reply: 'done',
  summary: null,
  error: null,
  usage: null,
  forwarded: null,
  delivery: { status: delivery, reason: null, channel: null, to: null, attempts: delivery === 'sent' ? 1 : 0 },
});

let runs: Map<string, Run>;
let reads: number;
let failReads: boolean;
let ends: ReturnType<typeof fakeEnds>;
let waits: Waits;
const log = captureLogger('warn');
const store = { getRun: async (id: string) => (reads++, failReads ? Promise.reject(new Error('down')) : runs.get(id)) };
/** Word of runs that ended, which the test gives (`tell`); undefined: anything may have ended. */
function fakeEnds() {
  const listeners = new Set<(runId: string | undefined) => void>();
  return {
    listen: async (fn: (runId: string | undefined) => void) => {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    tell: (runId: string | undefined) => {
      for (const fn of listeners) fn(runId);
    },
  };
}
/** Lets the reads and listens already started settle. */
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  runs = new Map([['r1', run('r1', 'running', 'pending')]]);
  reads = 0;
  failReads = false;
  ends = fakeEnds();
  waits = new Waits({ runs: store, ends, logger: log.logger, max: 2 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Waits.wait()', () => {
  it('ends once the run finished and its delivery ended, not while the delivery is still to be sent', async () => {
    const ended: WaitEnd[] = [];
    void waits.wait('r1', 60_000).then((e) => ended.push(e));
    await settle();
    runs.set('r1', run('r1', 'ok', 'pending'));
    ends.tell('r1');
    await settle();
    expect(ended).toEqual([]);
    runs.set('r1', run('r1', 'ok', 'sent'));
    ends.tell('r1');
    await settle();
    expect(ended).toEqual([{ kind: 'ended', run: runs.get('r1') }]);
  });

  it('ends at once for a run that ended before it began', async () => {
    runs.set('r1', run('r1', 'ok', 'sent'));
    await expect(waits.wait('r1', 60_000)).resolves.toMatchObject({ kind: 'ended' });
  });

  it('ends at its time limit, and every wait for one run ends with the same run', async () => {
    const first = waits.wait('r1', 1_000);
    const second = waits.wait('r1', 5_000);
    await settle();
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(first).resolves.toEqual({ kind: 'timeout' });
    runs.set('r1', run('r1', 'ok', 'sent'));
    const third = waits.wait('r1', 5_000);
    ends.tell('r1');
    const [a, b] = await Promise.all([second, third]);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ kind: 'ended' });
  });

  it('reads only the runs it waits for, and every one of them when word may have been missed', async () => {
    runs.set('r2', run('r2', 'running', 'pending'));
    const one = waits.wait('r1', 60_000);
    const two = waits.wait('r2', 60_000);
    await settle();
    const before = reads;
    ends.tell('not-waited');
    await settle();
    expect(reads).toBe(before);
    runs.set('r1', run('r1', 'ok', 'sent'));
    runs.set('r2', run('r2', 'error', 'skipped'));
    ends.tell(undefined);
    await expect(Promise.all([one, two])).resolves.toMatchObject([{ kind: 'ended' }, { kind: 'ended' }]);
  });

  it('goes on waiting when a read fails, until told again', async () => {
    const end = waits.wait('r1', 60_000);
    failReads = true;
    runs.set('r1', run('r1', 'ok', 'sent'));
    await settle();
    expect(log.text()).toContain('reading a waited run failed');
    failReads = false;
    ends.tell('r1');
    await expect(end).resolves.toMatchObject({ kind: 'ended' });
  });

  it('ends at once when it cannot listen, and listens again for the next wait', async () => {
    let calls = 0;
    const flaky: RunEnds = { listen: (fn) => (++calls === 1 ? Promise.reject(new Error('no connection')) : ends.listen(fn)) };
    waits = new Waits({ runs: store, ends: flaky, logger: log.logger });
    await expect(waits.wait('r1', 60_000)).resolves.toEqual({ kind: 'timeout' });
    expect(log.text()).toContain('cannot follow the run a request waits for');
    const next = waits.wait('r1', 60_000);
    await settle();
    runs.set('r1', run('r1', 'ok', 'sent'));
    ends.tell('r1');
    await expect(next).resolves.toMatchObject({ kind: 'ended' });
    expect(calls).toBe(2);
  });
});

describe('Waits places and stop', () => {
  it('refuses a place past the cap with 503 and Retry-After, and gives it again once released', () => {
    waits.reserve();
    waits.reserve();
    expect(() => waits.reserve()).toThrow(expect.objectContaining({ status: 503, code: 'UNAVAILABLE', headers: { 'Retry-After': '5' } }));
    waits.release();
    waits.reserve();
    expect(waits.waiting).toBe(2);
  });

  it('ends every wait at a stop, ends later ones at once, and refuses new places', async () => {
    const a = waits.wait('r1', 60_000);
    const b = waits.wait('r1', 60_000);
    await settle();
    waits.stop();
    await expect(Promise.all([a, b])).resolves.toEqual([{ kind: 'stopping' }, { kind: 'stopping' }]);
    await expect(waits.wait('r1', 60_000)).resolves.toEqual({ kind: 'stopping' });
    expect(() => waits.reserve()).toThrow(expect.objectContaining({ status: 503, code: 'SHUTTING_DOWN' }));
  });
});
