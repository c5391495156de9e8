/**
 * The `imessage` channel: each part of a reply is one iMessage, sent by a
 * BlueBubbles server with `POST /api/v1/message/text?password=…`
 * `{chatGuid, message, tempGuid, method}`. `to` is a phone number or e-mail
 * handle (a direct chat, `iMessage;-;<handle>`) or `chat:<chat guid>`.
 *
 * The password travels in the query string, so no URL with its query is ever
 * shown: errors name the server by scheme, host and path.
 *
 * `tempGuid` is the same for every attempt at one part of one delivery:
 * BlueBubbles refuses a tempGuid it is still sending ("already queued"), so
 * a retry after a timeout cannot post the part twice while the first attempt
 * is under way; that answer counts as sent.
 *
 * 2xx is sent. 400 (a bad chat or request), 401/403 (wrong password) and 404
 * are final; a 500 for a message that iMessage took but marked with an error
 * code is final too, since sending again would post it again. 408, 429 and
 * other 5xx are retried.
 */
import {
  baseUrl,
  ChannelError,
  chunkLimit,
  detailOf,
  discard,
  E164,
  IMESSAGE,
  isRetryableStatus,
  parseRetryAfter,
  post,
  readAnswer,
  renderParts,
  toPlainText,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { IMessageConfigValue } from './config.ts';

const EMAIL = /^[^\s@;]+@[^\s@;]+\.[^\s@;]+$/;
/** A BlueBubbles chat guid: service, `-` (direct) or `+` (group), identifier (`iMessage;+;chat123…`). */
const CHAT_GUID = /^chat:([A-Za-z]+;[-+];\S+)$/;

function checkIMessageTo(to: string): string | undefined {
  if (E164.test(to) || EMAIL.test(to) || CHAT_GUID.test(to)) return undefined;
  return 'a phone number (+15551234567), an e-mail address, or chat:<chat guid>';
}

/** The chat guid BlueBubbles sends to: given as `chat:<guid>`, or the direct iMessage chat with a handle. */
function chatGuidOf(to: string): string {
  return CHAT_GUID.exec(to)?.[1] ?? `iMessage;-;${to}`;
}

interface BlueBubblesAnswer {
  message?: unknown;
  error?: { type?: unknown; message?: unknown; error?: unknown } | null;
  data?: { error?: unknown } | null;
}

/** `message: error` from BlueBubbles' envelope `{status, message, error: {type, message}}`, else the text. */
function blueBubblesReason(status: number, text: string, answer: BlueBubblesAnswer | undefined): string {
  const parts = [answer?.message, answer?.error?.message ?? answer?.error?.error].filter(
    (p): p is string => typeof p === 'string' && p !== '',
  );
  const code = answer?.data?.error;
  const detail = detailOf(parts.length > 0 ? parts.join(': ') : text);
  return `HTTP ${status}${detail ? `: ${detail}` : ''}${typeof code === 'number' && code !== 0 ? ` (iMessage error ${code})` : ''}`;
}

export function createIMessageChannel(config: IMessageConfigValue, ctx: PluginContext): Channel {
  const base = baseUrl(config.url, 'url');
  const limit = chunkLimit(IMESSAGE, config.textChunkLimit);
  // the password as written and as it appears encoded in a URL a server might echo
  const passwordForms = [
    config.password,
    encodeURIComponent(config.password),
    new URLSearchParams({ p: config.password }).toString().slice(2),
  ];
  const hiddenFor = (msg: ChannelMessage) => [...passwordForms, msg.text];

  async function send(msg: ChannelMessage): Promise<void> {
    if (!msg.to) throw new ChannelError('no handle or chat to send to', { retryable: false });
    const url = new URL(`${base}/api/v1/message/text`);
    url.searchParams.set('password', config.password);
    const body = JSON.stringify({
      chatGuid: chatGuidOf(msg.to),
      message: msg.text,
      tempGuid: `hook-intake-${msg.deliveryId}-${msg.part}`,
      method: config.method,
    });
    const hidden = hiddenFor(msg);
    const res = await post(
      ctx.fetch,
      url,
      { headers: { 'content-type': 'application/json', accept: 'application/json' }, body },
      { signal: msg.signal, timeoutMs: config.timeoutMs, hidden },
    );
    if (res.ok) return discard(res);
    const { text, json } = await readAnswer(res, hidden);
    const answer = json && typeof json === 'object' ? (json as BlueBubblesAnswer) : undefined;
    const reason = blueBubblesReason(res.status, text, answer);
    // an earlier attempt at this very part is still being sent by the server
    if (res.status === 400 && /already queued/i.test(String(answer?.error?.message ?? text))) return;
    if (res.status >= 500 && typeof answer?.data?.error === 'number' && answer.data.error !== 0)
      throw new ChannelError(reason, { retryable: false });
    const retryable = isRetryableStatus(res.status);
    const retryAfterMs = retryable ? parseRetryAfter(res.headers.get('retry-after'), ctx.clock()) : undefined;
    throw new ChannelError(reason, { retryable, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  }

  return {
    limits: { requiresTo: true, maxTextLength: limit },
    checkTo: checkIMessageTo,
    render: (markdown) => renderParts(markdown, { render: toPlainText, limit, measure: IMESSAGE.measure }),
    send,
  };
}
