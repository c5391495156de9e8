/**
 * The `sendgrid` preset's messages (docs/presets/sendgrid.md). SendGrid posts its events in batches
 * (an array, often dozens of opens and deliveries at once), and one request becomes one message: a
 * line per event, the ones that need a person (bounces, blocks, drops, spam reports, unsubscribes,
 * deferrals) first, at most MAX_LISTED of them, the rest counted. A batch about one recipient is in
 * that recipient's session; a batch about several is in the SendGrid session.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

const MAX_LISTED = 20;

/** The events a person may need to act on, most urgent first; the others follow in the order sent. */
const URGENT = ['account_status_change', 'spamreport', 'bounce', 'blocked', 'dropped', 'unsubscribe', 'group_unsubscribe', 'deferred'];

/** An event's kind: its `event`, with a bounce of type `blocked` told apart as SendGrid's docs do. */
const kindOf = (e: Obj): string => (str(e.event) === 'bounce' && str(e.type) === 'blocked' ? 'blocked' : str(e.event) || 'unknown');

export default function sendgrid(ctx: TransformContext<unknown>): TransformResult {
  const events = (Array.isArray(ctx.payload) ? ctx.payload : [ctx.payload]).map(obj);
  const recipients = new Set(events.map((e) => str(e.email)).filter(Boolean));
  const key =
    events.length > 0 && events.every((e) => kindOf(e) === 'account_status_change')
      ? sessionKey('hook:sendgrid', 'account')
      : recipients.size === 1
        ? sessionKey('hook:sendgrid', [...recipients][0])
        : sessionKey('hook:sendgrid');
  return result(ctx, events.length === 1 ? single(events[0]!) : batch(events), key);
}

/** One event: what happened to which mail, why, and the ids to look it up by. */
function single(e: Obj): string {
  const message = str(e.sg_message_id);
  return lines(
    eventLine(e),
    categories(e) && `Category: ${categories(e)}`,
    message && `Message ${oneLine(message, 120)}`,
    KINDS[kindOf(e)] === undefined && summarize(e),
  );
}

/** Several events: how many of each kind, then a line per event, the urgent ones first. */
function batch(events: Obj[]): string {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(kindOf(e), (counts.get(kindOf(e)) ?? 0) + 1);
  const rank = (e: Obj) => (URGENT.includes(kindOf(e)) ? URGENT.indexOf(kindOf(e)) : URGENT.length);
  const ordered = events.map((e, i) => ({ e, i })).sort((a, b) => rank(a.e) - rank(b.e) || a.i - b.i);
  const tally = [...counts].map(([kind, n]) => `${n} ${counted(KINDS[kind]?.noun ?? kind.replace(/_/g, ' '), n)}`).join(', ');
  return lines(
    `SendGrid: ${events.length} email events (${tally})`,
    ...ordered.slice(0, MAX_LISTED).map(({ e }) => `- ${eventLine(e)}`),
    events.length > MAX_LISTED && `(${events.length - MAX_LISTED} more events not listed)`,
  );
}

interface Kind {
  /** The event as a sentence about `who`, the recipient: "Email to alex@example.com bounced". */
  says: (who: string, e: Obj) => string;
  /** The kind counted: "bounce" ("bounces" when several; a participle such as "delivered" stays). */
  noun: string;
  /** The event's own detail: the reason, the link. */
  detail?: (e: Obj) => string;
}

const reason = (e: Obj): string => {
  const why = oneLine(str(e.reason) || str(e.response), 200);
  const more = [str(e.bounce_classification), str(e.status)].filter(Boolean).join(', ');
  return `${why}${more ? ` (${more})` : ''}`;
};
const group = (e: Obj): string => (str(e.asm_group_id) ? ` group ${str(e.asm_group_id)}` : ' a group');

const KINDS: Record<string, Kind> = {
  processed: { says: (who) => `Email to ${who} accepted for delivery`, noun: 'processed' },
  delivered: { says: (who) => `Email to ${who} delivered`, noun: 'delivered', detail: (e) => oneLine(e.response, 120) },
  deferred: {
    says: (who) => `Email to ${who} deferred`,
    noun: 'deferred',
    detail: (e) => `${oneLine(e.response, 160)}${str(e.attempt) ? ` (attempt ${str(e.attempt)})` : ''}`,
  },
  bounce: { says: (who) => `Email to ${who} bounced`, noun: 'bounce', detail: reason },
  blocked: { says: (who) => `Email to ${who} blocked`, noun: 'blocked', detail: reason },
  dropped: { says: (who) => `Email to ${who} dropped`, noun: 'dropped', detail: reason },
  open: {
    says: (who) => `${who} opened an email`,
    noun: 'open',
    detail: (e) => (e.sg_machine_open === true ? 'by a mail client fetching images, not necessarily a person' : ''),
  },
  click: { says: (who) => `${who} clicked a link in an email`, noun: 'click', detail: (e) => oneLine(e.url, 300) },
  spamreport: { says: (who) => `${who} reported an email as spam`, noun: 'spam report' },
  unsubscribe: { says: (who) => `${who} unsubscribed from all email`, noun: 'unsubscribe' },
  group_unsubscribe: { says: (who, e) => `${who} unsubscribed from${group(e)}`, noun: 'group unsubscribe' },
  group_resubscribe: { says: (who, e) => `${who} resubscribed to${group(e)}`, noun: 'group resubscribe' },
  account_status_change: {
    says: (_who, e) => `SendGrid account status changed: ${oneLine(e.type, 80) || 'unknown'}`,
    noun: 'account status change',
  },
};

/** One event as a line: `Email to alex@example.com bounced: 500 unknown recipient (Invalid Address, 5.0.0)`. */
function eventLine(e: Obj): string {
  const kind = kindOf(e);
  const k = KINDS[kind];
  const who = oneLine(e.email, 200) || 'an unknown recipient';
  if (!k) return `SendGrid event "${oneLine(kind, 60)}" for ${who}`;
  const detail = k.detail?.(e) ?? '';
  return `${k.says(who, e)}${detail ? `: ${detail}` : ''}`;
}

const counted = (noun: string, n: number): string => (n === 1 || noun.endsWith('ed') ? noun : `${noun}s`);

const categories = (e: Obj): string => (Array.isArray(e.category) ? e.category.map(str).filter(Boolean).join(', ') : str(e.category));
