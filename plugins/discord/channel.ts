/**
 * The `discord` channel: `POST /channels/<id>/messages` as a bot, through
 * @discordjs/rest, which knows Discord's rate-limit buckets and refuses to
 * send into one it knows is exhausted. Its own retries and waiting are off:
 * a rate limit comes back as an error with Discord's hint, and the outbox
 * waits that long.
 *
 * Every message carries `allowed_mentions: {parse: []}` (the reply can ping
 * no one), the flag that turns off link previews, and a nonce derived from
 * the delivery and part with `enforce_nonce`, so a retry after a lost answer
 * returns the message Discord already created instead of posting it twice.
 */
import { createHash } from 'node:crypto';
import type { REST } from '@discordjs/rest';
import {
  baseUrl,
  ChannelError,
  chunkLimit,
  DISCORD,
  readCapped,
  redact,
  renderParts,
  request,
  shorten,
  toDiscord,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { DiscordConfigValue } from './config.ts';

const DETAIL_CHARS = 300;
const ERROR_BODY_BYTES = 16 * 1024;
/** Our deadline (`timeoutMs`) applies in `request`; the library's is set beyond it. */
const LIBRARY_TIMEOUT_MS = 2 ** 31 - 1;
/** Discord clients fold very tall messages away; a part has at most this many lines. */
export const DISCORD_MAX_LINES = 17;
/** Message flag: links in the message get no embedded preview. */
const SUPPRESS_EMBEDS = 1 << 2;
/** Discord's limit on a nonce's length. */
const NONCE_CHARS = 25;

const TO_FORM = 'a Discord channel id (a snowflake: 17 to 20 digits)';

export function checkDiscordTo(to: string): string | undefined {
  return /^\d{17,20}$/.test(to) ? undefined : TO_FORM;
}

/** The same 25 characters for every attempt at one part of one delivery. */
export function discordNonce(deliveryId: string, part: number): string {
  return createHash('sha256').update(`${deliveryId}/${part}`).digest('base64url').slice(0, NONCE_CHARS);
}

/**
 * Discord's answer to a rate-limited request carries `retry_after` in its JSON
 * body, in seconds with decimals; the `Retry-After` header, the one the
 * library reads, is rounded. The body's value, when there is one, is handed
 * to the library as the header.
 */
async function withBodyRetryAfter(res: Response): Promise<Response> {
  const { text } = await readCapped(res, ERROR_BODY_BYTES);
  const headers = new Headers(res.headers);
  try {
    const body = JSON.parse(text) as { retry_after?: unknown; global?: unknown };
    if (typeof body.retry_after === 'number' && body.retry_after >= 0) headers.set('retry-after', String(body.retry_after));
    if (body.global === true && !headers.has('x-ratelimit-global')) headers.set('x-ratelimit-global', 'true');
  } catch {
    // not JSON: the header, if any, is all there is
  }
  return new Response(text, { status: res.status, statusText: res.statusText, headers });
}

type DiscordRest = typeof import('@discordjs/rest');
let loading: Promise<DiscordRest> | undefined;

/** The library, loaded when a `discord` channel is first configured (it is slow to load; measured: docs/performance.md, "Memory"). */
function library(): Promise<DiscordRest> {
  if (!loading) {
    loading = import('@discordjs/rest');
    // a failure to load is reported by the first send that needs it
    loading.catch(() => undefined);
  }
  return loading;
}

export function createDiscordChannel(config: DiscordConfigValue, ctx: PluginContext): Channel {
  const api = baseUrl(config.apiBaseUrl, 'apiBaseUrl');
  const limit = chunkLimit(DISCORD, config.textChunkLimit);
  const token = config.botToken;

  const lib = library();
  let rest: REST | undefined;

  const newRest = ({ REST }: DiscordRest): REST =>
    new REST({
      api,
      retries: 0,
      rejectOnRateLimit: () => true,
      offset: 0,
      timeout: LIBRARY_TIMEOUT_MS,
      async makeRequest(url, init) {
        // the library links this signal to the message's, so shutdown aborts it
        const signal = (init.signal ?? new AbortController().signal) as AbortSignal;
        const res = await request(ctx.fetch, url, init as RequestInit, { signal, timeoutMs: config.timeoutMs, hidden: [token] });
        return res.status === 429 ? withBodyRetryAfter(res) : res;
      },
    });

  function classify(err: unknown, msg: ChannelMessage, { DiscordAPIError, HTTPError, RateLimitError }: DiscordRest): unknown {
    if (msg.signal.aborted) return msg.signal.reason;
    if (err instanceof ChannelError) return err;
    const hidden = [token, msg.text];
    if (err instanceof RateLimitError) {
      const ms = Math.max(0, Math.ceil(Math.max(err.retryAfter, err.timeToReset)));
      return new ChannelError(`rate limited by Discord${err.global ? ' (global)' : ''}: retry after ${ms} ms`, {
        retryable: true,
        retryAfterMs: ms,
      });
    }
    if (err instanceof DiscordAPIError) {
      // 4xx other than 429: the token, the channel or the bot's permissions are wrong (401, 403 50001, 404 10003, …)
      const detail = shorten(redact(err.message, hidden), DETAIL_CHARS);
      return new ChannelError(`Discord error ${err.code} (HTTP ${err.status}): ${detail}`, { retryable: false });
    }
    if (err instanceof HTTPError) return new ChannelError(`Discord answered HTTP ${err.status} ${err.message}`.trim(), { retryable: true });
    // an answer that could not be read: the message may have been posted
    const detail = shorten(redact(err instanceof Error ? err.message : String(err), hidden), DETAIL_CHARS);
    return new ChannelError(`unexpected failure posting to Discord: ${detail}`, { retryable: true, ambiguous: true });
  }

  async function send(msg: ChannelMessage): Promise<void> {
    const to = msg.to ?? '';
    const wrong = checkDiscordTo(to);
    if (wrong) throw new ChannelError(`to must be ${wrong}`, { retryable: false });
    const loaded = await lib;
    rest ??= newRest(loaded);
    // after a 401 the library forgets its token; each message starts with it again
    rest.setToken(token);
    const body = {
      content: msg.text,
      allowed_mentions: { parse: [] },
      flags: SUPPRESS_EMBEDS,
      nonce: discordNonce(msg.deliveryId, msg.part),
      enforce_nonce: true,
    };
    try {
      await rest.post(`/channels/${to}/messages`, { body, signal: msg.signal, versioned: false });
    } catch (err) {
      throw classify(err, msg, loaded);
    }
  }

  return {
    limits: { maxTextLength: limit, requiresTo: true },
    checkTo: checkDiscordTo,
    render: (markdown) => renderParts(markdown, { render: toDiscord, limit, maxLines: DISCORD_MAX_LINES }),
    send,
    stop() {
      rest?.clearHashSweeper();
      rest?.clearHandlerSweeper();
    },
  };
}
