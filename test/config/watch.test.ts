/**
 * Watching the sources of a generation (docs/configuration.md, hot reload): changes reach
 * `onChange` with their paths (and `onBurst` says when a burst begins), single files are watched
 * through their directory (siblings ignored), the watched set is replaced after a reload, and
 * nothing is called after close(). That a burst is one call is the debounce's own test
 * (test/util/debounce.test.ts, on fake timers).
 *
 * Each test waits for `ready()` (chokidar has scanned the directories) before it changes a file.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchSources, type SourceWatcher, type WatchSet } from '../../src/config/watch.ts';
import type { Timers } from '../../src/util/debounce.ts';
import { cleanup, tempDir, until } from '../helpers/cli.ts';

const DEBOUNCE_MS = 40;
let open: SourceWatcher[] = [];
let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(open.map((w) => w.close()));
  open = [];
  dirs.forEach(cleanup);
  dirs = [];
});

function fresh(): string {
  const d = tempDir('hook-intake-watch-');
  dirs.push(d);
  return d;
}

/** Starts a watcher and waits until it sees changes. */
async function start(set: WatchSet, onBurst?: () => void, timers?: Timers) {
  const calls: string[][] = [];
  const w = watchSources(set, (paths) => calls.push(paths), DEBOUNCE_MS, onBurst, timers);
  open.push(w);
  await w.ready();
  return { w, calls };
}

/** Timers the test runs by hand: `pending` holds the debounce's timer while a burst is gathered. */
function handTimers() {
  const pending = new Set<() => void>();
  const timers: Timers = {
    setTimeout: (fn) => (pending.add(fn), fn),
    clearTimeout: (handle) => void pending.delete(handle as () => void),
  };
  const runAll = () => {
    for (const fn of [...pending]) {
      pending.delete(fn);
      fn();
    }
  };
  return { pending, timers, runAll };
}

describe('watchSources()', () => {
  it('passes on every changed path, in directories and below', async () => {
    const dir = fresh();
    mkdirSync(join(dir, 'sub'));
    const { calls } = await start({ files: [], dirs: [dir] });
    const files = ['a.ts', 'b.ts', 'sub/c.ts'].map((f) => join(dir, f));
    for (const f of files) writeFileSync(f, 'export default () => null;');
    await until(() => files.every((f) => calls.flat().includes(f)));
  });

  it('says when a burst begins, before the burst is gathered into a call', async () => {
    const dir = fresh();
    const events: string[] = [];
    const hand = handTimers();
    const { calls } = await start({ files: [], dirs: [dir] }, () => events.push(`burst ${calls.length}`), hand.timers);
    writeFileSync(join(dir, 'a.ts'), 'export default () => null;');
    await until(() => hand.pending.size === 1);
    expect(events).toEqual(['burst 0']);
    hand.runAll();
    expect(calls).toEqual([[join(dir, 'a.ts')]]);
  });

  it('watches a single file through its directory, ignoring its siblings', async () => {
    const dir = fresh();
    const config = join(dir, 'hook-intake.json5');
    const { calls } = await start({ files: [config], dirs: [] });
    writeFileSync(join(dir, 'other.json5'), '{}');
    writeFileSync(join(dir, 'notes.txt'), 'x');
    writeFileSync(config, '{ hooks: {} }');
    await until(() => calls.length > 0);
    expect(new Set(calls.flat())).toEqual(new Set([config]));
  });

  it('sees a file replaced by rename, as editors save it', async () => {
    const dir = fresh();
    const config = join(dir, 'hook-intake.json5');
    const { calls } = await start({ files: [config], dirs: [] });
    writeFileSync(join(dir, '.hook-intake.json5.tmp'), '{ saved: true }');
    renameSync(join(dir, '.hook-intake.json5.tmp'), config);
    await until(() => calls.some((c) => c.includes(config)));
  });

  it('sees a watched directory appear, and watches it as a directory once a reload asks again', async () => {
    const parent = fresh();
    const later = join(parent, 'transforms');
    // a missing directory is watched through its parent, set up before watchSources returns
    const calls: string[][] = [];
    const w = watchSources({ files: [], dirs: [later] }, (p) => calls.push(p), DEBOUNCE_MS);
    open.push(w);
    mkdirSync(later);
    await until(() => calls.some((c) => c.includes(later)));
    // the reload that follows asks for the same set; now that it exists, changes inside it are seen
    w.update({ files: [], dirs: [later] });
    await w.ready();
    writeFileSync(join(later, 'shape.ts'), 'export default () => null;');
    await until(() => calls.some((c) => c.includes(join(later, 'shape.ts'))));
  });

  it('ignores node_modules, .git and editor swap files', async () => {
    const dir = fresh();
    mkdirSync(join(dir, 'node_modules'));
    mkdirSync(join(dir, '.git'));
    const { calls } = await start({ files: [], dirs: [dir] });
    writeFileSync(join(dir, 'node_modules', 'x.js'), 'x');
    writeFileSync(join(dir, '.git', 'index'), 'x');
    writeFileSync(join(dir, '.shape.ts.swp'), 'x');
    writeFileSync(join(dir, 'shape.ts~'), 'x');
    const real = join(dir, 'shape.ts');
    writeFileSync(real, 'export default () => null;');
    await until(() => calls.some((c) => c.includes(real)));
    expect(calls.flat().filter((p) => p !== real)).toEqual([]);
  });

  it('update() replaces the watched set', async () => {
    const a = fresh();
    const b = fresh();
    const { w, calls } = await start({ files: [], dirs: [a] });
    w.update({ files: [], dirs: [b] });
    await w.ready();
    writeFileSync(join(a, 'old.ts'), 'x');
    writeFileSync(join(b, 'new.ts'), 'x');
    await until(() => calls.some((c) => c.includes(join(b, 'new.ts'))));
    expect(calls.flat()).not.toContain(join(a, 'old.ts'));
  });

  it('calls nothing after close(), not even for a burst it has already seen', async () => {
    const dir = fresh();
    const hand = handTimers();
    const { w, calls } = await start({ files: [], dirs: [dir] }, undefined, hand.timers);
    writeFileSync(join(dir, 'late.ts'), 'x');
    await until(() => hand.pending.size === 1); // the burst is being gathered
    await w.close();
    expect(hand.pending.size).toBe(0);
    hand.runAll();
    expect(calls).toEqual([]);
  });
});
