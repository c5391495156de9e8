/**
 * The transform worker pool (docs/transforms.md, "Worker threads" and "Deadline"): modules loaded once per worker with
 * the export rules, results as plain data, deadlines that terminate a stuck
 * worker while the pool keeps serving, load errors naming the module, and an
 * elastic size (grows when a call waits, shrinks back when idle).
 *
 * Calls that must stay busy block on a SharedArrayBuffer the test releases,
 * so no test depends on how fast the machine is.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  createTransformPool,
  createWorkerSource,
  TransformCallError,
  TransformLoadError,
  type TransformPool,
  type TransformSpec,
} from '../../src/transforms/pool.ts';
import { cleanup, tempDir, until } from '../helpers/cli.ts';

const dir = realpathSync(tempDir('hook-intake-pool-'));
const MODULES: Record<string, string> = {
  'default.ts': `export default (ctx: { n: number }) => ({ message: 'default ' + ctx.n });`,
  'named.mjs': `export function transform(ctx) { return { message: 'named ' + ctx.n }; }`,
  'both.ts': `export default () => ({ message: 'from default' }); export const transform = () => ({ message: 'from transform' }); export const pick = () => ({ message: 'from pick' });`,
  'fn.cjs': `module.exports = function (ctx) { return { message: 'cjs fn ' + ctx.n }; };`,
  'obj.cjs': `module.exports = { transform: (ctx) => ({ message: 'cjs object ' + ctx.n }) };`,
  'exports.cjs': `exports.transform = (ctx) => ({ message: 'cjs exports ' + ctx.n }); exports.other = () => ({ message: 'cjs other' });`,
  'enum.ts': `enum Kind { Wake = 'wake' } export default () => ({ kind: Kind.Wake, text: 'from an enum' });`,
  'helper.ts': `export const greet = (n: number): string => 'helped ' + n;`,
  'imports.ts': `import { greet } from './helper'; export default (ctx: { n: number }) => ({ message: greet(ctx.n) });`,
  // numbers the start and the end of each run in a buffer the test shares; answers later when asked (a promise or another thenable)
  'seq.mjs': `export default (ctx) => {
      const c = new Int32Array(ctx.counter);
      const start = Atomics.add(c, 0, 1);
      const end = () => ({ message: start + '-' + Atomics.add(c, 0, 1) });
      if (ctx.wait) return new Promise((r) => setTimeout(() => r(end()), 2));
      if (ctx.thenable) return { then: (r) => setTimeout(() => r(end()), 2) };
      return end();
    };`,
  'async.mjs': `export default async (ctx) => { await new Promise((r) => setTimeout(r, 1)); return ctx.n % 2 ? null : { message: 'even ' + ctx.n }; };`,
  'throws.ts': `export default () => { throw new TypeError('card declined'); };`,
  'rejects.mjs': `export default async () => { throw new Error('async refusal'); };`,
  'throws-string.mjs': `export default () => { throw 'a bare string'; };`,
  'clone.mjs': `export default () => ({ message: 'x', callback: () => 1 });`,
  'symbol.mjs': `export default () => Symbol('s');`,
  'stuck.mjs': `export default () => { for (;;) {} };`,
  'never.mjs': `export default () => new Promise(() => {});`,
  'crash.mjs': `export default () => { setTimeout(() => { throw new Error('thrown later'); }, 0); return { message: 'returned first' }; };`,
  'exits.mjs': `export default (ctx) => { if (ctx.exit) process.exit(3); return { message: 'done ' + ctx.n }; };`,
  // blocks its worker until the test sets the shared flag
  'block.mjs': `export default (ctx) => { Atomics.wait(new Int32Array(ctx.flag), 0, 0); return { message: 'released ' + ctx.n }; };`,
  // counts its runs in a buffer the test shares
  'count.mjs': `export default (ctx) => { Atomics.add(new Int32Array(ctx.counter), 0, 1); return { message: 'counted ' + ctx.n }; };`,
  // counts its runs too; and a call that carries a gate makes the worker's thread block in a timer right after
  // it answers (marking the gate's second slot), until the test opens the gate: calls sent meanwhile reach the
  // worker's port but none of them starts
  'late.mjs': `export default (ctx) => {
      if (ctx.gate) {
        const g = new Int32Array(ctx.gate);
        setTimeout(() => { Atomics.store(g, 1, 1); Atomics.wait(g, 0, 0); }, 0);
        return { message: 'armed' };
      }
      Atomics.add(new Int32Array(ctx.counter), 0, 1);
      return { message: 'ran ' + ctx.n };
    };`,
  // answers, then marks the shared flag from a timer, which runs only after the answer was sent
  'marks.mjs': `export default (ctx) => {
      setTimeout(() => Atomics.store(new Int32Array(ctx.flag), 0, 1), 0);
      return { message: 'marked ' + ctx.n };
    };`,
  // waits until the shared step count reaches its n: the test lets calls finish one at a time
  'step.mjs': `export default (ctx) => {
      const c = new Int32Array(ctx.steps);
      for (let v = Atomics.load(c, 0); v < ctx.n; v = Atomics.load(c, 0)) Atomics.wait(c, 0, v);
      return { message: 'step ' + ctx.n };
    };`,
  'syntax.ts': `export default (ctx => ({ message: 'broken' `,
  'no-export.mjs': `export const something = 1;`,
  'load-throws.mjs': `throw new Error('refusing to load');`,
  // whether jiti was loaded in this worker
  'probe.mjs': `import { createRequire } from 'node:module';
    export default () => ({ jiti: Object.keys(createRequire(import.meta.url).cache).some((k) => /jiti/.test(k)) });`,
};
for (const [f, src] of Object.entries(MODULES)) writeFileSync(join(dir, f), src);
mkdirSync(join(dir, 'sub'));

const spec = (file: string, exportName?: string): TransformSpec => ({
  key: exportName ? `${file}#${exportName}` : file,
  file: join(dir, file),
  ...(exportName ? { exportName } : {}),
});
// modules Node loads itself: a worker for these never loads jiti, which would cost each of them its start
const ALL_GOOD = [
  'default.ts',
  'named.mjs',
  'both.ts',
  'fn.cjs',
  'obj.cjs',
  'exports.cjs',
  'async.mjs',
  'throws.ts',
  'rejects.mjs',
  'throws-string.mjs',
  'clone.mjs',
  'symbol.mjs',
  'stuck.mjs',
  'never.mjs',
  'crash.mjs',
  'exits.mjs',
  'block.mjs',
].map((f) => spec(f));
const NAMED = [spec('both.ts', 'pick'), spec('both.ts', 'transform'), spec('exports.cjs', 'other')];

const pools: TransformPool[] = [];
async function pool(
  specs: TransformSpec[] = ALL_GOOD,
  opts: Partial<Parameters<typeof createTransformPool>[1]> = {},
): Promise<TransformPool> {
  const p = await createTransformPool(specs, { max: 1, ...opts });
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});
afterAll(() => cleanup(dir));

const nap = new Int32Array(new SharedArrayBuffer(4));
/**
 * Holds this thread (no turn of the event loop, so no timer or answer is handled) until `done()` and
 * at least `minMs` since `from`: a scenario that needs the main thread busy. Gives up after 20 s, so a
 * broken worker fails the test (its caller checks `done()` again) instead of hanging it.
 */
function holdThread(done: () => boolean, from: number, minMs: number): void {
  const giveUp = performance.now() + 20_000;
  while ((!done() || performance.now() - from < minMs) && performance.now() < giveUp) Atomics.wait(nap, 0, 0, 1);
}

/** A flag a `block.mjs` call waits on, and its release. */
function gate() {
  // slot 0: opened; slot 1: free for a transform to mark that it is waiting (late.mjs)
  const flag = new SharedArrayBuffer(8);
  return {
    flag,
    open: () => {
      const a = new Int32Array(flag);
      Atomics.store(a, 0, 1);
      Atomics.notify(a, 0);
    },
  };
}

async function callError(p: Promise<unknown>): Promise<TransformCallError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TransformCallError);
  return err as TransformCallError;
}

describe('createTransformPool()', () => {
  describe('loaders', () => {
    it('loads jiti in a worker only when Node cannot load one of its modules', async () => {
      const native = await pool([spec('probe.mjs'), spec('default.ts'), spec('fn.cjs')]);
      expect(await native.call('probe.mjs', [{}], 5000)).toEqual([{ jiti: false }]);
      const mixed = await pool([spec('probe.mjs'), spec('enum.ts')]);
      expect(await mixed.call('probe.mjs', [{}], 5000)).toEqual([{ jiti: true }]);
      expect(await mixed.call('enum.ts', [{}], 5000)).toEqual([{ kind: 'wake', text: 'from an enum' }]);
    });
  });

  describe('exports', () => {
    it.each([
      ['a default export', 'default.ts', 'default 1'],
      ['an export named transform', 'named.mjs', 'named 1'],
      ['default before transform', 'both.ts', 'from default'],
      ['CommonJS module.exports = function', 'fn.cjs', 'cjs fn 1'],
      ['CommonJS module.exports = { transform }', 'obj.cjs', 'cjs object 1'],
      ['CommonJS exports.transform', 'exports.cjs', 'cjs exports 1'],
      ['TypeScript importing a file without its extension', 'imports.ts', 'helped 1'],
    ])('calls %s', async (_what, file, message) => {
      const p = await pool([spec(file)]);
      expect(await p.call(file, [{ n: 1 }], 5000)).toEqual([{ message }]);
    });

    it('loads TypeScript that type stripping cannot run (an enum)', async () => {
      const p = await pool([spec('enum.ts')]);
      expect(await p.call('enum.ts', [{}], 5000)).toEqual([{ kind: 'wake', text: 'from an enum' }]);
    });

    it('calls the export named by transform.export', async () => {
      const p = await pool(NAMED);
      expect(await p.call('both.ts#pick', [{}], 5000)).toEqual([{ message: 'from pick' }]);
      expect(await p.call('both.ts#transform', [{}], 5000)).toEqual([{ message: 'from transform' }]);
      expect(await p.call('exports.cjs#other', [{}], 5000)).toEqual([{ message: 'cjs other' }]);
    });
  });

  it('runs calls sent together one after another, in order, whether their transforms answer at once or later', async () => {
    const p = await pool([spec('seq.mjs')]);
    const counter = new SharedArrayBuffer(4);
    const kinds = [{ wait: true }, {}, { thenable: true }, {}, {}, { wait: true }, {}];
    const results = await Promise.all(kinds.map((k) => p.call('seq.mjs', [{ counter, ...k }], 5000)));
    expect(results).toEqual(kinds.map((_, i) => [{ message: `${2 * i}-${2 * i + 1}` }]));
    // and the worker takes the next calls as before
    expect(await p.call('seq.mjs', [{ counter }, { counter, wait: true }], 5000)).toEqual([{ message: '14-15' }, { message: '16-17' }]);
  });

  it('runs every context of a call in order and returns the results in order, awaiting async ones', async () => {
    const p = await pool();
    expect(await p.call('async.mjs', [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }], 5000)).toEqual([
      null,
      { message: 'even 2' },
      null,
      { message: 'even 4' },
    ]);
  });

  it('returns a call on a key it does not know as an error', async () => {
    const p = await pool();
    expect((await callError(p.call('nope', [{}], 5000))).message).toBe('transform nope is not loaded');
  });

  describe('load errors', () => {
    it.each([
      ['a syntax error', 'syntax.ts', undefined, /^cannot load: [^\n]+$/, 1],
      ['a module that throws while loading', 'load-throws.mjs', undefined, /^cannot load: refusing to load$/, 1],
      [
        'a module without a usable export',
        'no-export.mjs',
        undefined,
        /^exports neither a default function nor a function named "transform"$/,
        undefined,
      ],
      ['a missing named export', 'default.ts', 'shape', /^has no function export "shape"$/, undefined],
    ])('fail the pool for %s, naming the module (and the line)', async (_what, file, exportName, message, line) => {
      const bad = spec(file, exportName);
      const err = await createTransformPool([spec('default.ts'), bad], { max: 1 }).then(
        (p) => {
          pools.push(p);
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TransformLoadError);
      const e = err as TransformLoadError;
      expect(e.errors).toHaveLength(1);
      expect(e.errors[0]!.key).toBe(bad.key);
      expect(e.errors[0]!.message).toMatch(message);
      expect(e.errors[0]!.line).toBe(line);
      expect(e.message).toContain(`${bad.key}: `);
    });

    it('reports every broken module at once', async () => {
      const err = (await createTransformPool([spec('syntax.ts'), spec('default.ts'), spec('no-export.mjs')], { max: 1 }).catch(
        (e: unknown) => e,
      )) as TransformLoadError;
      expect(err.errors.map((e) => e.key)).toEqual(['syntax.ts', 'no-export.mjs']);
    });
  });

  describe('failures of a call', () => {
    it('returns the message and the stack of a throwing transform', async () => {
      const p = await pool();
      const err = await callError(p.call('throws.ts', [{}], 5000));
      expect(err.timedOut).toBe(false);
      expect(err.detail).toBe('card declined');
      expect(err.stack).toContain('TypeError: card declined');
      expect(err.stack).toContain(join(dir, 'throws.ts'));
    });

    it('returns the reason of a rejected promise and of a thrown non-error', async () => {
      const p = await pool();
      expect((await callError(p.call('rejects.mjs', [{}], 5000))).detail).toBe('async refusal');
      expect((await callError(p.call('throws-string.mjs', [{}], 5000))).detail).toBe('a bare string');
    });

    it.each([
      ['a function inside an object', 'clone.mjs'],
      ['a symbol', 'symbol.mjs'],
    ])('refuses a result that is not plain data: %s', async (_what, file) => {
      const p = await pool();
      expect((await callError(p.call(file, [{}], 5000))).detail).toMatch(/^the transform returned a value that is not plain data: /);
    });

    it('keeps serving after a failed call, on the same worker', async () => {
      const p = await pool();
      await callError(p.call('throws.ts', [{}], 5000));
      expect(await p.call('default.ts', [{ n: 2 }], 5000)).toEqual([{ message: 'default 2' }]);
      expect(p.stats()).toMatchObject({ workers: 1, restarts: 0 });
    });

    it('replaces a worker that crashes from an error thrown later, failing the call it was running', async () => {
      const crashes: Error[] = [];
      const p = await pool(ALL_GOOD, { onWorkerError: (e) => crashes.push(e) });
      // the result may or may not get out before the timer fires: either way the worker goes
      await p.call('crash.mjs', [{}], 5000).catch(() => undefined);
      await until(() => crashes.length > 0 && p.stats().restarts === 1 && p.stats().workers === 1);
      expect(crashes[0]!.message).toBe('thrown later');
      expect(await p.call('default.ts', [{ n: 3 }], 5000)).toEqual([{ message: 'default 3' }]);
    });

    it('keeps the answers a worker sent before it exited: only the call that ended it fails', async () => {
      const p = await pool();
      // one turn, so one message: the worker answers the first two, then exits during the third
      const done = [p.call('exits.mjs', [{ n: 1 }], 10_000), p.call('exits.mjs', [{ n: 2 }], 10_000)];
      const exits = p.call('exits.mjs', [{ exit: true }], 10_000);
      const after = p.call('exits.mjs', [{ n: 4 }], 10_000);
      expect(await Promise.all(done)).toEqual([[{ message: 'done 1' }], [{ message: 'done 2' }]]);
      expect((await callError(exits)).detail).toBe('transform worker exited');
      // never started on the worker that exited: run once on its replacement
      expect(await after).toEqual([{ message: 'done 4' }]);
      expect(p.stats()).toMatchObject({ workers: 1, restarts: 1, queued: 0 });
    });
  });

  describe('deadlines', () => {
    it('terminates a worker stuck in a synchronous loop, and the pool keeps serving', async () => {
      const p = await pool();
      const err = await callError(p.call('stuck.mjs', [{}], 100));
      expect(err.timedOut).toBe(true);
      expect(err.detail).toBe('timed out after 100 ms');
      expect(await p.call('default.ts', [{ n: 4 }], 5000)).toEqual([{ message: 'default 4' }]);
      expect(p.stats()).toMatchObject({ workers: 1, restarts: 1 });
    });

    it('fails only the stuck call among calls sent to the worker together in one turn', async () => {
      const p = await pool();
      // made in one turn of the event loop, so they reach the worker in one message
      const before = p.call('default.ts', [{ n: 1 }], 10_000);
      const stuck = p.call('stuck.mjs', [{}], 200);
      const after = p.call('default.ts', [{ n: 2 }], 10_000);
      expect(await before).toEqual([{ message: 'default 1' }]);
      expect((await callError(stuck)).detail).toBe('timed out after 200 ms');
      // never started on the stuck worker: run once on its replacement
      expect(await after).toEqual([{ message: 'default 2' }]);
      expect(p.stats()).toMatchObject({ workers: 1, restarts: 1, queued: 0 });
    });

    it('a call answered while the main thread was busy past its deadline resolves: its answer waited behind the timer', async () => {
      const p = await pool([spec('marks.mjs')]);
      const flag = new SharedArrayBuffer(4);
      const from = performance.now();
      const call = p.call('marks.mjs', [{ flag, n: 5 }], 100);
      // let the call go out (the pool sends on the next turn), then hold the main thread until the
      // worker has sent its answer and the deadline has passed, however slow the machine is
      await new Promise((r) => setImmediate(r));
      holdThread(() => Atomics.load(new Int32Array(flag), 0) === 1, from, 150);
      expect(Atomics.load(new Int32Array(flag), 0)).toBe(1);
      expect(await call).toEqual([{ message: 'marked 5' }]);
      expect(p.stats()).toMatchObject({ workers: 1, restarts: 0 });
    });

    it('holds no timer that keeps the process alive once calls are answered, and watches a shorter deadline that comes later', async () => {
      const p = await pool(ALL_GOOD, { max: 1 });
      const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const before = timers();
      expect(await p.call('default.ts', [{ n: 7 }], 60_000)).toEqual([{ message: 'default 7' }]);
      // the count is the whole process's: a timer an earlier test left may end meanwhile, never one more
      expect(timers()).toBeLessThanOrEqual(before);
      // a long deadline first, then a short one behind it: the short one fails on its own time
      const g = gate();
      const busy = p.call('block.mjs', [{ flag: g.flag, n: 2 }], 60_000);
      const err = await callError(p.call('default.ts', [{ n: 8 }], 50));
      expect(err.detail).toBe('timed out after 50 ms waiting for a free worker');
      g.open();
      expect(await busy).toEqual([{ message: 'released 2' }]);
    });

    it('fails a promise that never settles', async () => {
      const p = await pool();
      expect((await callError(p.call('never.mjs', [{}], 50))).timedOut).toBe(true);
    });

    it('counts from when the call was queued: a call waiting for a busy worker times out', async () => {
      const p = await pool(ALL_GOOD, { max: 1 });
      const g = gate();
      const busy = p.call('block.mjs', [{ flag: g.flag, n: 1 }], 10_000);
      const err = await callError(p.call('default.ts', [{ n: 1 }], 50));
      expect(err.timedOut).toBe(true);
      expect(err.detail).toBe('timed out after 50 ms waiting for a free worker');
      expect(p.stats().queued).toBe(0);
      g.open();
      expect(await busy).toEqual([{ message: 'released 1' }]);
    });
  });

  describe('size', () => {
    it('starts with one worker', async () => {
      const p = await pool(ALL_GOOD, { max: 4 });
      expect(p.stats()).toEqual({ workers: 1, busy: 0, queued: 0, restarts: 0, scaledUp: 0 });
    });

    it('starts min workers when asked', async () => {
      const p = await pool([spec('default.ts')], { min: 2, max: 4 });
      expect(p.stats().workers).toBe(2);
    });

    it('grows when a call waits for a busy worker, and shrinks back when idle', async () => {
      const p = await pool(ALL_GOOD, { max: 3, scaleAfterMs: 10, idleMs: 50 });
      const g = gate();
      const busy = p.call('block.mjs', [{ flag: g.flag, n: 1 }], 10_000);
      // served by a second worker while the first is blocked
      expect(await p.call('default.ts', [{ n: 5 }], 10_000)).toEqual([{ message: 'default 5' }]);
      expect(p.stats()).toMatchObject({ workers: 2, busy: 1, scaledUp: 1 });
      g.open();
      expect(await busy).toEqual([{ message: 'released 1' }]);
      await until(() => p.stats().workers === 1);
      expect(p.stats()).toMatchObject({ workers: 1, busy: 0, restarts: 0 });
      expect(await p.call('default.ts', [{ n: 6 }], 5000)).toEqual([{ message: 'default 6' }]);
    });

    it('moves calls sent ahead behind a blocked call to another worker, and runs each exactly once', async () => {
      const p = await pool([...ALL_GOOD, spec('count.mjs')], { max: 2, scaleAfterMs: 10, idleMs: 60_000 });
      const g = gate();
      const counter = new SharedArrayBuffer(4);
      const busy = p.call('block.mjs', [{ flag: g.flag, n: 1 }], 10_000);
      const counted = [1, 2, 3].map((n) => p.call('count.mjs', [{ counter, n }], 10_000));
      // all three finish while the first worker is still blocked
      expect(await Promise.all(counted)).toEqual([1, 2, 3].map((n) => [{ message: `counted ${n}` }]));
      expect(Atomics.load(new Int32Array(counter), 0)).toBe(3);
      g.open();
      await busy;
      // the blocked worker, free again, skips the calls taken back from it
      expect(await p.call('count.mjs', [{ counter, n: 4 }], 10_000)).toEqual([{ message: 'counted 4' }]);
      expect(await p.call('count.mjs', [{ counter, n: 5 }], 10_000)).toEqual([{ message: 'counted 5' }]);
      expect(Atomics.load(new Int32Array(counter), 0)).toBe(5);
    });

    it('answers a call whose worker was slow to start it when the calls behind it are taken back', async () => {
      const p = await pool([spec('late.mjs')], { max: 2, scaleAfterMs: 10, idleMs: 60_000 });
      const g = gate();
      const counter = new SharedArrayBuffer(4);
      // the worker blocks between two messages: the next one waits on its port, none of its calls started
      expect(await p.call('late.mjs', [{ gate: g.flag }], 10_000)).toEqual([{ message: 'armed' }]);
      await until(() => Atomics.load(new Int32Array(g.flag), 1) === 1);
      const first = p.call('late.mjs', [{ counter, n: 1 }], 10_000);
      const behind = [2, 3, 4].map((n) => p.call('late.mjs', [{ counter, n }], 10_000));
      // the three behind it are taken back and answered by a second worker
      expect(await Promise.all(behind)).toEqual([2, 3, 4].map((n) => [{ message: `ran ${n}` }]));
      expect(p.stats().scaledUp).toBe(1);
      g.open();
      // the first call still runs where it was sent, and is answered long before its deadline
      expect(await first).toEqual([{ message: 'ran 1' }]);
      expect(Atomics.load(new Int32Array(counter), 0)).toBe(4);
      // both workers take calls again, and nothing taken back runs twice
      expect(await Promise.all([5, 6, 7, 8].map((n) => p.call('late.mjs', [{ counter, n }], 10_000)))).toEqual(
        [5, 6, 7, 8].map((n) => [{ message: `ran ${n}` }]),
      );
      expect(Atomics.load(new Int32Array(counter), 0)).toBe(8);
      expect(p.stats()).toMatchObject({ workers: 2, restarts: 0 });
    });

    it('does not count a call sent ahead as slow while its worker keeps answering the calls before it', async () => {
      // 40 calls: 32 go to the worker at once, 8 wait in the pool; each finishes 10 ms after the one before,
      // so the last calls sent are answered 400 ms or more after they were sent (past scaleAfterMs, where
      // the old rule took them back and grew the pool), but the worker is never stuck
      const p = await pool([spec('step.mjs')], { max: 2, scaleAfterMs: 300, idleMs: 60_000 });
      const steps = new SharedArrayBuffer(4);
      const counter = new Int32Array(steps);
      const calls = Array.from({ length: 40 }, (_, i) => p.call('step.mjs', [{ steps, n: i + 1 }], 60_000));
      for (let n = 1; n <= calls.length; n++) {
        Atomics.store(counter, 0, n);
        Atomics.notify(counter, 0);
        expect(await calls[n - 1]).toEqual([{ message: `step ${n}` }]);
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(p.stats()).toMatchObject({ workers: 1, scaledUp: 0 });
    });

    it('takes the answers already on the ports before it judges a worker slow', async () => {
      const p = await pool([spec('count.mjs')], { max: 2, scaleAfterMs: 30, idleMs: 60_000 });
      const counter = new SharedArrayBuffer(4);
      const calls = Array.from({ length: 40 }, (_, n) => p.call('count.mjs', [{ counter, n }], 60_000));
      // the first 32 go to the worker on the next turn; then this thread is busy past scaleAfterMs while
      // the worker answers them all, and the pool's check runs before their events
      await new Promise((r) => setImmediate(r));
      holdThread(() => Atomics.load(new Int32Array(counter), 0) >= 32, performance.now(), 80);
      expect(Atomics.load(new Int32Array(counter), 0)).toBeGreaterThanOrEqual(32);
      expect((await Promise.all(calls)).map((r) => r[0])).toEqual(calls.map((_, n) => ({ message: `counted ${n}` })));
      expect(p.stats()).toMatchObject({ workers: 1, scaledUp: 0 });
    });

    it('never grows past max', async () => {
      const p = await pool(ALL_GOOD, { max: 2, scaleAfterMs: 5 });
      const gates = [gate(), gate(), gate()];
      const calls = gates.map((g, i) => p.call('block.mjs', [{ flag: g.flag, n: i }], 10_000));
      await until(() => p.stats().busy === 2);
      // the third call keeps waiting, and the pool stays at two
      await new Promise((r) => setTimeout(r, 50));
      expect(p.stats()).toMatchObject({ workers: 2, busy: 2, queued: 1 });
      for (const g of gates) g.open();
      expect((await Promise.all(calls)).map((r) => r[0])).toEqual([0, 1, 2].map((n) => ({ message: `released ${n}` })));
    });

    it('starts no spare in its worker source when it grows, and one when it replaces a worker', async () => {
      const source = createWorkerSource(1);
      try {
        const p = await pool(ALL_GOOD, { max: 3, scaleAfterMs: 10, idleMs: 60_000, source });
        const g = gate();
        const busy = p.call('block.mjs', [{ flag: g.flag, n: 1 }], 10_000);
        // served by a second worker, taken from the source without a spare for the next
        expect(await p.call('default.ts', [{ n: 5 }], 10_000)).toEqual([{ message: 'default 5' }]);
        expect(p.stats()).toMatchObject({ workers: 2, scaledUp: 1 });
        expect(source.spares()).toBe(0);
        g.open();
        await busy;
      } finally {
        await source.close();
      }
      const other = createWorkerSource(1);
      try {
        const p = await pool(ALL_GOOD, { max: 1, source: other });
        expect(other.spares()).toBe(0);
        // a worker stopped by a deadline is replaced, and that take starts a spare
        expect((await callError(p.call('stuck.mjs', [{}], 100))).timedOut).toBe(true);
        await until(() => p.stats().restarts === 1 && other.spares() === 1);
      } finally {
        await other.close();
      }
    });

    it('draws its workers from a worker source', async () => {
      const source = createWorkerSource(1);
      try {
        const p = await pool([spec('default.ts')], { source });
        expect(await p.call('default.ts', [{ n: 7 }], 5000)).toEqual([{ message: 'default 7' }]);
      } finally {
        await source.close();
      }
    });
  });

  /** Stand-ins for workers: what the source starts (with the compiler or not), tells them, and ends. */
  interface Fake {
    compiler: boolean;
    messages: unknown[];
    ended: boolean;
  }
  const fakes = () => {
    const started: Fake[] = [];
    const spawn = async (compiler: boolean) => {
      const f: Fake = { compiler, messages: [], ended: false };
      started.push(f);
      const w = {
        fake: f,
        ref: () => w,
        unref: () => w,
        postMessage: (m: unknown) => f.messages.push(m),
        terminate: async () => ((f.ended = true), 0),
      };
      return w as unknown as Worker;
    };
    const fakeOf = (w: Worker) => (w as unknown as { fake: Fake }).fake;
    return { started, spawn, fakeOf };
  };
  const KEEP_MS = 60_000;
  afterEach(() => {
    vi.useRealTimers();
  });

  describe('createWorkerSource()', () => {
    it('starts no spare for the first workers, one after each later take, and retires it when takes stop', async () => {
      vi.useFakeTimers();
      const { started, spawn } = fakes();
      const source = createWorkerSource(1, KEEP_MS, spawn);
      await source.take();
      expect(source.spares()).toBe(0);
      await source.take();
      expect(source.spares()).toBe(1);
      // the next take gets that spare and starts another in its place
      await source.take();
      expect(source.spares()).toBe(1);
      const spare = started.at(-1)!;
      await vi.advanceTimersByTimeAsync(KEEP_MS - 1);
      expect(source.spares()).toBe(1);
      expect(spare.ended).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(source.spares()).toBe(0);
      expect(spare.ended).toBe(true);
      // a take for a pool that grows starts none (and takes no spare, none being left)
      await source.take(false);
      expect(source.spares()).toBe(0);
      await source.take();
      expect(source.spares()).toBe(1);
      await source.close();
    });
  });

  describe('createWorkerSource() with a standby', () => {
    it('has a worker idle from when the standby is turned on, which the first reload takes without starting one for itself', async () => {
      const { started, spawn, fakeOf } = fakes();
      const source = createWorkerSource(1, KEEP_MS, spawn);
      // the first configuration's worker
      await source.take();
      expect(started).toHaveLength(1);
      source.standby(true);
      expect(started).toHaveLength(2);
      expect(started[1]).toMatchObject({ compiler: false, ended: false });
      expect(source.spares()).toBe(1);
      // the first reload gets the standby; what it starts is the spare for the edit after it
      const w = await source.take();
      expect(fakeOf(w)).toBe(started[1]);
      expect(started).toHaveLength(3);
      expect(started[2]!.compiler).toBe(true);
      expect(source.spares()).toBe(1);
      await source.close();
      expect(started[2]!.ended).toBe(true);
    });

    it('keeps one after the spares retire, and none once the standby is turned off', async () => {
      vi.useFakeTimers();
      const { started, spawn } = fakes();
      const source = createWorkerSource(1, KEEP_MS, spawn);
      await source.take();
      source.standby(true);
      await source.take();
      expect(started.map((f) => f.compiler)).toEqual([false, false, true]);
      // no reload for a while: the spare ends and a standby takes its place
      await vi.advanceTimersByTimeAsync(KEEP_MS);
      expect(started[2]!.ended).toBe(true);
      expect(started).toHaveLength(4);
      expect(started[3]).toMatchObject({ compiler: false, ended: false });
      expect(source.spares()).toBe(1);
      await vi.advanceTimersByTimeAsync(KEEP_MS * 3);
      expect(started).toHaveLength(4);
      // a configuration without transforms needs none
      source.standby(false);
      expect(source.spares()).toBe(0);
      await vi.advanceTimersByTimeAsync(0);
      expect(started[3]!.ended).toBe(true);
      await source.close();
    });

    it('leaves the standby to the next reload when a pool grows', async () => {
      const { started, spawn, fakeOf } = fakes();
      const source = createWorkerSource(1, KEEP_MS, spawn);
      await source.take();
      source.standby(true);
      const extra = await source.take(false);
      expect(fakeOf(extra)).toBe(started[2]);
      expect(started[1]!.ended).toBe(false);
      expect(source.spares()).toBe(1);
      await source.close();
    });

    it('tells the standby to load the compiler once a change is seen, once', async () => {
      const { started, spawn } = fakes();
      const source = createWorkerSource(1, KEEP_MS, spawn);
      await source.take();
      source.standby(true);
      expect(started[1]!.messages).toEqual([]);
      source.prepare();
      source.prepare();
      await Promise.resolve();
      expect(started[1]!.messages).toEqual([{ type: 'warm' }]);
      // after a reload the idle worker is a spare that has the compiler already: nothing to tell it
      await source.take();
      source.prepare();
      await Promise.resolve();
      expect(started[2]!.messages).toEqual([]);
      await source.close();
    });
  });

  describe('close()', () => {
    it('rejects queued calls and the call in flight, then every new call', async () => {
      const p = await pool(ALL_GOOD, { max: 1, scaleAfterMs: 60_000 });
      const g = gate();
      const running = callError(p.call('block.mjs', [{ flag: g.flag, n: 1 }], 60_000));
      await until(() => p.stats().busy === 1);
      const queued = callError(p.call('default.ts', [{ n: 1 }], 60_000));
      expect(p.stats().queued).toBe(1);
      await p.close();
      expect((await queued).detail).toBe('the transform pool is closed');
      expect((await running).detail).toBe('the transform pool is closed');
      expect((await callError(p.call('default.ts', [{ n: 1 }], 5000))).detail).toBe('the transform pool is closed');
      expect(p.stats()).toMatchObject({ workers: 0, queued: 0 });
    });
  });
});
