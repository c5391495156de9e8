/**
 * The `webhook` channel. Each message (each part of a split reply) is one
 * POST of `{runId, deliveryId, to, text, part, parts}`; with a `secret`, it is
 * signed as Standard Webhooks signs (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64>` over `id.timestamp.body`), so a receiver
 * can reject a replayed delivery by its timestamp and id.
 *
 * 2xx is sent. 408, 425, 429 and 5xx, network errors and timeouts are
 * retried (after Retry-After when the receiver gives one); any other status
 * is final.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import {
  ChannelError,
  channelErrorForStatus,
  decodeBase64Strict,
  errorDetail,
  networkReason,
  PluginConfigError,
  readCapped,
  redact,
  shorten,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { WebhookConfigValue } from './config.ts';

const ERROR_BODY_BYTES = 16 * 1024;
const DETAIL_CHARS = 200;
const WHSEC = 'whsec_';

/**
 * The HMAC key of a `secret`: a `whsec_…` secret is base64 after the prefix,
 * as Standard Webhooks writes secrets; any other secret is its UTF-8 bytes,
 * used as written.
 */
export function signingKey(secret: string): KeyObject {
  if (!secret.startsWith(WHSEC)) return createSecretKey(Buffer.from(secret, 'utf8'));
  const bytes = decodeBase64Strict(secret.slice(WHSEC.length));
  if (!bytes) throw new PluginConfigError('secret', 'a secret starting with whsec_ must continue in base64 (Standard Webhooks form)');
  return createSecretKey(bytes);
}

/** `v1,<base64>`: HMAC-SHA256 of `<id>.<timestamp>.<body>`, as Standard Webhooks signs. */
export function sign(key: KeyObject, id: string, timestamp: number, body: string | Buffer): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
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
  const key = config.secret === undefined ? undefined : signingKey(config.secret);
  const secrets = [config.secret, ...Object.values(config.headers ?? {}).filter((v) => v.length >= 8)];
  // the base64 alone is the key too, and is what a receiver might echo
  if (config.secret?.startsWith(WHSEC)) secrets.push(config.secret.slice(WHSEC.length));
  const limits = { requiresTo: config.requiresTo, ...(config.maxTextLength ? { maxTextLength: config.maxTextLength } : {}) };

  async function send(msg: ChannelMessage): Promise<void> {
    const body = JSON.stringify({
      runId: msg.runId,
      deliveryId: msg.deliveryId,
      to: msg.to,
      text: msg.text,
      part: msg.part,
      parts: msg.parts,
    });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'hook-intake',
      'x-hook-intake-delivery': `${msg.deliveryId}/${msg.part}`,
    };
    for (const [k, v] of Object.entries(config.headers ?? {})) headers[k.toLowerCase()] = v;
    let signature: string | undefined;
    if (key) {
      // the same id on every attempt, a fresh timestamp on each: a receiver keeps the ids it saw within its tolerance
      const id = `${msg.deliveryId}_${msg.part}`;
      const timestamp = Math.floor(ctx.clock() / 1000);
      signature = sign(key, id, timestamp, body);
      headers['webhook-id'] = id;
      headers['webhook-timestamp'] = String(timestamp);
      headers['webhook-signature'] = signature;
    }
    // a receiver may echo what it got; none of it may reach logs or the run's record
    const hidden = [...secrets, signature, signature?.slice('v1,'.length), msg.text];
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
