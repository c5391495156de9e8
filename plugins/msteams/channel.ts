/**
 * The `msteams` channel: each part of a reply is one Bot Framework activity,
 * `POST <serviceUrl>/v3/conversations/<to>/activities` with
 * `{type: "message", text, textFormat: "markdown"}` and the bot's bearer token.
 *
 * 2xx is sent. 401 fetches a fresh token and tries once more; 401 again, 403
 * (the app is not in that team or chat) and 404 (no such conversation) fail at
 * once with the Connector's code and message. 429, 408, 412 and 5xx are
 * retried, after Retry-After when the answer has one. Any other status is final.
 */
import {
  baseUrl,
  ChannelError,
  chunkLimit,
  detailOf,
  discard,
  MSTEAMS,
  parseRetryAfter,
  PluginConfigError,
  post,
  readAnswer,
  renderParts,
  toTeamsMarkdown,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { MsTeamsConfigValue } from './config.ts';
import { createTokenSource } from './token.ts';

/** A Teams conversation id: a prefix and a colon (`19:…@thread.tacv2`, `a:…`, `8:orgid:…`), no spaces. */
const CONVERSATION_ID = /^[0-9A-Za-z]+:\S+$/;
const CONVERSATION_ID_MAX = 1024;

function checkTeamsTo(to: string): string | undefined {
  if (to.length <= CONVERSATION_ID_MAX && CONVERSATION_ID.test(to)) return undefined;
  return 'a Teams conversation id (19:…@thread.tacv2, a:…)';
}

function tokenUrlOf(config: MsTeamsConfigValue): string {
  if (config.tokenUrl !== undefined) return baseUrl(config.tokenUrl, 'tokenUrl');
  if (config.tenantId === undefined)
    throw new PluginConfigError('tenantId', 'is required (the Entra tenant of the app registration) unless tokenUrl is given');
  return `https://login.microsoftonline.com/${config.tenantId}/oauth2/v2.0/token`;
}

/** Statuses the Connector documents as transient (412 is its answer to a conflicting concurrent write). */
function transient(status: number): boolean {
  return status === 408 || status === 412 || status >= 500;
}

/** `code: message` from the Connector's ErrorResponse `{error: {code, message}}`, else the answer's text. */
function connectorReason(status: number, text: string, json: unknown): string {
  const error = (json as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const code = typeof error?.code === 'string' ? error.code : '';
  const message = typeof error?.message === 'string' ? detailOf(error.message) : detailOf(text);
  return `HTTP ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
}

export function createMsTeamsChannel(config: MsTeamsConfigValue, ctx: PluginContext): Channel {
  const serviceUrl = baseUrl(config.serviceUrl, 'serviceUrl');
  const tokens = createTokenSource({
    tokenUrl: tokenUrlOf(config),
    appId: config.appId,
    appPassword: config.appPassword,
    timeoutMs: config.timeoutMs,
    fetch: ctx.fetch,
    clock: ctx.clock,
  });
  const limit = chunkLimit(MSTEAMS, config.textChunkLimit);

  async function attempt(msg: ChannelMessage, token: string): Promise<Response> {
    const url = `${serviceUrl}/v3/conversations/${encodeURIComponent(msg.to ?? '')}/activities`;
    return post(
      ctx.fetch,
      url,
      {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ type: 'message', text: msg.text, textFormat: 'markdown' }),
      },
      { signal: msg.signal, timeoutMs: config.timeoutMs, hidden: [token, config.appPassword, msg.text] },
    );
  }

  async function send(msg: ChannelMessage): Promise<void> {
    if (!msg.to) throw new ChannelError('no conversation id to send to', { retryable: false });
    let token = await tokens.get(msg.signal);
    let res = await attempt(msg, token);
    if (res.status === 401) {
      // the token may have been revoked or rotated before its expiry: one fresh token, one more try
      await discard(res);
      tokens.invalidate(token);
      token = await tokens.get(msg.signal);
      res = await attempt(msg, token);
    }
    if (res.ok) return discard(res);
    const { text, json } = await readAnswer(res, [token, config.appPassword, msg.text]);
    const reason = connectorReason(res.status, text, json);
    const retryable = res.status === 429 || transient(res.status);
    const retryAfterMs = retryable ? parseRetryAfter(res.headers.get('retry-after'), ctx.clock()) : undefined;
    throw new ChannelError(reason, { retryable, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  }

  return {
    limits: { requiresTo: true, maxTextLength: limit },
    checkTo: checkTeamsTo,
    render: (markdown) => renderParts(markdown, { render: toTeamsMarkdown, limit, measure: MSTEAMS.measure }),
    send,
  };
}
