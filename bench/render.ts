/**
 * `node bench/render.ts`: how long rendering and splitting a reply takes per
 * channel renderer, for prose and for Markdown with code blocks, at 4, 20 and
 * 100 KB. The outbox renders in the service process, so this time is time
 * every other request waits.
 */
import { DISCORD, IMESSAGE, MATTERMOST, MSTEAMS, SIGNAL, SLACK, TELEGRAM, WHATSAPP, type ServiceLimit } from '../src/plugin-api/limits.ts';
import {
  toDiscord,
  toMattermost,
  toPlainText,
  toSlackMrkdwn,
  toTeamsMarkdown,
  toTelegramHtml,
  toWhatsApp,
} from '../src/plugin-api/render.ts';
import { renderParts, type RenderPartsOptions } from '../src/plugin-api/split.ts';

const CHANNELS: Record<string, { render(md: string): string; service: ServiceLimit; maxLines?: number }> = {
  telegram: { render: toTelegramHtml, service: TELEGRAM },
  slack: { render: toSlackMrkdwn, service: SLACK },
  whatsapp: { render: toWhatsApp, service: WHATSAPP },
  discord: { render: toDiscord, service: DISCORD, maxLines: 17 },
  mattermost: { render: toMattermost, service: MATTERMOST },
  msteams: { render: toTeamsMarkdown, service: MSTEAMS },
  signal: { render: toPlainText, service: SIGNAL },
  imessage: { render: toPlainText, service: IMESSAGE },
};

function prose(bytes: number): string {
  const out: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const p =
      `Paragraph ${i}: the quick brown fox jumps over the lazy dog, and then it considers the state of affairs at some length before it moves on. `
        .repeat(3)
        .trim();
    out.push(p);
    size += p.length + 2;
  }
  return out.join('\n\n');
}

function markdown(bytes: number): string {
  const out: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const block = [
      `## Step ${i}`,
      '',
      `Some **bold** text, *emphasis*, \`inline < code\` and a [link](https://example.com/${i}?a=1&b=2) in step ${i}.`,
      '',
      `- first item of ${i}`,
      `- second item with **weight**`,
      '',
      '```ts',
      ...Array.from({ length: 8 }, (_, j) => `const step_${i}_${j} = run("job-${i}-${j}") && check(${j} < limit);`),
      '```',
      '',
      `> A quoted remark about step ${i}.`,
    ].join('\n');
    out.push(block);
    size += block.length + 2;
  }
  return out.join('\n\n');
}

function ms(f: () => unknown, runs: number): number {
  f();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  // the fastest run: on a shared machine the others measure the neighbours too
  return Math.min(...times);
}

const only = process.argv[2];
process.stdout.write(
  `${'renderer'.padEnd(11)} ${'reply'.padEnd(9)} ${'4 KB'.padStart(8)} ${'20 KB'.padStart(8)} ${'100 KB'.padStart(8)}  (fastest ms, parts at 100 KB)\n`,
);
for (const [name, c] of Object.entries(CHANNELS)) {
  if (only && name !== only) continue;
  for (const [kind, make] of [
    ['prose', prose],
    ['markdown', markdown],
  ] as const) {
    const opts: RenderPartsOptions = {
      render: c.render,
      limit: c.service.limit,
      measure: c.service.measure,
      ...(c.maxLines ? { maxLines: c.maxLines } : {}),
    };
    const cells = [4, 20, 100].map((kb) => ms(() => renderParts(make(kb * 1024), opts), kb === 100 ? 9 : 15));
    const parts = renderParts(make(100 * 1024), opts).length;
    process.stdout.write(`${name.padEnd(11)} ${kind.padEnd(9)} ${cells.map((x) => x.toFixed(1).padStart(8)).join(' ')}  ${parts}\n`);
  }
}

/** 100 KB that is one block: the splitter has to go inside it. */
function fill(unit: (i: number) => string, sep: string): string {
  const out: string[] = [];
  for (let i = 0, size = 0; size < 100 * 1024; i++) {
    const u = unit(i);
    out.push(u);
    size += u.length + sep.length;
  }
  return out.join(sep);
}
const BLOCKS: Record<string, string> = {
  'one list': fill((i) => `- item ${i} with **bold** and \`code\` and more words here`, '\n'),
  'nested list': fill((i) => `- item ${i}\n  - sub ${i} with words\n    - subsub \`${i}\``, '\n'),
  'one quote': fill((i) => `> quoted line ${i} with *em* text`, '\n'),
  'one table': `| a | b |\n|---|---|\n${fill((i) => `| ${i} | cell **${i}** |`, '\n')}`,
  'one line': fill((i) => `word${i} **b${i}** [l](https://x.y/${i})`, ' '),
  'one code block': `\`\`\`py\n${fill((i) => `x_${i} = compute(${i})  # a comment about ${i}`, '\n')}\n\`\`\``,
};
process.stdout.write(`\n${'100 KB of'.padEnd(15)} ${['telegram', 'slack', 'discord'].map((n) => n.padStart(9)).join(' ')}  (fastest ms)\n`);
for (const [kind, md] of Object.entries(BLOCKS)) {
  const cells = ['telegram', 'slack', 'discord'].map((name) => {
    const c = CHANNELS[name]!;
    return ms(() => renderParts(md, { render: c.render, limit: c.service.limit, ...(c.maxLines ? { maxLines: c.maxLines } : {}) }), 9);
  });
  process.stdout.write(`${kind.padEnd(15)} ${cells.map((x) => x.toFixed(1).padStart(9)).join(' ')}\n`);
}
