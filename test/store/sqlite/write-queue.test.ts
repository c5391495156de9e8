/**
 * Group commit: writes queued in one turn of the event loop share one
 * transaction, each caller learns the outcome only after COMMIT, and a bad
 * write fails alone.
 */
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StorageUnavailableError } from '../../../src/store/errors.ts';
import { WriteQueue } from '../../../src/store/sqlite/write-queue.ts';
import { cleanup, tempDir } from '../../helpers/cli.ts';
import { sqliteError, SQLITE_FULL, SQLITE_IOERR_WRITE } from '../../helpers/storage.ts';

const dir = tempDir('hook-intake-wq-');
afterAll(() => cleanup(dir));

let n = 0;
let db: DatabaseSync;
let reader: DatabaseSync;
let queue: WriteQueue;
let begins: number;

beforeEach(() => {
  const file = join(dir, `${++n}.db`);
  db = new DatabaseSync(file);
  db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT PRIMARY KEY)');
  // a second connection sees only what has been committed
  reader = new DatabaseSync(file, { readOnly: true });
  begins = 0;
  const exec = db.exec.bind(db);
  vi.spyOn(db, 'exec').mockImplementation((sql: string) => {
    if (sql.startsWith('BEGIN')) begins++;
    return exec(sql);
  });
  queue = new WriteQueue(db);
});
afterEach(() => {
  reader.close();
  db.close();
});

const insert = (v: string) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
const committed = () => (reader.prepare('SELECT v FROM t ORDER BY v').all() as { v: string }[]).map((r) => r.v);

describe('WriteQueue.run()', () => {
  it('runs every write queued in one tick in a single transaction', async () => {
    const values = Array.from({ length: 50 }, (_, i) => `v${String(i).padStart(2, '0')}`);
    const results = await Promise.all(values.map((v) => queue.run(insert(v))));
    expect(results).toEqual(values.map(() => 1));
    expect(begins).toBe(1);
    expect(committed()).toEqual(values);
  });

  it('starts a new transaction for writes queued after the first batch was flushed', async () => {
    await queue.run(insert('a'));
    await queue.run(insert('b'));
    expect(begins).toBe(2);
  });

  it('runs each write inside a transaction and settles its promise only after COMMIT', async () => {
    const seen: { inTx: boolean; visibleAtResolve: string[] }[] = [];
    const writes = ['a', 'b', 'c'].map((v) =>
      queue
        .run(() => {
          const inTx = db.isTransaction;
          insert(v)();
          return inTx;
        })
        .then((inTx) => seen.push({ inTx, visibleAtResolve: committed() })),
    );
    expect(committed()).toEqual([]); // nothing runs synchronously
    await Promise.all(writes);
    expect(seen).toEqual([0, 1, 2].map(() => ({ inTx: true, visibleAtResolve: ['a', 'b', 'c'] })));
  });

  it('rejects only the write that fails; the others in its batch commit', async () => {
    const boom = new Error('boom');
    const results = await Promise.allSettled([
      queue.run(insert('a')),
      queue.run(() => {
        insert('half-done')();
        throw boom;
      }),
      queue.run(insert('a')), // duplicate key: SQLite refuses it
      queue.run(insert('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBe(boom);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(committed()).toEqual(['a', 'c']); // the failed write's partial insert was rolled back
    expect(db.isTransaction).toBe(false);
  });
});

describe('WriteQueue on a failing disk', () => {
  it('rejects the writes when COMMIT and then ROLLBACK fail, throws nothing out of the flush, and commits once the disk works', async () => {
    let failing = true;
    let rollbacks = 0;
    const exec = db.exec.bind(db);
    db.exec = (sql: string) => {
      if (sql === 'ROLLBACK') rollbacks++;
      if (failing && sql === 'COMMIT') throw sqliteError(SQLITE_FULL, 'database or disk is full');
      // the transaction stays open: the next flush must end it before its BEGIN
      if (failing && sql === 'ROLLBACK') throw sqliteError(SQLITE_IOERR_WRITE, 'disk I/O error');
      return exec(sql);
    };
    const q = new WriteQueue(db);
    const results = await Promise.allSettled([q.run(insert('a')), q.run(insert('b'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    // as the storage contract names it, the driver's error its cause
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(StorageUnavailableError);
    expect((results[0] as PromiseRejectedResult).reason.cause).toMatchObject({ errcode: SQLITE_FULL });
    expect(rollbacks).toBeGreaterThan(0);
    failing = false;
    await expect(q.run(insert('c'))).resolves.toBe(1);
    expect(committed()).toEqual(['c']);
    expect(db.isTransaction).toBe(false);
  });
});

describe('WriteQueue onCommit', () => {
  it('runs once per transaction that commits, after COMMIT and before the writes settle', async () => {
    const seen: { inTx: boolean; rows: string[] }[] = [];
    const q = new WriteQueue(db, undefined, () => seen.push({ inTx: db.isTransaction, rows: committed() }));
    let settledBefore = 0;
    await Promise.all([q.run(insert('a')), q.run(insert('b'))].map((p) => p.then(() => (settledBefore = seen.length))));
    expect(seen).toEqual([{ inTx: false, rows: ['a', 'b'] }]);
    expect(settledBefore).toBe(1);
    await q.run(insert('c'));
    expect(seen).toHaveLength(2);
  });

  it('is told how long the transaction took, from BEGIN to the end of COMMIT', async () => {
    const took: number[] = [];
    const q = new WriteQueue(db, undefined, (ms) => took.push(ms));
    // the queue times itself with performance.now(), which only moves when the test says so
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      await q.run(() => {
        vi.advanceTimersByTime(30); // a slow statement
        return insert('slow')();
      });
      await q.run(insert('fast'));
    } finally {
      vi.useRealTimers();
    }
    expect(took).toEqual([30, 0]);
  });

  it('runs for each write that commits alone after a shared transaction failed, and not for the one that failed', async () => {
    let commits = 0;
    const q = new WriteQueue(db, undefined, () => commits++);
    const results = await Promise.allSettled([q.run(insert('a')), q.run(insert('a')), q.run(insert('b'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(commits).toBe(2);
  });
});

describe('WriteQueue.drain()', () => {
  it('resolves at once when nothing is queued', async () => {
    await expect(queue.drain()).resolves.toBeUndefined();
  });

  it('resolves after everything queued so far has committed', async () => {
    void queue.run(insert('a'));
    void queue.run(insert('b'));
    await queue.drain();
    expect(committed()).toEqual(['a', 'b']);
  });
});

describe('WriteQueue.run() with a deadline (storage.timeoutSeconds: docs/redis.md, "Timeouts")', () => {
  it('refuses a write whose deadline passed while it waited, and commits the others of its turn', async () => {
    const now = Date.now();
    const late = queue.run(insert('late'), now - 1);
    const onTime = queue.run(insert('on time'), now + 60_000);
    const none = queue.run(insert('no deadline'));
    await expect(late).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(Promise.all([onTime, none])).resolves.toEqual([1, 1]);
    expect(committed()).toEqual(['no deadline', 'on time']);
  });

  it('refuses a write held past its deadline by a turn that blocked the loop (a stalled disk), storing nothing of it', async () => {
    // the deadline is read when the turn's commit starts: a clock that has moved on stands for the blocked loop
    const t0 = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(t0 + 10_000);
    try {
      await expect(queue.run(insert('held'), t0 + 5_000)).rejects.toThrow(/waited past its deadline/);
    } finally {
      clock.mockRestore();
    }
    expect(committed()).toEqual([]);
    expect(begins).toBe(0);
  });
});
