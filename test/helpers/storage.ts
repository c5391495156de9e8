/**
 * A disk that fails for a while: errors shaped as node:sqlite raises them, and
 * a switch that makes a store's commits fail as on a full disk (SQLite rolls
 * the transaction back and COMMIT throws SQLITE_FULL), reads still working.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { SqliteStore } from '../../src/store/sqlite/store.ts';

/** An error as node:sqlite throws it for `errcode`. */
export function sqliteError(errcode: number, errstr: string): Error {
  return Object.assign(new Error(errstr), { code: 'ERR_SQLITE_ERROR', errcode, errstr });
}

export const SQLITE_FULL = 13;
export const SQLITE_IOERR_WRITE = 778; // SQLITE_IOERR (10) | 3 << 8

/** Makes `db`'s COMMITs fail with SQLITE_FULL while `full()` is true; returns how many failed. */
export function failCommits(db: DatabaseSync, full: () => boolean): { failed(): number } {
  const exec = db.exec.bind(db);
  let failed = 0;
  db.exec = (sql: string) => {
    if (sql === 'COMMIT' && full()) {
      failed++;
      exec('ROLLBACK'); // what SQLite does itself on a full disk
      throw sqliteError(SQLITE_FULL, 'database or disk is full');
    }
    return exec(sql);
  };
  return { failed: () => failed };
}

/** A store whose commits fail as on a full disk while `disk.full` is true. */
export function fillableDisk(store: SqliteStore): { full: boolean; failedCommits(): number } {
  // the store's one connection (private): the fault goes where a real one would happen
  const db = (store as unknown as { db: DatabaseSync }).db;
  const disk = { full: false, failedCommits: () => counter.failed() };
  const counter = failCommits(db, () => disk.full);
  return disk;
}
