/**
 * The WAL presync: an fdatasync of the WAL file within the interval of a commit, one at a time,
 * none without a commit, none after close; and the store opens the WAL for it only with
 * `synchronous: normal`.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WalPresync, type PresyncIo } from '../../../src/store/sqlite/wal-presync.ts';
import { SqliteStore } from '../../../src/store/sqlite/store.ts';
import { cleanup, tempDir } from '../../helpers/cli.ts';

/** A stand-in for the file calls: syncs finish only when the test says so. */
function fakeIo(opts: { openFails?: number } = {}) {
  let openFails = opts.openFails ?? 0;
  const log: string[] = [];
  const pending: (() => void)[] = [];
  const io: PresyncIo = {
    open(path) {
      if (openFails > 0) {
        openFails--;
        throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      }
      log.push(`open ${path}`);
      return 42;
    },
    sync(fd, done) {
      log.push(`sync ${fd}`);
      pending.push(() => done(null));
    },
    close(fd) {
      log.push(`close ${fd}`);
    },
  };
  /** Ends the oldest sync in flight. */
  const finish = () => pending.shift()!();
  const syncs = () => log.filter((l) => l.startsWith('sync')).length;
  return { io, log, finish, syncs };
}

describe('WalPresync', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('syncs nothing until a commit, then the WAL file once the interval has passed', () => {
    const f = fakeIo();
    const p = new WalPresync('/data/x.db-wal', 10, f.io);
    vi.advanceTimersByTime(100);
    expect(f.log).toEqual([]);
    p.committed();
    vi.advanceTimersByTime(9);
    expect(f.log).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(f.log).toEqual(['open /data/x.db-wal', 'sync 42']);
  });

  it('makes the commits of one interval share a sync, and opens the file once', () => {
    const f = fakeIo();
    const p = new WalPresync('/w', 10, f.io);
    for (let i = 0; i < 5; i++) {
      p.committed();
      vi.advanceTimersByTime(2);
    }
    vi.advanceTimersByTime(20);
    expect(f.log).toEqual(['open /w', 'sync 42']);
    f.finish();
    p.committed();
    vi.advanceTimersByTime(10);
    expect(f.log).toEqual(['open /w', 'sync 42', 'sync 42']);
  });

  it('runs one sync at a time: a commit during a sync is synced by another after it', () => {
    const f = fakeIo();
    const p = new WalPresync('/w', 10, f.io);
    p.committed();
    vi.advanceTimersByTime(10);
    p.committed(); // while the first sync is still in flight
    vi.advanceTimersByTime(100);
    expect(f.syncs()).toBe(1);
    f.finish();
    vi.advanceTimersByTime(9);
    expect(f.syncs()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(f.syncs()).toBe(2);
  });

  it('starts no further sync when nothing committed during the last one', () => {
    const f = fakeIo();
    const p = new WalPresync('/w', 10, f.io);
    p.committed();
    vi.advanceTimersByTime(10);
    f.finish();
    vi.advanceTimersByTime(1000);
    expect(f.log).toEqual(['open /w', 'sync 42']);
  });

  it('tries to open the file again at the next commit when it could not', () => {
    const f = fakeIo({ openFails: 1 });
    const p = new WalPresync('/w', 10, f.io);
    p.committed();
    vi.advanceTimersByTime(10);
    expect(f.log).toEqual([]);
    p.committed();
    vi.advanceTimersByTime(10);
    expect(f.log).toEqual(['open /w', 'sync 42']);
  });

  it('after close, syncs nothing more and closes the file, at once or when the sync in flight ends', () => {
    const a = fakeIo();
    const idle = new WalPresync('/w', 10, a.io);
    idle.committed();
    vi.advanceTimersByTime(10);
    a.finish();
    idle.committed(); // a sync is due in 10 ms
    idle.close();
    vi.advanceTimersByTime(100);
    expect(a.log).toEqual(['open /w', 'sync 42', 'close 42']);

    const b = fakeIo();
    const busy = new WalPresync('/w', 10, b.io);
    busy.committed();
    vi.advanceTimersByTime(10);
    busy.committed();
    busy.close();
    expect(b.log).toEqual(['open /w', 'sync 42']); // not closed under the sync
    b.finish();
    vi.advanceTimersByTime(100);
    expect(b.log).toEqual(['open /w', 'sync 42', 'close 42']);
  });
});

/** How many of this process's open files are `file` (or were, before it was deleted: SQLite deletes the WAL when it closes). */
function openCount(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === file || target === `${file} (deleted)`) n++;
    } catch {
      // closed since the listing
    }
  }
  return n;
}

describe.runIf(process.platform === 'linux')('SqliteStore and the WAL presync', () => {
  const dir = tempDir('hook-intake-presync-');
  afterAll(() => cleanup(dir));
  const event = (id: string) => ({ id, source: 'test', text: 'hello', createdAt: Date.now(), runId: null });

  it('opens the WAL file a second time for its syncs after a commit, and closes it with the store', async () => {
    const path = join(dir, 'normal.db');
    const store = new SqliteStore({ path });
    const wal = `${path}-wal`;
    const before = openCount(wal); // SQLite's own
    await store.records.accept({ events: [event('e1')], runs: [] });
    await vi.waitFor(() => expect(openCount(wal)).toBe(before + 1), { timeout: 2000, interval: 5 });
    await store.close();
    // closed at once, or when the sync in flight ends
    await vi.waitFor(() => expect(openCount(wal)).toBe(0), { timeout: 2000, interval: 5 });
  });

  it('syncs nothing of its own with synchronous full, where every commit syncs', async () => {
    const path = join(dir, 'full.db');
    const store = new SqliteStore({ path, synchronous: 'full' });
    const wal = `${path}-wal`;
    const before = openCount(wal);
    await store.records.accept({ events: [event('e2')], runs: [] });
    await new Promise((r) => setTimeout(r, 100));
    expect(openCount(wal)).toBe(before);
    await store.close();
  });
});
