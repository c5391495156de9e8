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
}

/** UTF-16 code units: what JavaScript, Telegram, Discord and Slack count. */
export function utf16Length(text: string): number {
  return text.length;
}

/** UTF-8 bytes: what Signal counts. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** A way to cut one piece of Markdown into smaller ones that join back into it. */
interface Level {
  items: string[];
  sep: string;
  /** Puts the joined items back into their context (a code fence); identity by default. */
  wrap?(joined: string): string;
  /** How to cut one item further. */
  deeper(item: string): Level | undefined;
}

function join(level: Level, items: string[]): string {
  const joined = items.join(level.sep);
  return level.wrap ? level.wrap(joined) : joined;
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

/** A paragraph line as inline pieces (a link or a bold run stays whole), text runs cut into words. */
function inlinePieces(line: string): Level | undefined {
  const [t] = lex(line).filter((x) => x.type !== 'space');
  const inner = t?.type === 'paragraph' ? t.tokens : undefined;
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

/** How to cut a piece of Markdown: its blocks, a list's items, a code block's lines, a block's lines, a line's words. */
function levelOf(markdown: string): Level | undefined {
  const tokens = lex(markdown).filter((t) => t.type !== 'space' && t.type !== 'def');
  if (tokens.length > 1) return { items: tokens.map((t) => t.raw.replace(/\n+$/, '')), sep: '\n\n', deeper: levelOf };
  const [t] = tokens as [Token | undefined];
  if (!t) return undefined;
  const raw = t.raw.replace(/\n+$/, '');
  if (t.type === 'code') return codeLines(t as Tokens.Code);
  if (t.type === 'list' && (t as Tokens.List).items.length > 1) {
    return { items: (t as Tokens.List).items.map((i) => i.raw.replace(/\n+$/, '')), sep: '\n', deeper: levelOf };
  }
  if (t.type === 'paragraph') return lines(raw, inlinePieces);
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

/** Renders `markdown` into parts that each measure at most `limit`, in order. */
export function renderParts(markdown: string, opts: RenderPartsOptions): string[] {
  const measure = opts.measure ?? utf16Length;
  const { limit } = opts;
  if (!(limit >= 1)) throw new RangeError('renderParts: limit must be at least 1');
  const source = markdown.replace(/\r\n?/g, '\n');
  const render = (md: string): string => opts.render(md).trim();
  const out: string[] = [];

  const emit = (md: string, rendered = render(md)): void => {
    if (rendered === '') return;
    if (measure(rendered) <= limit) {
      out.push(rendered);
      return;
    }
    const level = levelOf(md);
    if (level) pack(level);
    else out.push(...hardSplit(rendered, limit, measure));
  };

  const emitItem = (level: Level, item: string): void => {
    const rendered = render(join(level, [item]));
    if (rendered === '' || measure(rendered) <= limit) {
      if (rendered !== '') out.push(rendered);
      return;
    }
    const deeper = level.deeper(item);
    if (!deeper) {
      out.push(...hardSplit(rendered, limit, measure));
      return;
    }
    pack(deeper);
  };

  /** Renders a group of items that is known to fit (or a single item, which may go deeper). */
  const emitGroup = (level: Level, group: string[]): void => {
    if (group.length === 1) emitItem(level, group[0]!);
    else if (group.length > 1) {
      const rendered = render(join(level, group));
      if (rendered !== '') out.push(rendered);
    }
  };

  const fits = (level: Level, items: string[]): boolean => measure(render(join(level, items))) <= limit;

  /**
   * Emits `group` when its rendering fits. Rendering is not quite additive, so when the estimate was
   * wrong the longest prefix that fits is found by bisection and emitted, until what is left fits;
   * that is returned to start the next part.
   */
  const flush = (level: Level, group: string[]): string[] => {
    if (group.length <= 1 || fits(level, group)) {
      emitGroup(level, group);
      return [];
    }
    let rest = group;
    while (rest.length > 1 && !fits(level, rest)) {
      // rest[0..lo) fits (one item always counts as fitting: it goes deeper), rest[0..hi) does not
      let lo = 1;
      let hi = rest.length;
      while (hi - lo > 1) {
        const mid = (lo + hi) >>> 1;
        if (fits(level, rest.slice(0, mid))) lo = mid;
        else hi = mid;
      }
      emitGroup(level, rest.slice(0, lo));
      rest = rest.slice(lo);
    }
    return rest;
  };

  /** Greedy: as many items per part as fit, estimated from each item's rendered size, then checked. */
  const pack = (level: Level): void => {
    // 'x' renders as itself everywhere: what remains is the context's markup (a code fence)
    const overhead = Math.max(0, measure(render(join(level, ['x']))) - measure('x'));
    const sepSize = measure(level.sep);
    const known = new Map<string, number>();
    // rendering trims, so an item's trailing whitespace (a word's space) is added back
    const sizeOf = (item: string): number => {
      let size = known.get(item);
      if (size === undefined) {
        size = Math.max(0, measure(render(join(level, [item]))) - overhead) + measure(/\s*$/.exec(item)![0]);
        known.set(item, size);
      }
      return size;
    };
    let group: string[] = [];
    let estimate = overhead;
    for (const item of level.items) {
      const size = sizeOf(item);
      if (group.length > 0 && estimate + sepSize + size > limit) {
        group = flush(level, group);
        estimate = overhead + group.reduce((sum, it, i) => sum + sizeOf(it) + (i > 0 ? sepSize : 0), 0);
      }
      estimate += size + (group.length > 0 ? sepSize : 0);
      group.push(item);
    }
    while (group.length > 0) group = flush(level, group);
  };

  emit(source);
  return out.filter((p) => p !== '');
}
