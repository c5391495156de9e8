/**
 * The `webhook` channel. Each message (each part of a split reply) is one
 * POST of `{runId, deliveryId, to, text, part, parts}`; with a `secret`, the
 * signature header carries `sha256=<hex HMAC-SHA256 of the raw body>`.
 *
 * 2xx is sent. 408, 425, 429 and 5xx, network errors and timeouts are
 * retried (after Retry-After when the receiver gives one); any other status
 * is final.
 */
import { createHmac } from 'node:crypto';
import type { Channel, ChannelMessage, PluginContext } from '../../src/plugins/define.ts';
import { ChannelError, PluginConfigError } from '../../src/plugins/define.ts';
import { channelErrorForStatus, errorDetail, networkReason, readCapped, redact, shorten } from '../../src/plugins/http.ts';
import type { WebhookConfigValue } from './config.ts';

const ERROR_BODY_BYTES = 16 * 1024;
const DETAIL_CHARS = 200;

/** `sha256=<hex>`: HMAC-SHA256 of the exact bytes sent, keyed with the secret. */
export function sign(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

function checkUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new PluginConfigError('url', `"${raw}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new PluginConfigError('url', 'must be an http:// or https:// URL');
  return u;
}

export function createWebhookChannel(config: WebhookConfigValue, ctx: PluginContext): Channel {
  const url = checkUrl(config.url);
  const shown = `${url.origin}${url.pathname}`;
  const secrets = [config.secret, ...Object.values(config.headers ?? {}).filter((v) => v.length >= 8)];
  const limits = { requiresTo: config.requiresTo, ...(config.maxTextLength ? { maxTextLength: config.maxTextLength } : {}) };

  async function send(msg: ChannelMessage): Promise<void> {
    const body = JSON.stringify({ runId: msg.runId, deliveryId: msg.deliveryId, to: msg.to, text: msg.text, part: msg.part, parts: msg.parts });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'hook-intake',
      'x-hook-intake-delivery': `${msg.deliveryId}/${msg.part}`,
    };
    for (const [k, v] of Object.entries(config.headers ?? {})) headers[k.toLowerCase()] = v;
    const signature = config.secret ? sign(config.secret, body) : undefined;
    if (signature) headers[config.signatureHeader.toLowerCase()] = signature;
    // a receiver may echo what it got; none of it may reach logs or the run's record
    const hidden = [...secrets, signature, signature?.slice('sha256='.length), msg.text];
    const timeout = AbortSignal.timeout(config.timeoutMs);
    const signal = AbortSignal.any([msg.signal, timeout]);
    let res: Response;
    try {
      res = await ctx.fetch(url, { method: 'POST', headers, body, signal, redirect: 'manual' });
    } catch (err) {
      if (msg.signal.aborted) throw msg.signal.reason;
      if (timeout.aborted) throw new ChannelError(`no answer from ${shown} within ${config.timeoutMs} ms`, { retryable: true });
      throw new ChannelError(`POST ${shown} failed: ${redact(networkReason(err), hidden)}`, { retryable: true });
    }
    if (res.ok) {
      // the body carries nothing we need; cancelling frees the connection
      await res.body?.cancel().catch(() => undefined);
      return;
    }
    let detail = '';
    try {
      detail = shorten(redact(errorDetail((await readCapped(res, ERROR_BODY_BYTES)).text), hidden), DETAIL_CHARS);
    } catch {
      // the status alone decides what happens next
    }
    throw channelErrorForStatus(res.status, detail, res.headers.get('retry-after'), ctx.clock());
  }

  return { limits, send };
}
