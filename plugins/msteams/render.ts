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

/** A fence line inside quotes or list items: the container's markers, then ``` or ~~~ (and an info string). */
const FENCE = /^(?:[ \t]*>)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?[ \t]*(`{3,}|~{3,})(.*)$/;

/**
 * Escapes a block that is not itself a code block, keeping the fenced code
 * blocks nested in it (in a list item or a quote) as they are.
 */
function escapeBlock(raw: string): string {
  const out: string[] = [];
  let text: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    if (text.length > 0) out.push(escapeOutsideCodeSpans(text.join('\n')));
    text = [];
  };
  for (const line of raw.split('\n')) {
    const m = FENCE.exec(line);
    if (fence !== undefined) {
      out.push(line);
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length && m[2]!.trim() === '') fence = undefined;
    } else if (m && !(m[1]![0] === '`' && m[2]!.includes('`'))) {
      flush();
      out.push(line);
      fence = m[1];
    } else text.push(line);
  }
  flush();
  return out.join('\n');
}

/** Teams Markdown: the reply as written, with `&` and `<` outside code as entities. */
export function toTeamsMarkdown(markdown: string): string {
  return lex(markdown)
    .map((t) => (t.type === 'code' ? t.raw : escapeBlock(t.raw)))
    .join('')
    .trim();
}
