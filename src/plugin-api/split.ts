/**
 * Splits the agent's Markdown into the messages a service receives: each
 * part is rendered, and the service's limit applies to the rendered text,
 * measured in the service's own unit. The Markdown is cut at block
 * boundaries first (paragraphs, list items, quote lines), then lines, then
 * words, and only as a last resort between characters (never inside a
 * surrogate pair). A code block cut in two is closed at the end of one part
 * and reopened, with its language, at the start of the next.
 */
import { join, levelOf, type Level } from './levels.ts';

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

/** The parts made so far, and the rendering they share: a run that was checked is then emitted, rendered once. */
class Parts {
  readonly out: string[] = [];
  private lastMarkdown: string | undefined;
  private lastRendered = '';
  readonly limit: number;
  readonly measure: (text: string) => number;
  private readonly renderer: (markdown: string) => string;

  constructor(renderer: (markdown: string) => string, limit: number, measure: (text: string) => number) {
    this.renderer = renderer;
    this.limit = limit;
    this.measure = measure;
  }

  render(md: string): string {
    if (md !== this.lastMarkdown) {
      this.lastRendered = this.renderer(md).trim();
      this.lastMarkdown = md;
    }
    return this.lastRendered;
  }

  push(rendered: string): void {
    if (rendered !== '') this.out.push(rendered);
  }

  /** A rendering too long for a part that cannot be cut as Markdown, cut between characters. */
  pushCut(rendered: string): void {
    this.out.push(...hardSplit(rendered, this.limit, this.measure));
  }

  /**
   * One item: as it is when it fits, else cut further (or, for a lone character, cut its rendering).
   * An item estimated over the limit goes deeper without being rendered whole first: when the
   * estimate was wrong, its pieces all fit and still make one part.
   */
  emitItem(level: Level, index: number, over: boolean): void {
    if (over) {
      const deeper = level.deeper(level.items[index]!, index);
      if (deeper) return new LevelPacker(this, deeper).pack();
    }
    const rendered = this.render(join(level, index, index + 1));
    if (this.measure(rendered) <= this.limit) return this.push(rendered);
    const deeper = level.deeper(level.items[index]!, index);
    if (deeper) new LevelPacker(this, deeper).pack();
    else this.pushCut(rendered);
  }

  /** Items `start` to `end`, known to fit (or a single item, which may go deeper). */
  emitRun(level: Level, start: number, end: number, over = false): void {
    if (end - start === 1) this.emitItem(level, start, over);
    else if (end > start) this.push(this.render(join(level, start, end)));
  }
}

/**
 * Greedy packing of one level's items: as many per part as fit. Each item's size is estimated from
 * its Markdown, scaled by how much the last checked run grew or shrank in rendering, so items are not
 * rendered one by one (each would be lexed again); each run is then rendered once to check it, and
 * when the estimate was wrong, cut back to the longest run that fits.
 */
class LevelPacker {
  private readonly parts: Parts;
  private readonly level: Level;
  /** What the level's context adds to a run (a fence, a marker). */
  private readonly overhead: number;
  private readonly sepSize: number;
  private readonly rawSizes: number[];
  /** Rendered size over Markdown size, learnt from the last run checked. */
  private ratio = 1;

  constructor(parts: Parts, level: Level) {
    this.parts = parts;
    this.level = level;
    const { measure } = parts;
    // 'x' renders as itself everywhere: what remains is the context's markup
    const probe: Level = { ...level, items: ['x'] };
    this.overhead = Math.max(0, measure(parts.render(join(probe, 0, 1))) - measure('x'));
    this.sepSize = measure(level.sep);
    this.rawSizes = level.items.map((item) => measure(item));
  }

  pack(): void {
    // each flush emits at least one item, so this ends
    for (let start = 0; start < this.level.items.length; ) start = this.flush(start, this.estimatedEnd(start, this.level.items.length));
  }

  private rawOf(start: number, end: number): number {
    let n = 0;
    for (let i = start; i < end; i++) n += this.rawSizes[i]! + (i > start ? this.sepSize : 0);
    return n;
  }

  /** Renders items `start` to `end` and says whether they fit, learning the ratio from the answer. */
  private fits(start: number, end: number): boolean {
    const size = this.parts.measure(this.parts.render(join(this.level, start, end)));
    const raw = this.rawOf(start, end);
    if (raw > 0) this.ratio = Math.min(4, Math.max(0.25, Math.max(0, size - this.overhead) / raw));
    return size <= this.parts.limit;
  }

  /** The last index after `start` up to which the estimate stays within the limit (at least start + 1). */
  private estimatedEnd(start: number, end: number): number {
    let estimate = this.overhead;
    let i = start;
    for (; i < end; i++) {
      const next = estimate + (this.rawSizes[i]! + (i > start ? this.sepSize : 0)) * this.ratio;
      if (i > start && next > this.parts.limit) break;
      estimate = next;
    }
    return i;
  }

  /**
   * Emits the longest run from `start` (at most to `end`) that fits, and returns where the rest
   * starts. A run whose rendering is too long is cut back by the estimate learnt from it, a few
   * times, then by bisection.
   */
  private flush(start: number, end: number): number {
    let tooLong = end;
    let next = end;
    for (let tries = 0; tries < GUESSES; tries++) {
      if (next - start <= 1) {
        this.parts.emitRun(this.level, start, next, this.overhead + this.rawSizes[start]! * this.ratio > this.parts.limit);
        return next;
      }
      if (this.fits(start, next)) {
        this.parts.emitRun(this.level, start, next);
        return next;
      }
      tooLong = next;
      next = Math.min(this.estimatedEnd(start, next), next - 1);
    }
    // start..lo fits (one item counts as fitting: it goes deeper), start..hi does not
    let lo = start + 1;
    let hi = tooLong;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (this.fits(start, mid)) lo = mid;
      else hi = mid;
    }
    this.parts.emitRun(this.level, start, lo);
    return lo;
  }
}

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
  const parts = new Parts(opts.render, limit, measure);
  // a reply many times the limit is not rendered whole: it cannot fit, and rendering costs
  if (measure(source) <= FAST_PATH * limit) {
    const whole = parts.render(source);
    if (measure(whole) <= limit) {
      parts.push(whole);
      return parts.out;
    }
  }
  const level = levelOf(source);
  if (level) new LevelPacker(parts, level).pack();
  else parts.pushCut(parts.render(source));
  return parts.out;
}
