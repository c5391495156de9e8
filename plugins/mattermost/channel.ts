/**
 * The `mattermost` channel: `POST <url>/api/v4/posts` with a Bearer token,
 * over plain `fetch` (the API is one call; no client library needed).
 *
 * Each post carries a `pending_post_id` derived from the delivery and part:
 * a server that sees the same id again within 30 seconds returns the post it
 * already created, so a quick retry after a lost answer does not post twice.
 */
import { createHash } from 'node:crypto';
import {
  baseUrl,
  ChannelError,
  chunkLimit,
  isRetryableStatus,
  MATTERMOST,
  parseRetryAfter,
  post,
  readCapped,
  redact,
  renderParts,
  shorten,
  toMattermost,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { MattermostConfigValue } from './config.ts';

const DETAIL_CHARS = 300;
const ERROR_BODY_BYTES = 16 * 1024;

const TO_FORM = 'a Mattermost channel id (26 lower-case letters and digits)';

export function checkMattermostTo(to: string): string | undefined {
  return /^[a-z0-9]{26}$/.test(to) ? undefined : TO_FORM;
}

/** The same id for every attempt at one part of one delivery, shaped like Mattermost's own ids. */
export function pendingPostId(deliveryId: string, part: number): string {
  return createHash('sha256').update(`${deliveryId}/${part}`).digest('hex').slice(0, 26);
}

/**
 * How long a 429 asks to wait: `Retry-After`, else `X-Ratelimit-Reset`
 * (seconds until the limit resets; a value that can only be a Unix time is
 * read as one).
 */
export function rateLimitWait(headers: Headers, now: number): number | undefined {
  const retryAfter = parseRetryAfter(headers.get('retry-after'), now);
  if (retryAfter !== undefined) return retryAfter;
  const reset = headers.get('x-ratelimit-reset')?.trim();
  if (!reset || !/^\d+$/.test(reset)) return undefined;
  const seconds = Number(reset);
  return seconds > 1e9 ? Math.max(0, seconds * 1000 - now) : seconds * 1000;
}

/** Mattermost's error answer `{id, message}` as `id: message`; a plain-text answer as it is. */
function errorText(body: string): string {
  try {
    const j = JSON.parse(body) as { id?: unknown; message?: unknown };
    const parts = [j.id, j.message].filter((x): x is string => typeof x === 'string' && x.length > 0);
    if (parts.length) return parts.join(': ');
  } catch {
    // not JSON: the text itself
  }
  return body;
}

export function createMattermostChannel(config: MattermostConfigValue, ctx: PluginContext): Channel {
  const server = baseUrl(config.url, 'url');
  const postsUrl = `${server}/api/v4/posts`;
  const limit = chunkLimit(MATTERMOST, config.textChunkLimit);
  const token = config.token;

  async function send(msg: ChannelMessage): Promise<void> {
    const to = msg.to ?? '';
    const wrong = checkMattermostTo(to);
    if (wrong) throw new ChannelError(`to must be ${wrong}`, { retryable: false });
    const body = JSON.stringify({ channel_id: to, message: msg.text, pending_post_id: pendingPostId(msg.deliveryId, msg.part) });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 'hook-intake' };
    const hidden = [token, msg.text];
    const res = await post(ctx.fetch, postsUrl, { headers, body }, { signal: msg.signal, timeoutMs: config.timeoutMs, hidden });
    if (res.ok) {
      // the created post is not needed; cancelling frees the connection
      await res.body?.cancel().catch(() => undefined);
      return;
    }
    let detail = '';
    try {
      detail = shorten(redact(errorText((await readCapped(res, ERROR_BODY_BYTES)).text), hidden), DETAIL_CHARS);
    } catch {
      // the status alone decides what happens next
    }
    const reason = `Mattermost HTTP ${res.status}${detail ? ` ${detail}` : ''}`;
    if (res.status === 429) {
      const retryAfterMs = rateLimitWait(res.headers, ctx.clock());
      throw new ChannelError(reason, { retryable: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
    }
    // 400 (bad channel id), 401 (token), 403 (no permission, bot not in the channel), 404: retrying cannot help
    throw new ChannelError(reason, { retryable: isRetryableStatus(res.status) });
  }

  return {
    limits: { maxTextLength: limit, requiresTo: true },
    checkTo: checkMattermostTo,
    render: (markdown) => renderParts(markdown, { render: toMattermost, limit, measure: MATTERMOST.measure }),
    send,
  };
}
