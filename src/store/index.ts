/**
 * Opens the store the configuration names (`storage.driver`).
 * `sqlite` (the default) keeps one instance's state in a file; `redis` shares it between instances on one server.
 * Everything above the store uses its roles only (roles.ts); a driver's own options and tricks stay in its folder.
 */
import type { StorageConfig } from '../config/storage.ts';
import { SqliteStore } from './sqlite/store.ts';
import type { Store, StoreReader } from './roles.ts';
import { SqliteReader } from './sqlite/reader.ts';

export { IdempotencyTakenError, StoreInUseError, StoreOpenError, StoreSchemaError } from './errors.ts';
export type { Store, StoreReader } from './roles.ts';
export { describeStorage, inspectStorage, storageIssues } from './config.ts';

/** `clock` is the queue's, for leases and retries (default Date.now). */
export async function openStore(storage: StorageConfig, opts: { clock?: () => number } = {}): Promise<Store> {
  switch (storage.driver) {
    case 'sqlite':
      return new SqliteStore({
        path: storage.path,
        synchronous: storage.synchronous,
        locking: storage.locking,
        // a lock held by another process (locking: normal) is waited for as long as a request waits on the store
        busyTimeoutMs: storage.timeoutSeconds * 1000,
        clock: opts.clock,
      });
    case 'redis': {
      // loaded only for a Redis store: a SQLite start does not load ioredis
      const { RedisStore } = await import('./redis/store.ts');
      return RedisStore.open({
        url: storage.url,
        prefix: storage.prefix,
        instanceTimeoutMs: storage.instanceTimeoutSeconds * 1000,
        ...(opts.clock ? { clock: opts.clock } : {}),
      });
    }
  }
}

/**
 * The store opened for reading beside the process that serves from it (`hook-intake replay`, docs/shadow.md):
 * the request log and the runs and events it names; nothing written, no lock the server would wait for.
 */
export async function openStoreReader(storage: StorageConfig): Promise<StoreReader> {
  switch (storage.driver) {
    case 'sqlite':
      return new SqliteReader({ path: storage.path });
    case 'redis': {
      const { openRedisReader } = await import('./redis/reader.ts');
      return openRedisReader({ url: storage.url, prefix: storage.prefix });
    }
  }
}
