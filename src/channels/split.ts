/**
 * Splits the agent's Markdown into the messages a service receives: each
 * part is rendered, and the service's limit applies to the rendered text,
 * measured in the service's own unit. The Markdown is cut at block
 * boundaries first (paragraphs, list items, quote lines), then lines, then
 * words, and only as a last resort between characters (never inside a
 * surrogate pair). A code block cut in two is closed at the end of one part
 * and reopened, with its language, at the start of the next.
 */
import type { Token, Tokens } from 'marked';
import { lex } from './render.ts';

export interface RenderPartsOptions {
  /** Markdown → the service's text (one of the renderers in render.ts). */
  render(markdown: string): string;
  /** Longest part, in `measure`'s unit. */
  limit: number;
  /** Size of a rendered text; UTF-16 code units (string length) unless given. */
  measure?(text: string): number;
  /** Most lines in a part (Discord folds taller messages away); no limit unless given. */
  maxLines?: number;
}

/** UTF-16 code units: what JavaScript, Telegram, Discord and Slack count. */
export function utf16Length(text: string): number {
  return text.length;
}

function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * One size for both limits: the text's own size, or each line's share of the limit when that is
 * more; so a size within `limit` means both the length and the line count are within theirs, and
 * the packing below needs no second measure.
 */
function withLines(measure: (text: string) => number, limit: number, maxLines: number | undefined): (text: string) => number {
  if (maxLines === undefined) return measure;
  if (!(maxLines >= 1)) throw new RangeError('renderParts: maxLines must be at least 1');
  return (text) => Math.max(measure(text), (lineCount(text) * limit) / maxLines);
}

/** UTF-8 bytes: what Signal counts. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * A way to cut one piece of Markdown into smaller ones that join back into it. `wrap` puts a run of
 * items back into its context (a code fence, a quote, a list item's marker); `first` says whether
 * the run starts the piece, so a list item's marker is written once, not on every part.
 */
interface Level {
  items: string[];
  sep: string;
  wrap?(joined: string, first: boolean): string;
  /** How to cut one item further (`index` is its place among `items`). */
  deeper(item: string, index: number): Level | undefined;
}

/** Items `start` to `end` (exclusive) as Markdown. */
function join(level: Level, start: number, end: number): string {
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
  if (!inner || inner.map((x) => x.raw).join('').trim() !== line.trim()) return words(line);
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
function levelOf(markdown: string, lexed?: Token[]): Level | undefined {
  const tokens = (lexed ?? lex(markdown)).filter((t) => t.type !== 'space' && t.type !== 'def');
  if (tokens.length > 1) return { items: tokens.map((t) => t.raw.replace(/\n+$/, '')), sep: '\n\n', deeper: (item, i) => levelOf(item, [tokens[i]!]) };
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

/** Cuts a rendered text by code points; only for a single character whose rendering exceeds the limit. */
function hardSplit(text: string, limit: number, measure: (s: string) => number): string[] {
  const out: string[] = [];
  let cur = '';
  for (const ch of text) {
    if (cur && measure(cur + ch) > limit) {
      out.push(cur);
      cur = '';
    }
    cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

/** Markdown longer than this many limits is cut without first rendering it whole to see if it fits. */
const FAST_PATH = 4;
/** Cut-backs by estimate before a run that does not fit is bisected. */
const GUESSES = 3;

/**
 * Renders `markdown` into parts that each measure at most `limit`, in order. A limit smaller than
 * the markup around a single character (about 100 UTF-16 units for a quoted code block in
 * Telegram HTML) still holds, but then that markup is cut: service limits are far above it.
 */
export function renderParts(markdown: string, opts: RenderPartsOptions): string[] {
  const { limit } = opts;
  if (!(limit >= 1)) throw new RangeError('renderParts: limit must be at least 1');
  const measure = withLines(opts.measure ?? utf16Length, limit, opts.maxLines);
  const source = markdown.replace(/\r\n?/g, '\n');
  // a run that was checked is then emitted: the same text, rendered once
  let lastMarkdown: string | undefined;
  let lastRendered = '';
  const render = (md: string): string => {
    if (md !== lastMarkdown) {
      lastRendered = opts.render(md).trim();
      lastMarkdown = md;
    }
    return lastRendered;
  };
  const out: string[] = [];
  const push = (rendered: string): void => {
    if (rendered !== '') out.push(rendered);
  };

  /**
   * One item: as it is when it fits, else cut further (or, for a lone character, cut its rendering).
   * An item estimated over the limit goes deeper without being rendered whole first: when the
   * estimate was wrong, its pieces all fit and still make one part.
   */
  const emitItem = (level: Level, index: number, over: boolean): void => {
    if (over) {
      const deeper = level.deeper(level.items[index]!, index);
      if (deeper) return pack(deeper);
    }
    const rendered = render(join(level, index, index + 1));
    if (measure(rendered) <= limit) return push(rendered);
    const deeper = level.deeper(level.items[index]!, index);
    if (deeper) pack(deeper);
    else out.push(...hardSplit(rendered, limit, measure));
  };

  /** Items `start` to `end`, known to fit (or a single item, which may go deeper). */
  const emitRun = (level: Level, start: number, end: number, over = false): void => {
    if (end - start === 1) emitItem(level, start, over);
    else if (end > start) push(render(join(level, start, end)));
  };

  /**
   * Greedy: as many items per part as fit. Each item's size is estimated from its Markdown, scaled
   * by how much the last checked run grew or shrank in rendering, so items are not rendered one by
   * one (each would be lexed again); each run is then rendered once to check it, and when the
   * estimate was wrong, cut back to the longest run that fits.
   */
  const pack = (level: Level): void => {
    // 'x' renders as itself everywhere: what remains is the context's markup (a fence, a marker)
    const probe: Level = { ...level, items: ['x'] };
    const overhead = Math.max(0, measure(render(join(probe, 0, 1))) - measure('x'));
    const sepSize = measure(level.sep);
    const rawSizes = level.items.map((item) => measure(item));
    let ratio = 1;
    const rawOf = (start: number, end: number): number => {
      let n = 0;
      for (let i = start; i < end; i++) n += rawSizes[i]! + (i > start ? sepSize : 0);
      return n;
    };

    /** Renders items `start` to `end` and says whether they fit, learning the ratio from the answer. */
    const fits = (start: number, end: number): boolean => {
      const size = measure(render(join(level, start, end)));
      const raw = rawOf(start, end);
      if (raw > 0) ratio = Math.min(4, Math.max(0.25, Math.max(0, size - overhead) / raw));
      return size <= limit;
    };

    /** The last index after `start` up to which the estimate stays within the limit (at least start + 1). */
    const estimatedEnd = (start: number, end: number): number => {
      let estimate = overhead;
      let i = start;
      for (; i < end; i++) {
        const next = estimate + (rawSizes[i]! + (i > start ? sepSize : 0)) * ratio;
        if (i > start && next > limit) break;
        estimate = next;
      }
      return i;
    };

    /**
     * Emits the longest run from `start` (at most to `end`) that fits, and returns where the rest
     * starts. A run whose rendering is too long is cut back by the estimate learnt from it, a few
     * times, then by bisection.
     */
    const flush = (start: number, end: number): number => {
      let tooLong = end;
      let next = end;
      for (let tries = 0; tries < GUESSES; tries++) {
        if (next - start <= 1) {
          emitRun(level, start, next, overhead + rawSizes[start]! * ratio > limit);
          return next;
        }
        if (fits(start, next)) {
          emitRun(level, start, next);
          return next;
        }
        tooLong = next;
        next = Math.min(estimatedEnd(start, next), next - 1);
      }
      // start..lo fits (one item counts as fitting: it goes deeper), start..hi does not
      let lo = start + 1;
      let hi = tooLong;
      while (hi - lo > 1) {
        const mid = (lo + hi) >>> 1;
        if (fits(start, mid)) lo = mid;
        else hi = mid;
      }
      emitRun(level, start, lo);
      return lo;
    };

    // each flush emits at least one item, so this ends
    for (let start = 0; start < level.items.length; ) start = flush(start, estimatedEnd(start, level.items.length));
  };

  // a reply many times the limit is not rendered whole: it cannot fit, and rendering costs
  if (measure(source) <= FAST_PATH * limit) {
    const whole = render(source);
    if (measure(whole) <= limit) {
      push(whole);
      return out;
    }
  }
  const level = levelOf(source);
  if (level) pack(level);
  else out.push(...hardSplit(render(source), limit, measure));
  return out;
}
