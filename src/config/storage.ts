/**
 * `storage`: one object per driver, told apart by `driver` (`sqlite` when absent), each with its own
 * keys and defaults (docs/configuration.md). ajv picks the branch by `driver` (its `discriminator`
 * keyword), so an error names a key of that driver's form, and fills that branch's defaults.
 *
 * A branch also takes the other driver's keys, as the config took them before it was split (a config
 * that switched drivers keeps working); rules.ts drops them, and refuses `url` without the redis driver.
 * Whether a url or path is usable is the store's to say (src/store/config.ts), not the config's.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const strict = { additionalProperties: false } as const;

/** Keys every driver takes. */
const commonKeys = {
  timeoutSeconds: Type.Number({
    minimum: 0.1,
    maximum: 300,
    default: 5,
    description: 'how long a request waits on the store before it is answered 503 STORAGE_UNAVAILABLE (docs/redis.md, "Timeouts")',
  }),
};

const sqliteKeys = {
  driver: Type.Literal('sqlite', {
    description: 'sqlite: one instance on a local file; redis: several instances sharing one Redis server (docs/redis.md)',
  }),
  path: Type.Optional(Type.String({ minLength: 1, description: 'the database file (default: hook-intake.db in the data directory)' })),
  synchronous: Type.Union([Type.Literal('normal'), Type.Literal('full')], { default: 'normal' }),
  locking: Type.Union([Type.Literal('exclusive'), Type.Literal('normal')], {
    default: 'exclusive',
    description: 'exclusive: the server holds the database file while it runs; normal: other processes may read it live',
  }),
  ...commonKeys,
};

const redisKeys = {
  driver: Type.Literal('redis'),
  // optional here so that its absence gets rules.ts's message; required once the config is loaded
  url: Type.Optional(Type.String({ minLength: 1, description: 'redis://host:port/db, rediss://… or unix:///path/to/redis.sock' })),
  prefix: Type.String({ minLength: 1, default: 'hook-intake:', description: 'prepended to every key' }),
  instanceTimeoutSeconds: Type.Number({
    minimum: 0.5,
    maximum: 3600,
    default: 10,
    description: 'how long after an instance stops the others take over its runs, heartbeat and deliveries',
  }),
  ...commonKeys,
};

/** The other driver's keys: accepted, not used (rules.ts drops them). */
const other = (keys: Record<string, TSchema>, driver: string) =>
  Object.fromEntries(
    Object.keys(keys)
      .filter((k) => k !== 'driver' && !(k in commonKeys))
      .map((k) => [k, Type.Optional(Type.Unknown({ description: `${driver} driver only; not used by this one` }))]),
  );

const SqliteStorageSchema = Type.Object(sqliteKeys, strict);
const RedisStorageSchema = Type.Object(redisKeys, strict);

/** The SQLite driver's settings; `path` is resolved by rules.ts (the data directory's `hook-intake.db` when absent). */
export type SqliteStorage = Omit<Static<typeof SqliteStorageSchema>, 'path'> & { path: string };
/** The Redis driver's settings; `url` is required (rules.ts says so when it is missing). */
export type RedisStorage = Omit<Static<typeof RedisStorageSchema>, 'url'> & { url: string };
export type StorageConfig = SqliteStorage | RedisStorage;
export type StorageDriver = StorageConfig['driver'];
export const STORAGE_DRIVERS: readonly StorageDriver[] = ['sqlite', 'redis'];

/** Each driver's own keys (`driver` aside), for rules.ts to drop the other's. */
export const storageKeys: Record<StorageDriver, readonly string[]> = {
  sqlite: Object.keys(sqliteKeys).filter((k) => k !== 'driver' && !(k in commonKeys)),
  redis: Object.keys(redisKeys).filter((k) => k !== 'driver' && !(k in commonKeys)),
};

export const StorageSchema = Type.Unsafe<StorageConfig>({
  type: 'object',
  // `driver` is filled in before the branch is picked: absent, it is sqlite
  properties: { driver: Type.Union([Type.Literal('sqlite'), Type.Literal('redis')], { default: 'sqlite' }) },
  required: ['driver'],
  discriminator: { propertyName: 'driver' },
  oneOf: [
    Type.Object({ ...sqliteKeys, ...other(redisKeys, 'redis') }, strict),
    Type.Object({ ...redisKeys, ...other(sqliteKeys, 'sqlite') }, strict),
  ],
  default: {},
});
