/**
 * What Teams shows of the agent's Markdown. Teams turns a `textFormat:
 * "markdown"` message into HTML on its side and passes HTML written in the
 * text through (tags, `<at>` mentions, entities), so the reply's Markdown is
 * kept while `&` and `<` outside code are written as entities: text in the
 * reply shows as written and can never become markup or a mention. `>`
 * opens nothing on its own and stays, so quotes keep their Markdown.
 * Inside code spans and code blocks Markdown already shows every character
 * as written, and an entity there would show literally, so code is kept.
 */
import { lex } from '../../src/channels/render.ts';

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

/** Escapes text outside inline code spans (a run of backticks up to the next run of the same length). */
function escapeOutsideCodeSpans(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const open = /`+/g;
    open.lastIndex = i;
    const start = open.exec(text);
    if (!start) break;
    out += escapeHtml(text.slice(i, start.index));
    const run = start[0];
    const close = new RegExp(`(?<!\`)${run}(?!\`)`, 'g');
    close.lastIndex = start.index + run.length;
    const end = close.exec(text);
    // an unmatched run of backticks is literal text
    const stop = end ? end.index + run.length : start.index + run.length;
    out += text.slice(start.index, stop);
    i = stop;
  }
  return out + escapeHtml(text.slice(i));
}

/** Teams Markdown: the reply as written, with `&` and `<` outside code as entities. */
export function toTeamsMarkdown(markdown: string): string {
  return lex(markdown)
    .map((t) => (t.type === 'code' ? t.raw : escapeOutsideCodeSpans(t.raw)))
    .join('')
    .trim();
}
