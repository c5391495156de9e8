/**
 * What the store says of a storage config, whatever its driver (src/config/storage.ts): whether the
 * store can use it (`storageIssues`, checked with the rest of the config when a generation is built),
 * how `check` shows it (`describeStorage`), and what the server's own settings mean for an answered
 * write (`inspectStorage`). Each driver answers for its form (sqlite/config.ts, redis/config.ts), so
 * nothing above the store knows a driver's details. Light to import: no driver is opened or loaded.
 */
import type { StorageConfig } from '../config/storage.ts';
import { describeRedis, redisIssues } from './redis/config.ts';
import { describeSqlite } from './sqlite/config.ts';

/** A problem with the storage config, by its key path (`storage.url`). */
export interface StorageIssue {
  path: string;
  message: string;
}

export function storageIssues(storage: StorageConfig): StorageIssue[] {
  return storage.driver === 'redis' ? redisIssues(storage) : [];
}

/** One line for `check`: the driver, where its data is and how it is kept (never a password). */
export function describeStorage(storage: StorageConfig): string {
  return storage.driver === 'redis' ? describeRedis(storage) : describeSqlite(storage);
}

/**
 * What `check` says of the server behind the config, when there is one to ask (Redis: whether it
 * persists what it acknowledges); undefined for a local file.
 */
export async function inspectStorage(storage: StorageConfig): Promise<{ line: string; warnings: string[] } | undefined> {
  if (storage.driver !== 'redis') return undefined;
  // ioredis is loaded only when there is a Redis server to ask
  const { checkRedis } = await import('./redis/durability.ts');
  return checkRedis(storage.url);
}
