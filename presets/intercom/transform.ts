/**
 * The `intercom` preset's messages (docs/presets/intercom.md): a conversation started, replied to,
 * noted, assigned, closed, as who did it and what they wrote (Intercom's HTML made plain text); a
 * contact, company or ticket event as what happened to whom; a summary for other topics. One
 * session per conversation (and per ticket, contact, company). Intercom's `ping`, sent when a
 * webhook is saved, runs nothing.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

export default function intercom(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const topic = ctx.event || str(p.topic);
  if (topic === 'ping') return null;
  const item = obj(obj(p.data).item);
  const kind = topic.split('.')[0] ?? '';
  const said = (kind === 'conversation' || kind === 'conversation_part' ? conversation : kind === 'ticket' ? ticket : other)(item, topic);
  const id = str(item.id);
  const thing = kind === 'conversation_part' ? 'conversation' : kind === 'user' || kind === 'visitor' ? 'contact' : kind;
  return result(ctx, said, id ? sessionKey('hook:intercom', str(p.app_id), thing, str(item.conversation_id) || id) : undefined);
}

/** Intercom's HTML bodies as plain text: paragraphs and line breaks kept, tags dropped, entities read. */
function plain(html: unknown): string {
  if (typeof html !== 'string') return '';
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|h\d)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Who wrote or did something: `Kill Bill <bill@bill.bill>`, `admin 12345`, `a user`. */
function who(a: Obj): string {
  const name = oneLine(a.name, 80);
  const email = oneLine(a.email, 200);
  if (name && email) return `${name} <${email}>`;
  return name || email || (str(a.type) ? `${str(a.type).replace(/_/g, ' ')}${str(a.id) ? ` ${str(a.id)}` : ''}` : 'someone');
}

/** What an author did, before "Intercom conversation <id>". */
const VERBS: Record<string, string> = {
  'user.created': 'started',
  'admin.single.created': 'started',
  'user.replied': 'replied in',
  'admin.replied': 'replied in',
  'operator.replied': 'replied (as the operator bot) in',
  'admin.noted': 'added a note to',
  'admin.assigned': 'assigned',
  'admin.closed': 'closed',
  'admin.opened': 'reopened',
  'admin.snoozed': 'snoozed',
  'admin.unsnoozed': 'unsnoozed',
};

function conversation(c: Obj, topic: string): string {
  const list = obj(c.conversation_parts).conversation_parts;
  const parts = Array.isArray(list) ? list.map(obj) : [];
  // the message that started it: `source` in today's API, `conversation_message` in version 1.x
  const first = obj(c.source ?? c.conversation_message);
  const part = topic.endsWith('.created') || parts.length === 0 ? first : parts.at(-1)!;
  const author = obj(part.author);
  // a part by the conversation's user may name only the user's id: the conversation names the user
  const byUser = !str(author.name) && !str(author.email) && (!str(author.type) || str(author.type) === 'user');
  const action = topic.replace(/^conversation(_part)?\./, '');
  const verb = VERBS[action] ?? `${action.replace(/[._]/g, ' ')}:`;
  const title = oneLine(c.title, 150) || oneLine(first.subject, 150);
  return lines(
    `${who(byUser ? { ...author, ...obj(c.user) } : author)} ${verb} Intercom conversation ${str(c.id)}${title ? ` (${title})` : ''}`,
    block(plain(part.body)),
    str(obj(c.links).conversation_web),
  );
}

function ticket(t: Obj, topic: string): string {
  const attrs = obj(t.ticket_attributes);
  const title = oneLine(attrs._default_title_ ?? t.title, 150);
  const state = oneLine(t.ticket_state ?? obj(t.ticket_state).name, 60);
  return lines(
    `Intercom ticket ${str(t.ticket_id) || str(t.id)} ${topic.replace(/^ticket\./, '').replace(/[._]/g, ' ')}${title ? `: ${title}` : ''}${state ? ` (${state})` : ''}`,
    block(plain(attrs._default_description_)),
  );
}

/** A contact, company or any other topic: what happened to whom, and a summary of its fields. */
function other(item: Obj, topic: string): string {
  const kind = topic.split('.')[0] ?? 'item';
  const what = topic.slice(kind.length + 1).replace(/[._]/g, ' ');
  const { type: _t, name: _n, email: _e, avatar: _a, social_profiles: _s, segments: _g, location_data: _l, ...rest } = item;
  return lines(`Intercom ${oneLine(topic, 80) || 'event'}: ${who(item)}${what ? ` (${kind} ${what})` : ''}`, summarize(rest));
}
