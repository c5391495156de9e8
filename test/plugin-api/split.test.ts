/**
 * Splitting a reply into parts: every rendered part fits the service's limit
 * in the service's unit, the cut falls at the coarsest boundary that fits,
 * code blocks are closed and reopened, surrogate pairs stay whole, and no
 * text is lost.
 */
import fc from 'fast-check';
import { Lexer } from 'marked';
import { describe, expect, it, vi } from 'vitest';
import { toDiscord, toPlainText, toSlackMrkdwn, toTelegramHtml, toWhatsApp } from '../../src/plugin-api/render.ts';
import { chunkLimit, TELEGRAM } from '../../src/plugin-api/limits.ts';
import { renderParts, utf16Length, utf8Length } from '../../src/plugin-api/split.ts';

const RENDERERS = { telegram: toTelegramHtml, slack: toSlackMrkdwn, discord: toDiscord, whatsapp: toWhatsApp, plain: toPlainText };

/** Non-whitespace characters of what a Telegram part shows: tags removed, entities decoded. */
function shownByTelegram(html: string): string {
  return html
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, '');
}

/** Tags open and close in order in each part. */
function balanced(html: string): boolean {
  const stack: string[] = [];
  for (const m of html.matchAll(/<(\/?)([a-z]+)[^>]*>/g)) {
    if (!m[1]) stack.push(m[2]!);
    else if (stack.pop() !== m[2]) return false;
  }
  return stack.length === 0;
}

function hasLoneSurrogate(s: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

// ---- generators -------------------------------------------------------------------------------------

/**
 * Words without Markdown syntax, so the text shown is the text written (with `&`, emoji and CJK).
 * No `<`: at the start of a line it can open an HTML block, whose lines mean something else once cut apart.
 */
const word = fc
  .array(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789&!?,é漢字😀🇫🇷'.split(/(?:)/u)), { minLength: 1, maxLength: 14 })
  .map((cs) => cs.join(''))
  .filter((w) => !/^\d+$/.test(w));
const line = fc.array(word, { minLength: 1, maxLength: 30 }).map((ws) => ws.join(' '));
const paragraph = fc.array(line, { minLength: 1, maxLength: 4 }).map((ls) => ls.join('\n'));
const codeBlock = fc
  .tuple(
    fc.constantFrom('', 'ts', 'py'),
    fc.array(
      fc.string({ unit: 'grapheme', maxLength: 60 }).map((s) => s.replace(/`/g, "'")),
      { minLength: 1, maxLength: 30 },
    ),
  )
  .map(([lang, ls]) => `\`\`\`${lang}\n${ls.map((l) => (l.trim() === '' ? 'x' : l)).join('\n')}\n\`\`\``);
const list = fc.array(line, { minLength: 1, maxLength: 8 }).map((ls) => ls.map((l) => `- ${l}`).join('\n'));
const heading = line.map((l) => `## ${l}`);
/** A list item holding a code block, and a quote holding one: cutting them must keep the fences. */
const itemWithCode = fc.tuple(line, codeBlock).map(([l, c]) => `- ${l}\n\n${c.replace(/^/gm, '  ')}`);
const quoteWithCode = fc.tuple(line, codeBlock).map(([l, c]) => `${l}\n\n${c}`.replace(/^/gm, '> '));
const plainDoc = fc
  .array(fc.oneof(paragraph, paragraph, codeBlock, list, heading, itemWithCode, quoteWithCode), { minLength: 1, maxLength: 12 })
  .map((bs) => bs.join('\n\n'));

/** Markdown with formatting, links and hostile text, for the limit and well-formedness properties. */
const richWord = fc.oneof(
  word,
  word.map((w) => `**${w}**`),
  word.map((w) => `_${w}_`),
  word.map((w) => `\`${w}\``),
  word.map((w) => `[${w}](https://example.com/${encodeURIComponent(w)}?a=1&b=2)`),
  fc.constantFrom('<b>', '</i>', '<!channel>', '@everyone', '&amp;', '"', '>', '*', '__', '\\'),
);
const richLine = fc.array(richWord, { minLength: 1, maxLength: 30 }).map((ws) => ws.join(' '));
const richDoc = fc
  .array(
    fc.oneof(
      richLine,
      richLine.map((l) => `> ${l}`),
      list,
      codeBlock,
      fc.string({ unit: 'grapheme', maxLength: 300 }),
    ),
    { minLength: 1, maxLength: 10 },
  )
  .map((bs) => bs.join('\n\n'));

// ---- properties ---------------------------------------------------------------------------------------

describe('renderParts() properties', () => {
  it('every part fits the limit, for every renderer, in UTF-16 units and in UTF-8 bytes', () => {
    fc.assert(
      fc.property(
        richDoc,
        fc.constantFrom(...Object.keys(RENDERERS)),
        fc.integer({ min: 60, max: 600 }),
        fc.boolean(),
        (md, name, limit, bytes) => {
          const measure = bytes ? utf8Length : utf16Length;
          const parts = renderParts(md, { render: RENDERERS[name as keyof typeof RENDERERS], limit, measure });
          for (const p of parts) {
            expect(measure(p)).toBeLessThanOrEqual(limit);
            expect(p.trim()).not.toBe('');
            expect(hasLoneSurrogate(p)).toBe(false);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('Telegram parts are each well-formed HTML', () => {
    fc.assert(
      fc.property(richDoc, fc.integer({ min: 120, max: 800 }), (md, limit) => {
        for (const p of renderParts(md, { render: toTelegramHtml, limit })) expect(balanced(p), p).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('no text is lost, repeated or reordered (plain text and Telegram)', () => {
    // quote marks are left out: a quote cut in two is quoted again in each part
    const text = (s: string) => s.replace(/[\s>]+/g, '');
    fc.assert(
      // from 120: Telegram's markup around one quoted code character is about 100 units
      fc.property(plainDoc, fc.integer({ min: 120, max: 500 }), (md, limit) => {
        const plain = renderParts(md, { render: toPlainText, limit });
        expect(text(plain.join(''))).toBe(text(toPlainText(md)));
        const tg = renderParts(md, { render: toTelegramHtml, limit });
        expect(text(tg.map(shownByTelegram).join(''))).toBe(text(shownByTelegram(toTelegramHtml(md))));
      }),
      { numRuns: 150 },
    );
  });

  it('a code block is never left open: each Discord part has its fences in pairs', () => {
    fc.assert(
      fc.property(plainDoc, fc.integer({ min: 60, max: 500 }), (md, limit) => {
        for (const p of renderParts(md, { render: toDiscord, limit })) {
          expect(p.match(/^[ >]*```/gm)?.length ?? 0, p).toSatisfy((n: number) => n % 2 === 0);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('hostile text yields only the markup the renderer writes', () => {
    const hostile = fc
      .array(fc.oneof(richWord, fc.string({ unit: 'grapheme', maxLength: 40 })), { maxLength: 40 })
      .map((ws) => ws.join(' '));
    fc.assert(
      fc.property(hostile, (md) => {
        for (const m of toTelegramHtml(md).matchAll(/<\/?([a-z]+)/g))
          expect(['b', 'i', 's', 'code', 'pre', 'a', 'blockquote']).toContain(m[1]);
        // Slack reads <…> as links and mentions: the only ones left are links the Markdown made
        for (const m of toSlackMrkdwn(md).matchAll(/<([^>]*)>/g)) expect(m[1]).toMatch(/^(https?:|mailto:)[^|]*\|/);
        expect(toDiscord(md)).not.toMatch(/@(everyone|here)/i);
      }),
      { numRuns: 200 },
    );
  });

  it('a reply that fits is one part, rendered whole', () => {
    fc.assert(
      fc.property(plainDoc, (md) => {
        const whole = toTelegramHtml(md);
        expect(renderParts(md, { render: toTelegramHtml, limit: whole.length })).toEqual([whole]);
      }),
      { numRuns: 50 },
    );
  });
});

// ---- examples ------------------------------------------------------------------------------------------

describe('renderParts() boundaries', () => {
  const para = (n: number, len: number) => `P${n} ${'x'.repeat(len - 3)}`;

  it('cuts between paragraphs when they fit, keeping as many per part as fit', () => {
    const md = [para(1, 40), para(2, 40), para(3, 40)].join('\n\n');
    expect(renderParts(md, { render: toPlainText, limit: 90 })).toEqual([`${para(1, 40)}\n\n${para(2, 40)}`, para(3, 40)]);
  });

  it('cuts a long paragraph at a line, then at a word, never mid-word', () => {
    const md = `${'alpha '.repeat(10).trim()}\n${'beta '.repeat(10).trim()}`;
    const parts = renderParts(md, { render: toPlainText, limit: 40 });
    for (const p of parts) expect(p).toMatch(/^(alpha|beta)( (alpha|beta))*$/);
    expect(parts.join(' ').split(' ')).toHaveLength(20);
  });

  it('keeps a link whole when cutting a paragraph', () => {
    const md = `${'word '.repeat(30)}[the link text](https://example.com/path) ${'word '.repeat(30)}`;
    const parts = renderParts(md, { render: toTelegramHtml, limit: 100 });
    expect(parts.some((p) => p.includes('<a href="https://example.com/path">the link text</a>'))).toBe(true);
  });

  it('closes a code block at the cut and reopens it with its language', () => {
    const code = Array.from({ length: 60 }, (_, i) => `line ${i} <x>`).join('\n');
    const md = `Intro\n\n\`\`\`py\n${code}\n\`\`\``;
    const tg = renderParts(md, { render: toTelegramHtml, limit: 300 });
    expect(tg[0]).toBe('Intro');
    for (const p of tg.slice(1)) expect(p).toMatch(/^<pre><code class="language-py">[^<]*<\/code><\/pre>$/);
    expect(
      tg
        .slice(1)
        .map((p) => p.replace(/<[^>]+>/g, ''))
        .join('\n'),
    ).toBe(code.replace(/</g, '&lt;').replace(/>/g, '&gt;'));
    const discord = renderParts(md, { render: toDiscord, limit: 300 });
    for (const p of discord.slice(1)) expect(p).toMatch(/^```py\n[^`]*\n```$/);
  });

  it('cuts a code line longer than the limit between characters, still inside the fence', () => {
    const md = `\`\`\`\n${'y'.repeat(1000)}\n\`\`\``;
    const parts = renderParts(md, { render: toDiscord, limit: 200 });
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(200);
      expect(p).toMatch(/^```\ny+\n```$/);
    }
    expect(parts.join('').replace(/[`\n]/g, '')).toHaveLength(1000);
  });

  it('never cuts a surrogate pair, even with an odd limit', () => {
    const parts = renderParts('😀'.repeat(500), { render: toPlainText, limit: 101 });
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(101);
      expect(hasLoneSurrogate(p)).toBe(false);
    }
    expect(parts.join('')).toBe('😀'.repeat(500));
  });

  it('measures Signal parts in UTF-8 bytes', () => {
    const md = 'Grüße ✓ 漢字 '.repeat(400);
    const parts = renderParts(md, { render: toPlainText, limit: 2000, measure: utf8Length });
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(2000);
    expect(parts.join(' ').replace(/\s+/g, ' ')).toBe(md.trim().replace(/\s+/g, ' '));
  });

  it('applies the limit to the rendered text: escaping can make a part too long', () => {
    const md = '&'.repeat(100);
    const parts = renderParts(md, { render: toTelegramHtml, limit: 100 });
    expect(parts).toHaveLength(5);
    for (const p of parts) expect(p).toBe('&amp;'.repeat(20));
  });

  it("splits a 9,000-character reply into ordered parts under Telegram's limit", () => {
    const md = Array.from({ length: 90 }, (_, i) => `Paragraph ${i}: ${'lorem ipsum '.repeat(8)}`).join('\n\n');
    expect(md.length).toBeGreaterThan(9000);
    const parts = renderParts(md, { render: toTelegramHtml, limit: 4096 });
    expect(parts).toHaveLength(3);
    const order = parts
      .join('\n\n')
      .match(/Paragraph \d+/g)!
      .map((s) => Number(s.split(' ')[1]));
    expect(order).toEqual(Array.from({ length: 90 }, (_, i) => i));
  });

  it.each([
    ['one long line of words', 'word & <x> '.repeat(5000)],
    ['one long line of different words', Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ')],
    ['no whitespace at all', 'x'.repeat(50_000)],
    ['many paragraphs', Array.from({ length: 500 }, (_, i) => `Paragraph ${i}: ${'lorem **ipsum** '.repeat(6)}`).join('\n\n')],
  ])('renders %s a bounded number of times (work grows with the reply, not its square)', (_name, md) => {
    let rendered = 0;
    const parts = renderParts(md, { render: (m) => ((rendered += m.length), toTelegramHtml(m)), limit: 4096 });
    expect(parts.length).toBeGreaterThan(1);
    expect(rendered).toBeLessThan(8 * md.length);
  });

  it.each([
    ['paragraphs', Array.from({ length: 1500 }, (_, i) => `Paragraph ${i}: ${'lorem **ipsum** '.repeat(4)}`).join('\n\n')],
    ['one long list', Array.from({ length: 2000 }, (_, i) => `- item ${i} with **bold** and \`code\``).join('\n')],
    ['one long quote', Array.from({ length: 3000 }, (_, i) => `> quoted line ${i} with *em*`).join('\n')],
    [
      'code blocks',
      Array.from({ length: 200 }, (_, i) => `Step ${i}:\n\n\`\`\`ts\n${'const x = run(1) && y < 2;\n'.repeat(12)}\`\`\``).join('\n\n'),
    ],
  ])('renders a reply far above the limit (%s) less than twice in all: parts are estimated, not rendered one by one', (_name, md) => {
    expect(md.length).toBeGreaterThan(50_000);
    let rendered = 0;
    const parts = renderParts(md, { render: (m) => ((rendered += m.length), toTelegramHtml(m)), limit: 4096 });
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(4096);
    expect(rendered).toBeLessThan(2 * md.length);
  });

  it.each([
    ['one long quote', Array.from({ length: 3000 }, (_, i) => `> quoted line ${i} with *em*`).join('\n')],
    ['one long line', Array.from({ length: 3000 }, (_, i) => `word${i} **b${i}** [l](https://x.y/${i})`).join(' ')],
    ['one list of long items', Array.from({ length: 20 }, (_, i) => `- item ${i}: ${'some words in the item '.repeat(200)}`).join('\n')],
  ])('lexes a reply far above the limit (%s) about twice in all: a block cut apart reuses its tokens', (_name, md) => {
    const lexSpy = vi.spyOn(Lexer, 'lex');
    try {
      renderParts(md, { render: toTelegramHtml, limit: 4096 });
      const lexed = lexSpy.mock.calls.reduce((n, [src]) => n + src.length, 0);
      expect(lexed).toBeLessThan(2.6 * md.length);
    } finally {
      lexSpy.mockRestore();
    }
  });

  it('textChunkLimit lowers the service limit, never raises it', () => {
    expect(chunkLimit(TELEGRAM, undefined)).toBe(4096);
    expect(chunkLimit(TELEGRAM, 1000)).toBe(1000);
    expect(chunkLimit(TELEGRAM, 10_000)).toBe(4096);
  });

  it('maxLines caps the lines of every part, beside the length limit', () => {
    const md = [
      'Intro line.',
      '',
      '```py',
      ...Array.from({ length: 40 }, (_, i) => `x${i} = ${i}`),
      '```',
      '',
      ...Array.from({ length: 30 }, (_, i) => `- item ${i}`),
    ].join('\n');
    const parts = renderParts(md, { render: toDiscord, limit: 2000, maxLines: 17 });
    expect(parts.length).toBeGreaterThan(3);
    for (const p of parts) {
      expect(p.split('\n').length).toBeLessThanOrEqual(17);
      expect(p.length).toBeLessThanOrEqual(2000);
    }
    expect(parts.join('\n')).toContain('x39 = 39');
    expect(parts.join('\n')).toContain('- item 29');
    // without it, the same reply is one part
    expect(renderParts(md, { render: toDiscord, limit: 2000 })).toHaveLength(1);
  });

  it.each(['', '   \n\t \n'])('a reply with nothing to show (%j) is no parts at all, for every renderer', (md) => {
    for (const render of Object.values(RENDERERS)) expect(renderParts(md, { render, limit: 100 })).toEqual([]);
  });

  it('a reply of only a link definition is no parts for the renderers that read Markdown (Discord shows it as written)', () => {
    for (const render of [toTelegramHtml, toSlackMrkdwn, toWhatsApp, toPlainText])
      expect(renderParts('[ref]: https://example.com', { render, limit: 100 })).toEqual([]);
  });

  it('rejects a limit below 1', () => {
    expect(() => renderParts('x', { render: toPlainText, limit: 0 })).toThrow(/limit/);
  });
});
