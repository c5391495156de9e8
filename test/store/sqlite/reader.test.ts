/**
 * The SQLite store read by another connection (src/store/sqlite/reader.ts): beside a store with
 * SQLite's own locking it reads and the store goes on writing; a store holding the file (exclusive
 * locking, the default) refuses it with a message that says what to do; a file that is not there
 * is a clear error, and the reader writes nothing.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreInUseError, StoreOpenError } from '../../../src/store/errors.ts';
import { SqliteReader } from '../../../src/store/sqlite/reader.ts';
import { SqliteStore } from '../../../src/store/sqlite/store.ts';
import { cleanup, tempDir } from '../../helpers/cli.ts';
import { readerContract } from '../reader-contract.ts';

const dir = tempDir('hook-intake-reader-');
afterAll(() => cleanup(dir));
let n = 0;

readerContract('sqlite', async () => {
  const path = join(dir, String(++n), 'hook-intake.db');
  const store = new SqliteStore({ path, locking: 'normal' });
  return { store, reader: new SqliteReader({ path }) };
});

describe('SqliteReader', () => {
  it('is refused while a store holds the file (exclusive locking), naming the setting', async () => {
    const path = join(dir, String(++n), 'hook-intake.db');
    const store = new SqliteStore({ path });
    try {
      expect(() => new SqliteReader({ path, busyTimeoutMs: 50 })).toThrow(StoreInUseError);
      expect(() => new SqliteReader({ path, busyTimeoutMs: 50 })).toThrow(/storage\.locking: normal/);
    } finally {
      await store.close();
    }
    // once the store is closed the file opens
    await new SqliteReader({ path }).close();
  });

  it('says when there is no database, and creates none', () => {
    const path = join(dir, 'none', 'hook-intake.db');
    expect(() => new SqliteReader({ path })).toThrow(StoreOpenError);
    expect(() => new SqliteReader({ path })).toThrow(/does not exist/);
  });
});
