/**
 * The ways a piece of Markdown can be cut into smaller pieces that join back into it, from blocks
 * (paragraphs, list items, quote lines, a code block's lines) down to words and characters. The
 * packing in split.ts tries them in that order.
 */
import type { Token, Tokens } from 'marked';
import { lex } from './render.ts';

/**
 * A way to cut one piece of Markdown into smaller ones that join back into it. `wrap` puts a run of
 * items back into its context (a code fence, a quote, a list item's marker); `first` says whether
 * the run starts the piece, so a list item's marker is written once, not on every part.
 */
export interface Level {
  items: string[];
  sep: string;
  wrap?(joined: string, first: boolean): string;
  /** How to cut one item further (`index` is its place among `items`). */
  deeper(item: string, index: number): Level | undefined;
}

/** Items `start` to `end` (exclusive) as Markdown. */
export function join(level: Level, start: number, end: number): string {
  const joined = level.items.slice(start, end).join(level.sep);
  return level.wrap ? level.wrap(joined, start === 0) : joined;
}

/** Code points, so a surrogate pair is never cut. */
function characters(text: string, wrap?: (s: string) => string): Level {
  return { items: Array.from(text), sep: '', ...(wrap ? { wrap } : {}), deeper: () => undefined };
}

/** Words with the whitespace after each, so they join back exactly. */
function words(line: string): Level | undefined {
  const items = line.split(/(?<=\s)(?=\S)/);
  if (items.length > 1) return { items, sep: '', deeper: (w) => characters(w) };
  return line.length > 1 ? characters(line) : undefined;
}

/**
 * A paragraph line as inline pieces (a link or a bold run stays whole), text runs cut into words.
 * `lexed` is the line's inline tokens when the paragraph is that one line (lexed already).
 */
function inlinePieces(line: string, lexed?: Token[]): Level | undefined {
  let inner = lexed;
  if (!inner) {
    const [t] = lex(line).filter((x) => x.type !== 'space');
    inner = t?.type === 'paragraph' ? t.tokens : undefined;
  }
  if (
    !inner ||
    inner
      .map((x) => x.raw)
      .join('')
      .trim() !== line.trim()
  )
    return words(line);
  const items: string[] = [];
  for (const x of inner) {
    if (x.type === 'text' || x.type === 'escape') items.push(...x.raw.split(/(?<=\s)(?=\S)/));
    else items.push(x.raw);
  }
  if (items.length <= 1) return words(line);
  return { items, sep: '', deeper: (w) => words(w) };
}

function fenceFor(code: string): string {
  let fence = '```';
  while (code.includes(fence)) fence += '`';
  return fence;
}

/** A code block's lines, each group wrapped in the block's own fence and language. */
function codeLines(t: Tokens.Code): Level {
  const lang = t.codeBlockStyle === 'indented' ? '' : String(t.lang ?? '');
  const fence = fenceFor(t.text);
  const wrap = (body: string) => `${fence}${lang}\n${body}\n${fence}`;
  return { items: t.text.split('\n'), sep: '\n', wrap, deeper: (line) => (line.length > 1 ? characters(line, wrap) : undefined) };
}

function lines(text: string, deeper: (line: string) => Level | undefined): Level | undefined {
  const items = text.split('\n');
  return items.length > 1 ? { items, sep: '\n', deeper } : deeper(text);
}

/**
 * A level whose pieces all sit inside `outer` (a quote, a list item), at every depth. `outer`
 * learns whether a piece starts the whole of what it wraps: only the first piece of the first
 * item, and so on down.
 */
function within(level: Level | undefined, outer: (s: string, first: boolean) => string, startsOuter = true): Level | undefined {
  if (!level) return undefined;
  const inner = level.wrap;
  return {
    ...level,
    wrap: (s, first) => outer(inner ? inner(s, first) : s, startsOuter && first),
    deeper: (item, index) => within(level.deeper(item, index), outer, startsOuter && index === 0),
  };
}

function quoted(s: string): string {
  return s
    .split('\n')
    .map((l) => (l === '' ? '>' : `> ${l}`))
    .join('\n');
}

/** A list item's content: the first part under the item's marker, the parts after it without. */
function listItem(item: Tokens.ListItem): Level | undefined {
  const marker = /^\s*(?:[-+*]|\d{1,9}[.)])[ \t]+/.exec(item.raw)?.[0];
  if (!marker || item.text.length >= item.raw.length) return undefined;
  const indent = ' '.repeat(marker.length);
  return within(levelOf(item.text, item.tokens), (s, first) => (first ? marker + s.split('\n').join(`\n${indent}`) : s));
}

/**
 * How to cut a piece of Markdown: its blocks, a list's items, a code block's lines, a block's lines,
 * a line's words. `lexed` is the Markdown's block tokens when a level above has them already: the
 * reply is lexed once, not again for each piece.
 */
export function levelOf(markdown: string, lexed?: Token[]): Level | undefined {
  const tokens = (lexed ?? lex(markdown)).filter((t) => t.type !== 'space' && t.type !== 'def');
  if (tokens.length > 1)
    return { items: tokens.map((t) => t.raw.replace(/\n+$/, '')), sep: '\n\n', deeper: (item, i) => levelOf(item, [tokens[i]!]) };
  const [t] = tokens as [Token | undefined];
  if (!t) return undefined;
  const raw = t.raw.replace(/\n+$/, '');
  if (t.type === 'code') return codeLines(t as Tokens.Code);
  if (t.type === 'list') {
    const items = (t as Tokens.List).items;
    if (items.length > 1) {
      // an item on its own is a list of that one item
      const alone = (i: number): Tokens.List => ({ ...(t as Tokens.List), raw: items[i]!.raw, items: [items[i]!] });
      return { items: items.map((i) => i.raw.replace(/\n+$/, '')), sep: '\n', deeper: (item, i) => levelOf(item, [alone(i)]) };
    }
    // one long item: cut its content (a code block inside stays fenced)
    const inside = items[0] ? listItem(items[0]) : undefined;
    if (inside) return inside;
  }
  if (t.type === 'blockquote') {
    // cut the quoted Markdown, each part quoted again
    const inside = within(levelOf((t as Tokens.Blockquote).text, (t as Tokens.Blockquote).tokens), quoted);
    if (inside) return inside;
  }
  if (t.type === 'paragraph') {
    const inline = (t as Tokens.Paragraph).tokens;
    return lines(raw, (line) => inlinePieces(line, line === raw ? inline : undefined));
  }
  return lines(raw, (line) => (line === raw ? words(line) : levelOf(line)));
}
