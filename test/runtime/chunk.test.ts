/**
 * Splitting a reply to fit a channel's text limit: paragraph, then line, then
 * word boundaries, and never half of a surrogate pair.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../src/runtime/chunk.ts';

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

describe('chunkText()', () => {
  it.each([
    ['no limit', 'x'.repeat(5000), undefined],
    ['a limit of 0 (none)', 'x'.repeat(50), 0],
    ['a text within the limit', 'hello', 5],
    ['an empty text', '', 10],
  ])('returns the text whole for %s', (_what, text, max) => {
    expect(chunkText(text, max)).toEqual([text]);
  });

  it('splits at a paragraph break when one lies in the second half of the window', () => {
    const text = `${'a'.repeat(12)}\n\n${'b'.repeat(5)} ${'c'.repeat(5)}`;
    expect(chunkText(text, 20)).toEqual(['a'.repeat(12), 'bbbbb ccccc']);
  });

  it('prefers a line break to a space', () => {
    expect(chunkText('aaaaaa\nbbb ccc dddddd', 14)).toEqual(['aaaaaa\nbbb', 'ccc dddddd']);
  });

  it('splits at a space when there is no line break', () => {
    expect(chunkText('the quick brown fox jumps', 12)).toEqual(['the quick', 'brown fox', 'jumps']);
  });

  it('ignores a boundary in the first half of the window and cuts hard instead', () => {
    expect(chunkText(`ab ${'c'.repeat(20)}`, 10)).toEqual(['ab ccccccc', 'c'.repeat(10), 'ccc']);
  });

  it('drops the whitespace at each cut', () => {
    expect(chunkText('aaaa    \n\n   bbbb', 8)).toEqual(['aaaa', 'bbbb']);
  });

  it('keeps a surrogate pair together at a hard cut', () => {
    const text = `${'a'.repeat(9)}😀${'b'.repeat(9)}`;
    const chunks = chunkText(text, 10);
    expect(chunks).toEqual(['a'.repeat(9), `😀${'b'.repeat(8)}`, 'b']);
  });

  it('terminates with a limit of 1 and a surrogate pair at the start, keeping the pair whole', () => {
    expect(chunkText('😀😀x', 1)).toEqual(['😀', '😀', 'x']);
  });

  it('holds its promises for any text and limit', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '😀', 'é'), maxLength: 300 }),
        fc.integer({ min: 2, max: 40 }),
        (text, max) => {
          const chunks = chunkText(text, max);
          for (const c of chunks) {
            expect(c.length).toBeLessThanOrEqual(max);
            expect(isLow(c.charCodeAt(0))).toBe(false);
            expect(isHigh(c.charCodeAt(c.length - 1))).toBe(false);
          }
          // only whitespace at the cuts is dropped
          expect(chunks.join('').replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
          if (text.length > max) expect(chunks.every((c) => c.length > 0)).toBe(true);
        },
      ),
    );
  });
});
