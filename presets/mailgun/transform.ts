/**
 * The `mailgun` preset's messages (docs/presets/mailgun.md): what happened to which email, to whom
 * and why — a delivery with the server's answer, a failure with its severity and reason, an open or
 * a click with where and on what, an unsubscribe, a complaint — and a summary for other events. One
 * session per recipient, so the fate of the mail sent to one person shares one.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

export default function mailgun(ctx: TransformContext<Obj>): TransformResult {
  const e = obj(obj(ctx.payload)['event-data']);
  const type = ctx.event || str(e.event);
  const recipient = str(e.recipient);
  const headers = obj(obj(e.message).headers);
  const said = (MESSAGES[type] ?? generic)(e, recipient || 'an unknown recipient', type);
  const tags = (Array.isArray(e.tags) ? e.tags.map(str) : []).filter((t) => t && t !== '*');
  return result(
    ctx,
    lines(
      said,
      str(headers.from) && `From: ${oneLine(headers.from, 200)}`,
      str(headers.subject) && `Subject: ${oneLine(headers.subject, 200)}`,
      tags.length > 0 && `Tags: ${tags.join(', ')}`,
      str(headers['message-id']) && `Message ${oneLine(headers['message-id'], 200)}`,
    ),
    recipient ? sessionKey('hook:mailgun', recipient.toLowerCase()) : undefined,
  );
}

type Message = (e: Obj, to: string, type: string) => string;

/** The receiving server's answer: `550 5.5.0 Requested action not taken…`. */
function answer(e: Obj): string {
  const s = obj(e['delivery-status']);
  return [str(s.code), oneLine(s.message || s.description, 300)].filter(Boolean).join(' ');
}

/** Where and on what an email was opened or a link clicked: `Chrome on OS X, San Antonio, TX, US`. */
function reader(e: Obj): string {
  const c = obj(e['client-info']);
  const g = obj(e.geolocation);
  const client = [str(c['client-name']), str(c['client-os']) && `on ${str(c['client-os'])}`].filter(Boolean).join(' ');
  const place = [str(g.city), str(g.region), str(g.country)].filter((s) => s && s !== 'Unknown').join(', ');
  return [client, place].filter(Boolean).join(', ');
}

const failed: Message = (e, to) => {
  const severity = str(e.severity);
  const retry = Number(obj(e['delivery-status'])['retry-seconds']);
  return lines(
    `Email to ${to} failed${severity ? ` (${severity}${str(e.reason) ? `, ${oneLine(e.reason, 40)}` : ''})` : ''}: ${answer(e) || 'no answer recorded'}`,
    severity === 'temporary' && (Number.isFinite(retry) && retry > 0 ? `Mailgun retries in ${retry} seconds.` : 'Mailgun retries.'),
    severity === 'permanent' && 'Mailgun will not retry; later mail to this address may be suppressed.',
  );
};

const MESSAGES: Record<string, Message> = {
  accepted: (_e, to) => `Email to ${to} accepted by Mailgun for delivery`,
  rejected: (e, to) => `Email to ${to} rejected by Mailgun: ${oneLine(obj(e.reject).reason, 200) || 'no reason given'}`,
  delivered: (e, to) => `Email to ${to} delivered${answer(e) ? `: ${answer(e)}` : ''}`,
  failed,
  opened: (e, to) => `${to} opened an email${reader(e) ? ` (${reader(e)})` : ''}`,
  clicked: (e, to) => lines(`${to} clicked a link in an email: ${oneLine(e.url, 300)}`, reader(e) && `(${reader(e)})`),
  unsubscribed: (e, to) => `${to} unsubscribed${reader(e) ? ` (${reader(e)})` : ''}`,
  complained: (_e, to) => `${to} marked an email as spam`,
};

/** An event without a message of its own: its name, the recipient, and a summary of its fields. */
function generic(e: Obj, to: string, type: string): string {
  const { event: _e, 'user-variables': _u, ...rest } = e;
  return lines(`Mailgun event "${oneLine(type, 60) || 'unnamed'}" for ${to}`, summarize(rest));
}
