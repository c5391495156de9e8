/**
 * Watching the sources of a generation (SPEC §5.7): one debounced call per
 * burst of changes (and a word when a burst begins), single files watched through their directory (siblings
 * ignored), the watched set replaced after a reload, nothing after close().
 *
 * The watcher does not say when it is ready, so each test first writes a probe
 * until a change is seen, then starts from a clean slate.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchSources, type SourceWatcher, type WatchSet } from '../../src/config/watch.ts';
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

/** Starts a watcher and waits until it sees `probe` change. */
async function start(set: WatchSet, probe: string, debounceMs = DEBOUNCE_MS) {
  const calls: string[][] = [];
  const w = watchSources(set, (paths) => calls.push(paths), debounceMs);
  open.push(w);
  await ready(calls, probe, debounceMs);
  return { w, calls };
}

async function ready(calls: string[][], probe: string, debounceMs = DEBOUNCE_MS): Promise<void> {
  let n = 0;
  // probe less often than the debounce, or every write would postpone the call
  await until(
    () => {
      writeFileSync(probe, `probe ${n++}`);
      return calls.some((c) => c.includes(probe));
    },
    undefined,
    debounceMs * 2 + 50,
  );
  // let the probe's last burst finish, then start clean
  await until(async () => {
    const before = calls.length;
    await new Promise((r) => setTimeout(r, debounceMs * 3));
    return calls.length === before;
  });
  calls.length = 0;
}

describe('watchSources()', () => {
  it('calls once per burst of changes, with every changed path', async () => {
    const dir = fresh();
    mkdirSync(join(dir, 'sub'));
    const { calls } = await start({ files: [], dirs: [dir] }, join(dir, 'probe.ts'), 150);
    const files = ['a.ts', 'b.ts', 'sub/c.ts'].map((f) => join(dir, f));
    for (const f of files) writeFileSync(f, 'export default () => null;');
    await until(() => calls.length > 0);
    await new Promise((r) => setTimeout(r, 450));
    expect(calls.length).toBe(1);
    for (const f of files) expect(calls[0]).toContain(f);
  });

  it('says when a burst begins, once, before the burst is gathered into a call', async () => {
    const dir = fresh();
    const calls: string[][] = [];
    const events: string[] = [];
    const w = watchSources(
      { files: [], dirs: [dir] },
      (paths) => {
        calls.push(paths);
        events.push('call');
      },
      150,
      () => events.push('burst'),
    );
    open.push(w);
    await ready(calls, join(dir, 'probe.ts'), 150);
    events.length = 0;
    for (const f of ['a.ts', 'b.ts']) writeFileSync(join(dir, f), 'export default () => null;');
    await until(() => events.includes('call'));
    expect(events).toEqual(['burst', 'call']);
  });

  it('watches a single file through its directory, ignoring its siblings', async () => {
    const dir = fresh();
    const config = join(dir, 'hook-intake.json5');
    const { calls } = await start({ files: [config], dirs: [] }, config);
    writeFileSync(join(dir, 'other.json5'), '{}');
    writeFileSync(join(dir, 'notes.txt'), 'x');
    writeFileSync(config, '{ hooks: {} }');
    await until(() => calls.length > 0);
    expect(calls.flat()).toEqual([config]);
  });

  it('sees a file replaced by rename, as editors save it', async () => {
    const dir = fresh();
    const config = join(dir, 'hook-intake.json5');
    const { calls } = await start({ files: [config], dirs: [] }, config);
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
    await ready(calls, join(later, 'probe.ts'));
    writeFileSync(join(later, 'shape.ts'), 'export default () => null;');
    await until(() => calls.some((c) => c.includes(join(later, 'shape.ts'))));
  });

  it('ignores node_modules, .git and editor swap files', async () => {
    const dir = fresh();
    mkdirSync(join(dir, 'node_modules'));
    mkdirSync(join(dir, '.git'));
    const { calls } = await start({ files: [], dirs: [dir] }, join(dir, 'probe.ts'));
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
    const { w, calls } = await start({ files: [], dirs: [a] }, join(a, 'probe.ts'));
    w.update({ files: [], dirs: [b] });
    await ready(calls, join(b, 'probe.ts'));
    writeFileSync(join(a, 'old.ts'), 'x');
    writeFileSync(join(b, 'new.ts'), 'x');
    await until(() => calls.some((c) => c.includes(join(b, 'new.ts'))));
    expect(calls.flat()).not.toContain(join(a, 'old.ts'));
  });

  it('calls nothing after close(), not even for a burst it has already seen', async () => {
    const dir = fresh();
    // a long debounce keeps the burst pending; a second watcher with a short one shows when the change was seen
    const calls: string[][] = [];
    const w = watchSources({ files: [], dirs: [dir] }, (p) => calls.push(p), 400);
    open.push(w);
    const { calls: seen } = await start({ files: [], dirs: [dir] }, join(dir, 'probe.ts'));
    await until(() => calls.length > 0);
    calls.length = 0;
    writeFileSync(join(dir, 'late.ts'), 'x');
    await until(() => seen.some((c) => c.includes(join(dir, 'late.ts'))));
    await w.close();
    await new Promise((r) => setTimeout(r, 600));
    expect(calls).toEqual([]);
  });
});
