/**
 * A list answer serialised in pieces: the same text as `JSON.stringify` of
 * the whole answer, written a piece per turn of the event loop.
 */
import { describe, expect, it } from 'vitest';
import { jsonList, PIECE_CHARS } from '../../src/http/json-pieces.ts';
import { turnsDuring } from '../helpers/turns.ts';

/** The stream's text, its pieces, and how many turns of the event loop other work had while it was read. */
async function read(stream: AsyncIterable<Buffer | string>): Promise<{ text: string; pieces: number; turns: number }> {
  const { result, turns } = await turnsDuring(async () => {
    let text = '';
    let pieces = 0;
    for await (const chunk of stream) {
      text += String(chunk);
      pieces++;
    }
    return { text, pieces };
  });
  return { ...result, turns };
}

describe('jsonList()', () => {
  it.each([
    [{ ok: true }, 'runs', []],
    [{}, 'events', [{ a: 1 }]],
    [
      { ok: true, sessionKey: 'hook:a/b"c' },
      'messages',
      [{ content: 'é\u2028\ud800', n: null, skipped: undefined }, { x: [1, { y: 'z' }] }],
    ],
  ])('writes %j with its list under %s exactly as JSON.stringify does', async (head, key, items) => {
    expect((await read(jsonList(head, key, items))).text).toBe(JSON.stringify({ ...head, [key]: items }));
  });

  it('writes a long list a piece per turn of the event loop', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ id: `event-${i}`, text: 'x'.repeat(500) }));
    const { text, pieces, turns } = await read(jsonList({ ok: true }, 'events', items));
    expect(text).toBe(JSON.stringify({ ok: true, events: items }));
    expect(pieces).toBeGreaterThanOrEqual(Math.floor(text.length / PIECE_CHARS));
    expect(turns).toBeGreaterThanOrEqual(pieces - 1);
  });
});
