/**
 * `node bench/render.ts`: how long rendering and splitting a reply takes per
 * channel renderer, for prose and for Markdown with code blocks, at 4, 20 and
 * 100 KB. The outbox renders in the service process, so this time is time
 * every other request waits.
 */
import { DISCORD, IMESSAGE, MATTERMOST, MSTEAMS, SIGNAL, SLACK, TELEGRAM, WHATSAPP, type ServiceLimit } from '../src/channels/limits.ts';
import { toDiscord, toMattermost, toPlainText, toSlackMrkdwn, toTeamsMarkdown, toTelegramHtml, toWhatsApp } from '../src/channels/render.ts';
import { renderParts, type RenderPartsOptions } from '../src/channels/split.ts';

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
    const p = `Paragraph ${i}: the quick brown fox jumps over the lazy dog, and then it considers the state of affairs at some length before it moves on. `.repeat(3).trim();
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
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const only = process.argv[2];
process.stdout.write(`${'renderer'.padEnd(11)} ${'reply'.padEnd(9)} ${'4 KB'.padStart(8)} ${'20 KB'.padStart(8)} ${'100 KB'.padStart(8)}  (median ms, parts at 100 KB)\n`);
for (const [name, c] of Object.entries(CHANNELS)) {
  if (only && name !== only) continue;
  for (const [kind, make] of [
    ['prose', prose],
    ['markdown', markdown],
  ] as const) {
    const opts: RenderPartsOptions = { render: c.render, limit: c.service.limit, measure: c.service.measure, ...(c.maxLines ? { maxLines: c.maxLines } : {}) };
    const cells = [4, 20, 100].map((kb) => ms(() => renderParts(make(kb * 1024), opts), kb === 100 ? 5 : 15));
    const parts = renderParts(make(100 * 1024), opts).length;
    process.stdout.write(`${name.padEnd(11)} ${kind.padEnd(9)} ${cells.map((x) => x.toFixed(1).padStart(8)).join(' ')}  ${parts}\n`);
  }
}
