/**
 * The `slack` channel: `chat.postMessage` through @slack/web-api, with the
 * library's retries and its waiting on rate limits turned off (the outbox
 * retries). A user id (`U…`, `W…`) is first turned into the id of the bot's
 * direct-message conversation with that user (`conversations.open`), which is
 * kept for the instance's life.
 *
 * Link and media previews are off. Slack has no idempotency key for posting:
 * a request that may have reached Slack is `ambiguous` (retried at most once).
 */
import type { Logger, WebClient } from '@slack/web-api';
import {
  baseUrl,
  ChannelError,
  chunkLimit,
  isRetryableStatus,
  parseRetryAfter,
  redact,
  renderParts,
  request,
  shorten,
  SLACK,
  toSlackMrkdwn,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { SlackConfigValue } from './config.ts';

const DETAIL_CHARS = 300;

const TO_FORM = 'a Slack channel id (C…, G…, D…) or user id (U…, W…; the reply goes to a direct message)';

export function checkSlackTo(to: string): string | undefined {
  return /^[CGDUW][A-Z0-9]{8,}$/.test(to) ? undefined : TO_FORM;
}

/** Slack errors after which nothing was done: retried as usual. */
const NOTHING_DONE = new Set(['service_unavailable', 'request_timeout', 'team_added_to_org']);
/** Slack errors after which "some aspect of the operation may have succeeded" (Slack's words). */
const MAYBE_DONE = new Set(['internal_error', 'fatal_error']);
const RATE_LIMITED = new Set(['ratelimited', 'rate_limited']);

/** The library logs request bodies (the reply) at debug level; none of it reaches the service's log. */
const SILENT: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => 'error' as ReturnType<Logger['getLevel']>,
  setName: () => undefined,
};

/** Slack's error code, with the scope it names when one is missing. */
function platformReason(method: string, data: { error: string; needed?: unknown }, hidden: readonly string[]): string {
  const needed = typeof data.needed === 'string' ? ` (needs ${data.needed})` : '';
  return shorten(redact(`Slack ${method}: ${data.error}${needed}`, hidden), DETAIL_CHARS);
}

type SlackWebApi = typeof import('@slack/web-api');
let loading: Promise<SlackWebApi> | undefined;

/** The library, loaded when a `slack` channel is first configured. */
function library(): Promise<SlackWebApi> {
  if (!loading) {
    loading = import('@slack/web-api');
    // a failure to load is reported by the first send that needs it
    loading.catch(() => undefined);
  }
  return loading;
}

export function createSlackChannel(config: SlackConfigValue, ctx: PluginContext): Channel {
  const api = `${baseUrl(config.apiBaseUrl, 'apiBaseUrl')}/`;
  const limit = chunkLimit(SLACK, config.textChunkLimit);
  const token = config.botToken;
  const lib = library();
  /** User id → id of the bot's direct-message conversation with them. */
  const directMessages = new Map<string, string>();

  /**
   * Every response goes through here. A 429 becomes a rate-limit error at
   * once: the library reads only whole seconds of Retry-After, and without
   * the header it fails with an error that does not say "rate limited".
   */
  async function slackFetch(url: string | URL, init: RequestInit | undefined, msg: ChannelMessage): Promise<Response> {
    const target = String(url);
    const res = await request(ctx.fetch, target, init ?? {}, {
      signal: msg.signal,
      timeoutMs: config.timeoutMs,
      hidden: [token, msg.text],
    });
    if (res.status !== 429) return res;
    await res.body?.cancel().catch(() => undefined);
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), ctx.clock());
    const hint = retryAfterMs === undefined ? '' : `: retry after ${retryAfterMs} ms`;
    throw new ChannelError(`rate limited by Slack${hint}`, { retryable: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
  }

  /** A client for one message, so its requests end with the message's deadline and the service's shutdown. */
  function clientFor({ WebClient }: SlackWebApi, msg: ChannelMessage): WebClient {
    return new WebClient(token, {
      slackApiUrl: api,
      allowAbsoluteUrls: false,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logger: SILENT,
      fetch: (url, init) => slackFetch(url, init, msg),
    });
  }

  function classify(
    err: unknown,
    msg: ChannelMessage,
    method: string,
    { WebAPIHTTPError, WebAPIPlatformError, WebAPIRequestError }: SlackWebApi,
  ): unknown {
    if (msg.signal.aborted) return msg.signal.reason;
    if (err instanceof WebAPIRequestError) err = err.original;
    if (err instanceof ChannelError) return err;
    if (err instanceof WebAPIPlatformError) {
      const code = err.data.error;
      const reason = platformReason(method, err.data, [token, msg.text]);
      if (RATE_LIMITED.has(code)) return new ChannelError(reason, { retryable: true });
      if (NOTHING_DONE.has(code)) return new ChannelError(reason, { retryable: true });
      if (MAYBE_DONE.has(code)) return new ChannelError(reason, { retryable: true, ambiguous: true });
      // channel_not_found, not_in_channel, is_archived, invalid_auth, account_inactive, missing_scope, …
      return new ChannelError(reason, { retryable: false });
    }
    if (err instanceof WebAPIHTTPError) {
      return new ChannelError(`Slack ${method}: HTTP ${err.statusCode} ${err.statusMessage}`.trim(), {
        retryable: isRetryableStatus(err.statusCode),
      });
    }
    // an answer that could not be read: the message may have been posted
    const detail = shorten(redact(err instanceof Error ? err.message : String(err), [token, msg.text]), DETAIL_CHARS);
    return new ChannelError(`Slack ${method} failed: ${detail}`, { retryable: true, ambiguous: true });
  }

  async function conversationOf(to: string, web: WebClient, msg: ChannelMessage, loaded: SlackWebApi): Promise<string> {
    if (!/^[UW]/.test(to)) return to;
    const known = directMessages.get(to);
    if (known) return known;
    let id: string | undefined;
    try {
      id = (await web.conversations.open({ users: to })).channel?.id;
    } catch (err) {
      const e = classify(err, msg, 'conversations.open', loaded);
      // opening the same conversation twice is harmless: no need to hold back the retry
      throw e instanceof ChannelError && e.ambiguous ? new ChannelError(e.message, { retryable: true }) : e;
    }
    if (!id) throw new ChannelError('Slack conversations.open: the answer names no channel', { retryable: true });
    directMessages.set(to, id);
    return id;
  }

  async function send(msg: ChannelMessage): Promise<void> {
    const to = msg.to ?? '';
    const wrong = checkSlackTo(to);
    if (wrong) throw new ChannelError(`to must be ${wrong}`, { retryable: false });
    const loaded = await lib;
    const web = clientFor(loaded, msg);
    const channel = await conversationOf(to, web, msg, loaded);
    try {
      await web.chat.postMessage({ channel, text: msg.text, unfurl_links: false, unfurl_media: false });
    } catch (err) {
      throw classify(err, msg, 'chat.postMessage', loaded);
    }
  }

  return {
    limits: { maxTextLength: limit, requiresTo: true },
    checkTo: checkSlackTo,
    render: (markdown) => renderParts(markdown, { render: toSlackMrkdwn, limit, measure: SLACK.measure }),
    send,
  };
}
