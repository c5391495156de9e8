/**
 * Time-ordered ids (RFC 9562 UUIDv7): a 48-bit Unix millisecond timestamp,
 * then random bits. Rows keyed or indexed by these ids are appended at the
 * right edge of their B-trees, so one group commit touches a few pages; with
 * random (v4) ids every insert dirties a different leaf page and the
 * write-ahead log grows by a page per row.
 */
import { randomUUID } from 'node:crypto';

// the timestamp part of the last id: ids made in the same millisecond (most of them, under load) reuse it
let lastMs = -1;
let lastPrefix = '';

/** A UUIDv7 string. The random part comes from a v4 UUID, whose generator is buffered and cheap. */
export function uuidv7(now: number = Date.now()): string {
  const ms = Math.floor(now);
  if (ms !== lastMs) {
    const t = ms.toString(16).padStart(12, '0');
    lastMs = ms;
    lastPrefix = `${t.slice(0, 8)}-${t.slice(8, 12)}-7`;
  }
  const r = randomUUID(); // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: keep everything after the version digit
  return lastPrefix + r.slice(15);
}
