/**
 * The `telegram` channel: each part of a reply is one Bot API `sendMessage`
 * in HTML parse mode with link previews off.
 *
 * A thin fetch client rather than grammy's `Api`: grammy's Node build hands
 * the injected `fetch` a polyfilled AbortSignal, a node-fetch `agent` and a
 * `connection` header, which Node's own fetch rejects, and it drops the HTTP
 * status of an answer that is not JSON (a proxy's 502), which decides whether
 * to retry. The Bot API call itself is one JSON POST.
 *
 * The bot token is part of the URL path, so no URL is ever logged or put in
 * an error, and every text from outside is redacted of it.
 */
import {
  baseUrl,
  ChannelError,
  chunkLimit,
  parseRetryAfter,
  PluginConfigError,
  post,
  readAnswer,
  redact,
  renderParts,
  shorten,
  TELEGRAM,
  toTelegramHtml,
  USER_AGENT,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { TelegramConfigValue } from './config.ts';

/** A sent message comes back whole in the answer, its text \u-escaped: room for 4,096 characters and their entities. */
const ANSWER_BYTES = 64 * 1024;
const DETAIL_CHARS = 300;
const TOKEN = /^\d+:[A-Za-z0-9_-]+$/;
/** A numeric chat id or a public @username (5–32 characters), then an optional `:<topic id>`. */
const TO = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})(?::(\d{1,12}))?$/;
export const TO_FORM = 'a chat id (123, -100…) or @channel, optionally followed by :<topic id>';
/** Telegram's answer when the HTML does not parse: the part is sent again as plain text. */
const PARSE_ERROR = /can't parse entities|can't find end of|unsupported start tag|unexpected end tag/i;

export interface TelegramTarget {
  chatId: number | string;
  threadId?: number;
}

export function parseTelegramTo(to: string): TelegramTarget | undefined {
  const m = TO.exec(to.trim());
  if (!m) return undefined;
  const id = m[1]!;
  const chatId = id.startsWith('@') || !Number.isSafeInteger(Number(id)) ? id : Number(id);
  return m[2] ? { chatId, threadId: Number(m[2]) } : { chatId };
}

/** The text of Telegram HTML, for the plain-text resend: tags dropped, a link's URL kept after its text. */
export function htmlToPlain(html: string): string {
  const decode = (s: string): string =>
    s
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&');
  return decode(
    html
      .replace(/<a href="([^"]*)">([\s\S]*?)<\/a>/g, (_m, href: string, text: string) => (text === href ? text : `${text} (${href})`))
      .replace(/<[^>]+>/g, ''),
  );
}

interface BotAnswer {
  ok?: boolean;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

class ParseEntitiesError extends Error {}

export function createTelegramChannel(config: TelegramConfigValue, ctx: PluginContext): Channel {
  // the message names the form, never the value
  if (!TOKEN.test(config.botToken))
    throw new PluginConfigError('botToken', 'must be a bot token as @BotFather gives it: digits, a colon, then letters, digits, _ or -');
  const apiRoot = baseUrl(config.apiBaseUrl, 'apiBaseUrl');
  const limit = chunkLimit(TELEGRAM, config.textChunkLimit);
  const hidden = [config.botToken, config.botToken.slice(config.botToken.indexOf(':') + 1)];

  function answerError(status: number, answer: BotAnswer | undefined, retryAfter: string | null): Error {
    const code = answer?.error_code ?? status;
    const description = shorten(redact(answer?.description ?? `HTTP ${status}`, hidden), DETAIL_CHARS);
    const reason = `Telegram ${code}: ${description}`;
    if (code === 429 || status === 429) {
      const seconds = answer?.parameters?.retry_after;
      const retryAfterMs = typeof seconds === 'number' && seconds >= 0 ? seconds * 1000 : parseRetryAfter(retryAfter, ctx.clock());
      return new ChannelError(reason, { retryable: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    }
    if (status >= 500 || code >= 500) return new ChannelError(reason, { retryable: true });
    if (code === 400 && PARSE_ERROR.test(description)) return new ParseEntitiesError(reason);
    const migrated = answer?.parameters?.migrate_to_chat_id;
    if (migrated !== undefined)
      return new ChannelError(`${reason} (the group is now the supergroup ${migrated}: use that as to)`, { retryable: false });
    // wrong chat, bot blocked or removed, bad token: sending again cannot help
    return new ChannelError(reason, { retryable: false });
  }

  async function sendMessage(target: TelegramTarget, text: string, html: boolean, msg: ChannelMessage): Promise<void> {
    const payload = {
      chat_id: target.chatId,
      ...(target.threadId !== undefined ? { message_thread_id: target.threadId } : {}),
      text,
      ...(html ? { parse_mode: 'HTML' } : {}),
      link_preview_options: { is_disabled: true },
    };
    const res = await post(
      ctx.fetch,
      `${apiRoot}/bot${config.botToken}/sendMessage`,
      { headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT }, body: JSON.stringify(payload) },
      // the token is in the path, so errors name the method, not the URL
      { signal: msg.signal, timeoutMs: config.timeoutMs, hidden: [...hidden, text], shown: `${apiRoot}/bot…/sendMessage` },
    );
    const { json } = await readAnswer(res, [...hidden, text], ANSWER_BYTES);
    const answer = json && typeof json === 'object' ? (json as BotAnswer) : undefined;
    // an answer cut off or not JSON: after a 2xx the message may be posted
    if (res.ok && !answer)
      throw new ChannelError('Telegram: the answer was not understood; the message may have been sent', {
        retryable: true,
        ambiguous: true,
      });
    if (res.ok && answer?.ok !== false) return;
    throw answerError(res.status, answer, res.headers.get('retry-after'));
  }

  return {
    limits: { requiresTo: true, maxTextLength: limit },
    checkTo: (to) => (parseTelegramTo(to) ? undefined : TO_FORM),
    render: (markdown) => renderParts(markdown, { render: toTelegramHtml, limit, measure: TELEGRAM.measure }),
    async send(msg) {
      const target = msg.to === null ? undefined : parseTelegramTo(msg.to);
      if (!target) throw new ChannelError(`Telegram: to must be ${TO_FORM}`, { retryable: false });
      try {
        await sendMessage(target, msg.text, true, msg);
      } catch (err) {
        if (!(err instanceof ParseEntitiesError)) throw err;
        // nothing was posted: the same part as plain text
        ctx.logger.warn({ channel: ctx.id, part: msg.part }, 'Telegram could not parse the HTML of a part; sending it as plain text');
        await sendMessage(target, htmlToPlain(msg.text), false, msg);
      }
    },
  };
}
