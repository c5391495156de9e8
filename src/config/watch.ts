/**
 * Watches the files a generation was built from (config file, transforms
 * directory, preset and plugin files) and calls `onChange` once per burst of
 * changes (debounced), and `onBurst` at the first change of each burst, before
 * the debounce (to get ready for the reload that follows). The set of watched
 * paths is replaced after each reload, since a new config may point somewhere
 * else.
 *
 * Single files are watched through their directory, so editors that save by
 * writing a new file and renaming it over the old one are still seen.
 */
import { watch, type FSWatcher } from 'chokidar';
import { existsSync, watch as fsWatch } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { debouncePaths, realTimers, type Timers } from '../util/debounce.ts';

export interface WatchSet {
  files: readonly string[];
  dirs: readonly string[];
}

export interface SourceWatcher {
  update(set: WatchSet): void;
  /** Resolves once the current set's watchers see changes (chokidar scans its directories first) and the previous set's are closed. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

interface Closable {
  close(): Promise<void>;
  /** Resolves once the watcher sees changes (chokidar scans first). */
  ready?: Promise<void>;
}

const IGNORED = /(^|[\\/])(node_modules|\.git)([\\/]|$)|(^|[\\/])\.[^\\/]*\.sw[a-p]$|~$/;

/** Watchers for `set`: chokidar on its directories, a plain fs.watch on the directory of each single file. */
function watchSet(set: WatchSet, note: (path: string) => void): Closable[] {
  const wanted = [...new Set(set.dirs.map((d) => resolve(d)))];
  // a directory that does not exist yet is watched for its appearance like a file in its
  // parent: chokidar would re-scan the parent on every event in it
  const dirs = wanted.filter((d) => existsSync(d));
  const files = new Set([...set.files.map((f) => resolve(f)), ...wanted.filter((d) => !existsSync(d))]);
  const inDir = (p: string) => dirs.some((d) => p === d || p.startsWith(d + sep));
  const fileDirs = [...new Set([...files].map((f) => dirname(f)))].filter((d) => !inDir(d));
  const next: Closable[] = [];
  if (dirs.length) {
    const w: FSWatcher = watch(dirs, { ignoreInitial: true, ignored: IGNORED, depth: 8, atomic: true });
    w.on('all', (_event, path) => note(resolve(path)));
    w.on('error', () => undefined);
    next.push({ close: () => w.close(), ready: new Promise<void>((r) => w.once('ready', () => r())) });
  }
  // Single files: a plain fs.watch on their directory, filtered by name. It sees an editor's
  // write-then-rename (a new inode), and an event for another file in the directory (a log
  // file written beside the config, say) costs one callback, where chokidar would stat and
  // re-read the directory each time.
  for (const dir of fileDirs) {
    try {
      const w = fsWatch(dir, { persistent: false }, (_event, name) => {
        if (!name) return;
        const p = join(dir, name.toString());
        if (files.has(p)) note(p);
      });
      w.on('error', () => undefined);
      next.push({ close: async () => w.close() });
    } catch {
      // a directory that does not exist (yet) cannot hold the file; the next reload watches again
    }
  }
  return next;
}

/** Which paths `set` watches; which directories exist is part of it: one that appears must be watched as a directory. */
function watchKey(set: WatchSet): string {
  return JSON.stringify([
    [...new Set(set.files.map((f) => resolve(f)))].sort(),
    [...new Set(set.dirs.map((d) => resolve(d)))].sort().map((d) => [d, existsSync(d)]),
  ]);
}

export function watchSources(
  initial: WatchSet,
  onChange: (paths: string[]) => void,
  debounceMs: number,
  onBurst?: () => void,
  timers: Timers = realTimers,
): SourceWatcher {
  const burst = debouncePaths(onChange, debounceMs, onBurst, timers);
  const note = (path: string) => burst.note(path);
  const readyOf = (ws: Closable[]) => Promise.all(ws.map((w) => w.ready ?? Promise.resolve())).then(() => undefined);

  let current = watchKey(initial);
  let watchers = watchSet(initial, note);
  let retiring: Promise<unknown> = Promise.resolve();
  return {
    update(set) {
      // most reloads watch the same paths: keep the watchers, so no change can fall between two of them
      const next = watchKey(set);
      if (next === current) return;
      current = next;
      const old = watchers;
      watchers = watchSet(set, note);
      // the old ones keep watching until the new ones are ready; an event seen twice is debounced anyway
      retiring = readyOf(watchers).then(() => Promise.all(old.map((w) => w.close())));
    },
    ready: () => Promise.all([readyOf(watchers), retiring]).then(() => undefined),
    async close() {
      burst.cancel();
      await Promise.all(watchers.map((w) => w.close()));
    },
  };
}
