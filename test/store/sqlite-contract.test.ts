/** The SQLite driver against the store and queue contracts, each case on a new file. */
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { storeContract } from './contract.ts';
import { queueContract } from './queue-contract.ts';

const dir = tempDir('hook-intake-contract-');
afterAll(() => cleanup(dir));
let n = 0;

storeContract('sqlite', async () => new SqliteStore({ path: join(dir, `${++n}.db`) }));
queueContract('sqlite', async ({ clock }) => new SqliteStore({ path: join(dir, `${++n}.db`), clock }));
