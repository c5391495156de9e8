import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, StoreOpenError } from '../../src/store/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'hook-intake-open-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openStore()', () => {
  it('opens the driver storage.driver names', async () => {
    const store = await openStore({
      driver: 'sqlite',
      path: join(dir, 'a.db'),
      synchronous: 'normal',
      locking: 'exclusive',
      timeoutSeconds: 5,
    });
    expect(store.driver).toBe('sqlite');
    await store.records.setMeta('k', 'v');
    expect(await store.records.getMeta('k')).toBe('v');
    await store.close();
  });

  it('fails with a StoreOpenError for a file it cannot open', async () => {
    const path = join(dir, 'old.db');
    const old = new DatabaseSync(path);
    old.exec('CREATE TABLE t (x); PRAGMA user_version = 3');
    old.close();
    await expect(
      openStore({ driver: 'sqlite', path, synchronous: 'normal', locking: 'exclusive', timeoutSeconds: 5 }),
    ).rejects.toBeInstanceOf(StoreOpenError);
  });
});
