/**
 * Keeps the write-ahead log mostly on disk ahead of SQLite's checkpoints.
 *
 * With `synchronous = NORMAL` a commit does not wait for the disk. The checkpoint SQLite runs inside
 * the commit that takes the WAL past 1,000 pages does, on the event loop: it syncs the WAL (all of
 * it not yet on disk), copies the pages into the database file, and syncs that. Every request in
 * flight waits for that stall, and the first sync is a large part of it (measured: docs/performance.md,
 * "Checkpoints set p99").
 *
 * This starts an `fdatasync` of the WAL file on libuv's thread pool within `intervalMs` of a commit,
 * one at a time, so that when the checkpoint comes only the last few milliseconds of the log are
 * left for its own sync to write. SQLite's syncs are unchanged (it still syncs the WAL before
 * copying and the database after), so nothing about durability depends on this one. It also puts a
 * commit on the disk within about `intervalMs` plus one sync, where before an operating-system crash
 * or power loss could take every commit since the last checkpoint.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';

export const WAL_PRESYNC_MS = 10;

/** The file calls it makes (tests stand in for them). */
export interface PresyncIo {
  open(path: string): number;
  sync(fd: number, done: (err: NodeJS.ErrnoException | null) => void): void;
  close(fd: number): void;
}

const FS_IO: PresyncIo = { open: (path) => openSync(path, 'r'), sync: fdatasync, close: closeSync };

export class WalPresync {
  private fd: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private syncing = false;
  /** A commit since the last sync started. */
  private dirty = false;
  private closed = false;

  private readonly walPath: string;
  private readonly intervalMs: number;
  private readonly io: PresyncIo;
  constructor(walPath: string, intervalMs = WAL_PRESYNC_MS, io: PresyncIo = FS_IO) {
    this.walPath = walPath;
    this.intervalMs = intervalMs;
    this.io = io;
  }

  /** A transaction has committed: its frames are in the WAL file, maybe not yet on the disk. */
  committed(): void {
    this.dirty = true;
    if (this.timer || this.syncing || this.closed) return;
    this.timer = setTimeout(this.sync, this.intervalMs);
    this.timer.unref();
  }

  private readonly sync = (): void => {
    this.timer = undefined;
    if (this.closed) return;
    if (this.fd === undefined) {
      try {
        this.fd = this.io.open(this.walPath);
      } catch {
        return; // not there or not readable: SQLite's own syncs still happen; the next commit tries again
      }
    }
    this.dirty = false;
    this.syncing = true;
    // a failed sync is not retried here: SQLite's own sync before the next checkpoint still runs, and reports
    this.io.sync(this.fd, () => {
      this.syncing = false;
      if (this.closed) this.closeFd();
      else if (this.dirty) this.committed();
    });
  };

  /** No more syncs; the file is closed now, or when the sync in flight ends. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.syncing) this.closeFd();
  }

  private closeFd(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    this.io.close(fd);
  }
}
