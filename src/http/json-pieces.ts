/**
 * A list answer written in pieces: `{...head, "<key>": [items]}`, the same text as `JSON.stringify`
 * gives, serialised about PIECE_CHARS characters per turn of the event loop. A list of 10,000 events is
 * megabytes of JSON, which in one `JSON.stringify` held the loop too long (measured: docs/performance.md,
 * "Reads on a large store").
 */
import { Readable } from 'node:stream';

/** Characters serialised per turn: a fraction of a millisecond of `JSON.stringify`. */
export const PIECE_CHARS = 64 * 1024;

export function jsonList(head: Record<string, unknown>, key: string, items: readonly unknown[]): Readable {
  const headText = JSON.stringify(head);
  const open = `${headText.slice(0, -1)}${headText === '{}' ? '' : ','}${JSON.stringify(key)}:[`;
  async function* pieces(): AsyncGenerator<string> {
    let piece = open;
    for (let i = 0; i < items.length; i++) {
      piece += (i ? ',' : '') + JSON.stringify(items[i]);
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = '';
        // without this, the stream would pull the next piece in the same turn, on a promise
        await new Promise((r) => setImmediate(r));
      }
    }
    yield `${piece}]}`;
  }
  return Readable.from(pieces(), { objectMode: false });
}
