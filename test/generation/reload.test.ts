/**
 * Reloads (docs/mappings.md, "Hot reload"): a successful build is swapped in, a failed one keeps
 * the last good generation and records why, and builds never overlap — a
 * change during a build triggers exactly one more build after it.
 */
import { describe, expect, it } from 'vitest';
import { createReloader } from '../../src/generation/reload.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import type { Generation } from '../../src/generation/types.ts';
import { ConfigError } from '../../src/errors.ts';
import { captureLogger } from '../helpers/runtime.ts';

let ids = 100;
/** A stand-in generation: only what the reloader and GenerationRef touch. */
function fakeGeneration(): Generation & { disposed: number; started: number } {
  const g = {
    id: ids++,
    disposed: 0,
    started: 0,
    async start() {
      g.started++;
    },
    async dispose() {
      g.disposed++;
    },
  };
  return g as unknown as Generation & { disposed: number; started: number };
}

function setup(build: () => Promise<Generation>) {
  const first = fakeGeneration();
  const generations = new GenerationRef(first);
  const log = captureLogger('info');
  let now = 1_000;
  const swaps: [number, number][] = [];
  const reloader = createReloader({
    generations,
    build,
    logger: log.logger,
    clock: () => (now += 5),
    onSwap: (prev, next) => swaps.push([prev.id, next.id]),
  });
  return { first, generations, reloader, log, swaps };
}

describe('createReloader()', () => {
  it('swaps in a generation that built, disposes the unused old one and logs it', async () => {
    const next = fakeGeneration();
    const { first, generations, reloader, log, swaps } = setup(async () => next);
    expect(await reloader.reload('changed: a.json')).toBe(true);
    expect(generations.current).toBe(next);
    expect(swaps).toEqual([[first.id, next.id]]);
    expect(first.disposed).toBe(1);
    // its plugin instances start once it is live
    expect(next.started).toBe(1);
    const line = JSON.parse(log.text().trim());
    expect(line).toMatchObject({
      msg: 'configuration reloaded',
      generation: next.id,
      previous: first.id,
      reason: 'changed: a.json',
      ms: 5,
    });
  });

  it('keeps the current generation when the build fails, recording each problem', async () => {
    const issues = [
      { file: '/etc/hi.json5', path: 'hooks.mappings[0].match.path', message: '"wake" is reserved' },
      { file: '/etc/transforms/a.ts', path: '', message: 'cannot load: Unexpected token' },
    ];
    const { first, generations, reloader, log, swaps } = setup(async () => {
      throw new ConfigError(issues);
    });
    expect(await reloader.reload('changed')).toBe(false);
    expect(generations.current).toBe(first);
    expect(first.disposed).toBe(0);
    expect(swaps).toEqual([]);
    // the clock advances 5 ms per reading: the build started at 1005 and failed at 1010
    expect(generations.lastReloadError).toEqual({ at: 1_010, issues });
    const lines = log
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 'error',
      msg: 'reload failed; keeping the current configuration',
      file: '/etc/hi.json5',
      path: 'hooks.mappings[0].match.path',
      reason: '"wake" is reserved',
    });
    expect(lines[1]).toMatchObject({ file: '/etc/transforms/a.ts', reason: 'cannot load: Unexpected token' });
  });

  it('records an unexpected error as one problem', async () => {
    const { generations, reloader } = setup(async () => {
      throw new Error('disk on fire');
    });
    expect(await reloader.reload('changed')).toBe(false);
    expect(generations.lastReloadError?.issues).toEqual([{ file: '', path: '', message: 'reload failed: disk on fire' }]);
  });

  it('clears the recorded problem once a reload succeeds', async () => {
    let fail = true;
    const { generations, reloader } = setup(async () => {
      if (fail) throw new ConfigError([{ file: 'f', path: 'p', message: 'm' }]);
      return fakeGeneration();
    });
    await reloader.reload('broken');
    expect(generations.lastReloadError).toBeDefined();
    fail = false;
    expect(await reloader.reload('fixed')).toBe(true);
    expect(generations.lastReloadError).toBeUndefined();
  });

  it('never overlaps builds: changes during a build trigger exactly one more build', async () => {
    const builds: PromiseWithResolvers<Generation>[] = [];
    let active = 0;
    let maxActive = 0;
    const { generations, reloader } = setup(() => {
      const d = Promise.withResolvers<Generation>();
      builds.push(d);
      active++;
      maxActive = Math.max(maxActive, active);
      return d.promise.finally(() => active--);
    });
    const first = reloader.reload('save 1');
    const during = [reloader.reload('save 2'), reloader.reload('save 3'), reloader.reload('save 4')];
    expect(builds).toHaveLength(1);
    expect(during[1]).toBe(during[0]);
    expect(during[2]).toBe(during[0]);

    const g1 = fakeGeneration();
    builds[0]!.resolve(g1);
    expect(await first).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(builds).toHaveLength(2);
    const g2 = fakeGeneration();
    builds[1]!.resolve(g2);
    expect(await Promise.all(during)).toEqual([true, true, true]);
    expect(builds).toHaveLength(2);
    expect(maxActive).toBe(1);
    expect(generations.current).toBe(g2);
    expect(g1.disposed).toBe(1);
  });

  it('a change during the follow-up build queues one more', async () => {
    const builds: PromiseWithResolvers<Generation>[] = [];
    const { reloader } = setup(() => {
      const d = Promise.withResolvers<Generation>();
      builds.push(d);
      return d.promise;
    });
    const a = reloader.reload('a');
    const b = reloader.reload('b');
    builds[0]!.resolve(fakeGeneration());
    await a;
    await new Promise((r) => setImmediate(r));
    expect(builds).toHaveLength(2);
    const c = reloader.reload('c');
    expect(c).not.toBe(b);
    builds[1]!.resolve(fakeGeneration());
    await b;
    await new Promise((r) => setImmediate(r));
    expect(builds).toHaveLength(3);
    builds[2]!.reject(new ConfigError([{ file: 'f', path: '', message: 'broken' }]));
    expect(await c).toBe(false);
  });

  it('builds again after a failed build that had a change queued', async () => {
    const builds: PromiseWithResolvers<Generation>[] = [];
    const { generations, reloader } = setup(() => {
      const d = Promise.withResolvers<Generation>();
      builds.push(d);
      return d.promise;
    });
    const a = reloader.reload('broken save');
    const b = reloader.reload('fixed save');
    builds[0]!.reject(new ConfigError([{ file: 'f', path: '', message: 'broken' }]));
    expect(await a).toBe(false);
    await new Promise((r) => setImmediate(r));
    const good = fakeGeneration();
    builds[1]!.resolve(good);
    expect(await b).toBe(true);
    expect(generations.current).toBe(good);
    expect(generations.lastReloadError).toBeUndefined();
  });
});

describe('GenerationRef', () => {
  it('disposes a retired generation only after its last user releases it', async () => {
    const old = fakeGeneration();
    const ref = new GenerationRef(old);
    const a = ref.acquire();
    const b = ref.acquire();
    expect(a).toBe(old);
    const next = fakeGeneration();
    expect(ref.swap(next)).toBe(old);
    expect(ref.current).toBe(next);
    // new requests get the new generation
    expect(ref.acquire()).toBe(next);
    ref.release(a);
    expect(old.disposed).toBe(0);
    ref.release(b);
    expect(old.disposed).toBe(1);
    ref.release(b);
    expect(old.disposed).toBe(1);
    expect(next.disposed).toBe(0);
  });

  it('disposes an unused generation at the swap', () => {
    const old = fakeGeneration();
    const ref = new GenerationRef(old);
    ref.release(ref.acquire());
    ref.swap(fakeGeneration());
    expect(old.disposed).toBe(1);
  });

  it('counts the users of the current generation from 0 again after it had none, even after one release too many', () => {
    const old = fakeGeneration();
    const ref = new GenerationRef(old);
    for (let i = 0; i < 3; i++) ref.release(ref.acquire());
    ref.release(old); // one too many: must not leave a count below 0
    const held = ref.acquire();
    const next = fakeGeneration();
    ref.swap(next);
    expect(old.disposed).toBe(0);
    ref.release(held);
    expect(old.disposed).toBe(1);
    ref.release(ref.acquire());
    ref.swap(fakeGeneration());
    expect(next.disposed).toBe(1);
  });

  it('holds the generation for the whole of use(), even when it throws', async () => {
    const old = fakeGeneration();
    const ref = new GenerationRef(old);
    const gate = Promise.withResolvers<void>();
    const using = ref.use(async (g) => {
      await gate.promise;
      return g.id;
    });
    const failing = ref.use(async () => {
      await gate.promise;
      throw new Error('request failed');
    });
    ref.swap(fakeGeneration());
    expect(old.disposed).toBe(0);
    gate.resolve();
    expect(await using).toBe(old.id);
    await expect(failing).rejects.toThrow('request failed');
    expect(old.disposed).toBe(1);
  });

  it('disposes a generation retired by two swaps in a row once', () => {
    const g1 = fakeGeneration();
    const ref = new GenerationRef(g1);
    const held = ref.acquire();
    const g2 = fakeGeneration();
    ref.swap(g2);
    ref.swap(fakeGeneration());
    expect(g2.disposed).toBe(1);
    expect(g1.disposed).toBe(0);
    ref.release(held);
    expect(g1.disposed).toBe(1);
  });

  it('clears the last reload error at a swap', () => {
    const ref = new GenerationRef(fakeGeneration());
    ref.lastReloadError = { at: 1, issues: [] };
    ref.swap(fakeGeneration());
    expect(ref.lastReloadError).toBeUndefined();
  });

  it('disposeAll() disposes the current and the retired generations, each once', async () => {
    const g1 = fakeGeneration();
    const ref = new GenerationRef(g1);
    const held = ref.acquire();
    const g2 = fakeGeneration();
    ref.swap(g2);
    await ref.disposeAll();
    expect([g1.disposed, g2.disposed]).toEqual([1, 1]);
    ref.release(held);
    expect(g1.disposed).toBe(1);
  });
});
