/**
 * Time-ordered ids (RFC 9562 UUIDv7): a 48-bit Unix millisecond timestamp, a
 * 12-bit counter within that millisecond (RFC 9562 §6.2, method 1), then 62
 * random bits. Ids made one after another sort in the order they were made,
 * so rows keyed or indexed by them are appended at the right edge of their
 * B-trees and one group commit touches a few pages. With random tails (v4, or
 * v7 without the counter) the ids of one millisecond land in random order, and
 * an index whose rows are inserted long after their ids were made (a
 * transcript row of a run that waited in a backlog) dirties a page per row.
 */
import { randomUUID } from 'node:crypto';

// the timestamp part of the last id: ids made in the same millisecond (most of them, under load) reuse it
let lastMs = -1;
let lastPrefix = '';
let counter = 0;

// A new millisecond's counter starts at a random value below 0x800: at least 2,048 ids per
// millisecond stay in order, and the count of ids made says nothing about the next id.
const seed = () => Math.floor(Math.random() * 0x800);

/**
 * A UUIDv7 string. The random part comes from a v4 UUID, whose generator is
 * buffered and cheap. The timestamp is `now` as given (a clock that steps back
 * gives an id that sorts before the last one); within one millisecond the ids
 * increase until the counter passes 0xfff (at least 2,048 ids into the millisecond); the
 * ids after that stay unique but not in order.
 */
export function uuidv7(now: number = Date.now()): string {
  const ms = Math.floor(now);
  if (ms !== lastMs) {
    const t = ms.toString(16).padStart(12, '0');
    lastMs = ms;
    lastPrefix = `${t.slice(0, 8)}-${t.slice(8, 12)}-7`;
    counter = seed();
  } else if (++counter > 0xfff) counter = seed();
  const r = randomUUID(); // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: keep the variant digit and what follows
  return lastPrefix + counter.toString(16).padStart(3, '0') + r.slice(18);
}
