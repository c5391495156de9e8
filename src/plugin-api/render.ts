/**
 * Renders the agent's Markdown for each chat service. The Markdown is parsed
 * with marked's lexer and walked token by token; every piece of the agent's
 * text goes through the target's escaping, and only the walker itself writes
 * markup, so text in the reply (raw HTML, `<!channel>`, `<https://…|…>`) is
 * shown as written and never interpreted by the service.
 */
import { Lexer, Tokenizer, type Token, type Tokens } from 'marked';

/**
 * Raw HTML is never passed on, so an HTML block is not a block either: CommonMark lets one
 * (`<?`, `<!--`) run on past blank lines and swallow the Markdown after it, which would make
 * a reply render differently whole and split into parts.
 */
class NoHtmlBlocks extends Tokenizer {
  override html(): undefined {
    return undefined;
  }
}

/** Parses Markdown the same way everywhere (GitHub flavour, raw HTML read as text). */
export function lex(markdown: string): Token[] {
  return Lexer.lex(markdown, { gfm: true, tokenizer: new NoHtmlBlocks() });
}

/** How one service writes each kind of formatting; `text` escapes the agent's text. */
interface Style {
  text(s: string): string;
  strong(inner: string): string;
  em(inner: string): string;
  del(inner: string): string;
  code(text: string): string;
  codeBlock(code: string, lang: string): string;
  link(href: string, inner: string, label: string): string;
  heading(inner: string): string;
  quote(inner: string): string;
}

const SAFE_SCHEME = /^(https?:|mailto:)/i;

/** The link's plain text: the label, then the URL in brackets when the label is not the URL itself. */
function labelWithUrl(label: string, href: string): string {
  if (!label || label === href || `mailto:${label}` === href) return href;
  return `${label} (${href})`;
}

function prefixLines(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}

function inline(tokens: Token[] | undefined, s: Style): string {
  let out = '';
  for (const t of tokens ?? []) out += inlineToken(t, s);
  return out;
}

/** The token's text without any formatting (link labels, alt texts). */
function plainOf(tokens: Token[] | undefined): string {
  let out = '';
  for (const t of tokens ?? []) {
    if ('tokens' in t && t.tokens) out += plainOf(t.tokens);
    else if (t.type === 'br') out += '\n';
    else if ('text' in t && typeof t.text === 'string') out += t.text;
    else out += t.raw;
  }
  return out;
}

function inlineToken(t: Token, s: Style): string {
  switch (t.type) {
    case 'strong':
      return s.strong(inline(t.tokens, s));
    case 'em':
      return s.em(inline(t.tokens, s));
    case 'del':
      return s.del(inline(t.tokens, s));
    case 'codespan':
      return s.code(t.text);
    case 'br':
      return '\n';
    case 'link':
    case 'image': {
      const href = String(t.href ?? '');
      const label = plainOf(t.tokens) || String(t.text ?? '');
      if (!SAFE_SCHEME.test(href)) return s.text(labelWithUrl(label, href));
      return s.link(href, t.type === 'link' ? inline(t.tokens, s) : s.text(label), label);
    }
    case 'escape':
      return s.text(t.text);
    case 'html':
      // raw HTML in the reply is shown, never passed on
      return s.text(t.raw);
    case 'text':
      return 'tokens' in t && t.tokens ? inline(t.tokens, s) : s.text(t.text);
    default:
      return s.text(t.raw);
  }
}

function list(t: Tokens.List, s: Style): string {
  const start = typeof t.start === 'number' ? t.start : 1;
  return t.items
    .map((item, i) => {
      const marker = t.ordered ? `${start + i}. ` : '• ';
      const box = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
      const body = blocks(item.tokens, s, '\n');
      const [first = '', ...rest] = body.split('\n');
      return [marker + box + first, ...rest.map((l) => `  ${l}`)].join('\n');
    })
    .join('\n');
}

function table(t: Tokens.Table, s: Style): string {
  const row = (cells: Tokens.TableCell[]) => cells.map((c) => inline(c.tokens, s)).join(' | ');
  return [s.strong(row(t.header)), ...t.rows.map(row)].join('\n');
}

function block(t: Token, s: Style): string {
  switch (t.type) {
    case 'space':
    case 'def':
      return '';
    case 'paragraph':
      return inline(t.tokens, s);
    case 'heading':
      return s.heading(inline(t.tokens, s));
    case 'code':
      return s.codeBlock(t.text, t.codeBlockStyle === 'indented' ? '' : String(t.lang ?? '').split(/\s/)[0]!);
    case 'blockquote':
      return s.quote(blocks(t.tokens, s, '\n\n'));
    case 'list':
      return list(t as Tokens.List, s);
    case 'table':
      return table(t as Tokens.Table, s);
    case 'hr':
      return '———';
    case 'html':
      return s.text(t.raw.replace(/\n+$/, ''));
    case 'text':
      return 'tokens' in t && t.tokens ? inline(t.tokens, s) : s.text(t.text);
    default:
      return s.text(t.raw);
  }
}

function blocks(tokens: Token[] | undefined, s: Style, sep: string): string {
  return (tokens ?? [])
    .map((t) => block(t, s))
    .filter((x) => x !== '')
    .join(sep);
}

function renderWith(markdown: string, s: Style): string {
  return blocks(lex(markdown), s, '\n\n').trim();
}

// ---- Telegram HTML -----------------------------------------------------------------------------------

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
function escapeAttr(s: string): string {
  return escapeHtml(s).replace(/"/g, '&quot;');
}

const telegramStyle: Style = {
  text: escapeHtml,
  strong: (x) => `<b>${x}</b>`,
  em: (x) => `<i>${x}</i>`,
  del: (x) => `<s>${x}</s>`,
  code: (x) => `<code>${escapeHtml(x)}</code>`,
  codeBlock: (code, lang) =>
    /^[\w+#.-]{1,32}$/.test(lang)
      ? `<pre><code class="language-${lang}">${escapeHtml(code)}</code></pre>`
      : `<pre>${escapeHtml(code)}</pre>`,
  link: (href, inner) => `<a href="${escapeAttr(href)}">${inner}</a>`,
  heading: (x) => `<b>${x}</b>`,
  quote: (x) => `<blockquote>${x}</blockquote>`,
};

/** Telegram's HTML parse mode: `<b> <i> <s> <code> <pre> <a href> <blockquote>`, with `& < >` (and `"` in attributes) escaped. */
export function toTelegramHtml(markdown: string): string {
  return renderWith(markdown, telegramStyle);
}

// ---- Slack mrkdwn ---------------------------------------------------------------------------------------

/** Slack reads `&`, `<` and `>` as control characters; escaped, `<!channel>` or `<@U…>` in the text stays literal. */
function escapeSlack(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const slackStyle: Style = {
  text: escapeSlack,
  strong: (x) => `*${x}*`,
  em: (x) => `_${x}_`,
  del: (x) => `~${x}~`,
  code: (x) => `\`${escapeSlack(x)}\``,
  codeBlock: (code) => `\`\`\`\n${escapeSlack(code.replace(/```/g, '`\u200b``'))}\n\`\`\``,
  // `|` would end the URL part early
  link: (href, _inner, label) => `<${escapeSlack(href).replace(/\|/g, '%7C')}|${escapeSlack(label)}>`,
  heading: (x) => `*${x}*`,
  quote: (x) => prefixLines(x, '>'),
};

/** Slack mrkdwn: `*b* _i_ ~s~ \`code\``, links as `<url|text>`, `& < >` escaped. */
export function toSlackMrkdwn(markdown: string): string {
  return renderWith(markdown, slackStyle);
}

// ---- WhatsApp ---------------------------------------------------------------------------------------------

const whatsappStyle: Style = {
  text: (s) => s,
  strong: (x) => `*${x}*`,
  em: (x) => `_${x}_`,
  del: (x) => `~${x}~`,
  code: (x) => `\`\`\`${x.replace(/```/g, '`\u200b``')}\`\`\``,
  codeBlock: (code) => `\`\`\`${code.replace(/```/g, '`\u200b``')}\`\`\``,
  link: (href, _inner, label) => labelWithUrl(label, href),
  heading: (x) => `*${x}*`,
  quote: (x) => prefixLines(x, '> '),
};

/** WhatsApp's markup: `*b* _i_ ~s~ \`\`\`mono\`\`\``; links as text with the URL (WhatsApp has no link markup). */
export function toWhatsApp(markdown: string): string {
  return renderWith(markdown, whatsappStyle);
}

// ---- plain text (Signal, iMessage) -------------------------------------------------------------------------

const plainStyle: Style = {
  text: (s) => s,
  strong: (x) => x,
  em: (x) => x,
  del: (x) => x,
  code: (x) => x,
  codeBlock: (code) => code,
  link: (href, _inner, label) => labelWithUrl(label, href),
  heading: (x) => x,
  quote: (x) => prefixLines(x, '> '),
};

/** Plain text: markup removed, links as their text with the URL. */
export function toPlainText(markdown: string): string {
  return renderWith(markdown, plainStyle);
}

// ---- Discord ----------------------------------------------------------------------------------------------------

/**
 * Puts a zero-width joiner after the `@` of mass mentions (`@everyone`, `@here` by default), so the
 * text cannot ping even when copied into a message without `allowed_mentions`.
 */
export function disarmMentions(text: string, words: readonly string[] = ['everyone', 'here']): string {
  if (words.length === 0) return text;
  return text.replace(new RegExp(`@(${words.join('|')})(?![\\w-])`, 'gi'), '@\u200d$1');
}

// ---- Markdown kept as written, changed outside code only (Mattermost, Teams) ------------------------------

/** Applies `change` to text outside inline code spans (a run of backticks up to the next run of the same length). */
function outsideCodeSpans(text: string, change: (s: string) => string): string {
  let out = '';
  let i = 0;
  const open = /`+/g;
  while (i < text.length) {
    open.lastIndex = i;
    const start = open.exec(text);
    if (!start) break;
    out += change(text.slice(i, start.index));
    const run = start[0];
    const close = new RegExp(`(?<!\`)${run}(?!\`)`, 'g');
    close.lastIndex = start.index + run.length;
    const end = close.exec(text);
    // an unmatched run of backticks is literal text
    const stop = end ? end.index + run.length : start.index + run.length;
    out += text.slice(start.index, stop);
    i = stop;
  }
  return out + change(text.slice(i));
}

/** A fence line inside quotes or list items: the container's markers, then ``` or ~~~ (and an info string). */
const FENCE = /^(?:[ \t]*>)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?[ \t]*(`{3,}|~{3,})(.*)$/;

/**
 * Changes a block that is not itself a code block, keeping the fenced code
 * blocks nested in it (in a list item or a quote) as they are.
 */
function outsideCodeBlocks(raw: string, change: (s: string) => string): string {
  const out: string[] = [];
  let text: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    if (text.length > 0) out.push(outsideCodeSpans(text.join('\n'), change));
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

/** The Markdown as written, with `change` applied to everything but code spans and code blocks. */
function outsideCode(markdown: string, change: (s: string) => string): string {
  return lex(markdown)
    .map((t) => (t.type === 'code' ? t.raw : outsideCodeBlocks(t.raw, change)))
    .join('')
    .trim();
}

/** Mattermost's words that notify a whole channel. */
const MATTERMOST_MASS_MENTIONS = ['channel', 'all', 'here'];

/**
 * Mattermost shows Markdown itself: the reply is kept as written, with `@channel`, `@all` and
 * `@here` disarmed outside code (inside code they notify nobody, and a joiner there would be
 * copied along with the code).
 */
export function toMattermost(markdown: string): string {
  return outsideCode(markdown, (s) => disarmMentions(s, MATTERMOST_MASS_MENTIONS));
}

/**
 * Discord reads Markdown itself: the text is kept, with mass mentions disarmed outside code (the
 * request also sends `allowed_mentions`; inside code they ping nobody, and code is kept as written).
 */
export function toDiscord(markdown: string): string {
  return outsideCode(markdown, (s) => disarmMentions(s));
}

function escapeTeams(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

/**
 * Teams turns a `textFormat: "markdown"` message into HTML on its side and passes HTML written in
 * the text through (tags, `<at>` mentions, entities), so the reply's Markdown is kept while `&` and
 * `<` outside code are written as entities: text in the reply shows as written and can never become
 * markup or a mention. `>` opens nothing on its own and stays, so quotes keep their Markdown. Inside
 * code spans and code blocks Markdown already shows every character as written, and an entity there
 * would show literally, so code is kept.
 */
export function toTeamsMarkdown(markdown: string): string {
  return outsideCode(markdown, escapeTeams);
}
