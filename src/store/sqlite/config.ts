/** The SQLite driver's form of `storage` (src/config/storage.ts), as `check` shows it. */
import type { SqliteStorage } from '../../config/storage.ts';

export function describeSqlite(s: SqliteStorage): string {
  return `sqlite ${s.path} (synchronous=${s.synchronous}, locking=${s.locking})`;
}
