/**
 * Opens the store the configuration names (`storage.driver`). Everything above the store uses the
 * `Store` interface only; a driver's own options and tricks stay in its folder.
 */
import type { Config } from '../config/schema.ts';
import { SqliteStore } from './sqlite/store.ts';
import type { Store } from './types.ts';

export { StoreInUseError, StoreOpenError, StoreSchemaError } from './errors.ts';
export type { Store } from './types.ts';

export async function openStore(storage: Config['storage']): Promise<Store> {
  switch (storage.driver) {
    case 'sqlite':
      return new SqliteStore({ path: storage.path!, synchronous: storage.synchronous, locking: storage.locking });
  }
  throw new Error(`storage.driver: unknown driver ${JSON.stringify(storage.driver)}`);
}
