/**
 * The `whatsapp` channel: each part of a reply is one WhatsApp Cloud API
 * text message, `POST <apiBaseUrl>/<phoneNumberId>/messages`, with link
 * previews off. A thin fetch client: the Graph API call is one JSON POST,
 * and Meta's own Node SDK is archived.
 *
 * Errors are classified by the Graph error `code`, which says more than the
 * HTTP status: 131047 means the customer has not written in the last 24
 * hours, so only template messages can reach them; that is permanent.
 */
import {
  baseUrl,
  ChannelError,
  chunkLimit,
  discard,
  parseRetryAfter,
  post,
  readAnswer,
  redact,
  renderParts,
  shorten,
  toWhatsApp,
  USER_AGENT,
  WHATSAPP,
  type Channel,
  type ChannelMessage,
  type PluginContext,
} from 'hook-intake/plugin';
import type { WhatsAppConfigValue } from './config.ts';

const DETAIL_CHARS = 300;
/** E.164: a country code and number, 8 to 15 digits, with or without the leading +. */
const TO = /^\+?[1-9]\d{7,14}$/;
export const TO_FORM = 'an E.164 phone number such as +15551234567';

/** Graph codes of throughput limits: per number (130429), per recipient (131056), per account (80007). */
const RATE_LIMITED = new Set([130429, 131056, 80007, 4, 17, 32, 613]);
/** Graph codes of failures on Meta's side worth retrying. */
const TRANSIENT = new Set([1, 2, 131000, 131016]);
const OUTSIDE_WINDOW = 131047;

interface GraphError {
  message?: string;
  code?: number;
  error_subcode?: number;
  error_data?: { details?: string };
}

export function createWhatsAppChannel(config: WhatsAppConfigValue, ctx: PluginContext): Channel {
  const url = `${baseUrl(config.apiBaseUrl, 'apiBaseUrl')}/${config.phoneNumberId}/messages`;
  const limit = chunkLimit(WHATSAPP, config.textChunkLimit);
  const hidden = [config.accessToken];

  function answerError(status: number, error: GraphError | undefined, retryAfter: string | null, text: string): ChannelError {
    const code = error?.code;
    const details = error?.error_data?.details;
    const detail = [error?.message, details !== error?.message ? details : undefined].filter(Boolean).join(': ');
    const said = shorten(redact(detail || `HTTP ${status}`, [...hidden, text]), DETAIL_CHARS);
    const reason = `WhatsApp ${code ?? status}: ${said}`;
    if (code === OUTSIDE_WINDOW) {
      return new ChannelError(
        // the window first: the outbox keeps a reason of at most 300 characters
        `WhatsApp ${code}: outside the 24-hour customer service window, so only template messages can reach this person (${said})`,
        { retryable: false },
      );
    }
    if (status === 429 || (code !== undefined && RATE_LIMITED.has(code))) {
      const retryAfterMs = parseRetryAfter(retryAfter, ctx.clock());
      return new ChannelError(reason, { retryable: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    }
    if (status >= 500 || (code !== undefined && TRANSIENT.has(code))) return new ChannelError(reason, { retryable: true });
    // not a WhatsApp number, recipient not allowed, expired token, missing permission: sending again cannot help
    return new ChannelError(reason, { retryable: false });
  }

  async function send(msg: ChannelMessage): Promise<void> {
    if (msg.to === null || !TO.test(msg.to)) throw new ChannelError(`WhatsApp: to must be ${TO_FORM}`, { retryable: false });
    const body = JSON.stringify({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: msg.to,
      type: 'text',
      text: { body: msg.text, preview_url: false },
    });
    const res = await post(
      ctx.fetch,
      url,
      { headers: { 'content-type': 'application/json', authorization: `Bearer ${config.accessToken}`, 'user-agent': USER_AGENT }, body },
      { signal: msg.signal, timeoutMs: config.timeoutMs, hidden: [...hidden, msg.text] },
    );
    if (res.ok) {
      // the message id is not needed
      await discard(res);
      return;
    }
    const { json } = await readAnswer(res, [...hidden, msg.text]);
    const graph = (json as { error?: unknown } | undefined)?.error;
    const error = graph && typeof graph === 'object' ? (graph as GraphError) : undefined;
    throw answerError(res.status, error, res.headers.get('retry-after'), msg.text);
  }

  return {
    limits: { requiresTo: true, maxTextLength: limit },
    checkTo: (to) => (TO.test(to) ? undefined : TO_FORM),
    render: (markdown) => renderParts(markdown, { render: toWhatsApp, limit, measure: WHATSAPP.measure }),
    send,
  };
}
