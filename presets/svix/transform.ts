/**
 * The `svix` preset's messages (docs/presets/svix.md): any sender that delivers through Svix (or signs
 * as Standard Webhooks). Clerk's events (an `object: "event"` envelope) and Resend's (`email.*`,
 * `contact.*`, `domain.*`) get a message of their own; any other event its type and a summary. One
 * session per Clerk user or organization, per Resend email, contact or domain, else per the data's id.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const words = (s: string): string => s.replace(/[._]/g, ' ');
const action = (type: string): string => words(type.slice(type.lastIndexOf('.') + 1));

interface Said {
  text: string;
  key?: string;
}

export default function svix(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const type = ctx.event || str(p.type);
  const data = obj(p.data);
  // Clerk wraps every event as {data, object: "event", type, instance_id, timestamp}
  const said =
    str(p.object) === 'event' && Object.keys(data).length > 0
      ? clerk(type, data)
      : /^(email|contact|domain)\./.test(type) && Object.keys(data).length > 0
        ? resend(type, data)
        : generic(type, p);
  return result(ctx, said.text, said.key);
}

// ---- Clerk (clerk.com/docs, "Webhooks overview"): the data is the object the event is about.

/** A Clerk user as `First Last <email> (user_…)`, as far as the data carries it. */
function clerkUser(u: Obj): string {
  const name = [str(u.first_name), str(u.last_name)].filter(Boolean).join(' ') || str(u.username);
  const emails = list(u.email_addresses).map(obj);
  const primary = emails.find((e) => str(e.id) === str(u.primary_email_address_id)) ?? emails[0];
  const email = str(obj(primary).email_address) || str(u.identifier);
  const who = [oneLine(name, 80), email && `<${oneLine(email, 120)}>`].filter(Boolean).join(' ');
  const id = str(u.id) || str(u.user_id);
  return who && id ? `${who} (${id})` : who || id || 'a user';
}

function clerk(type: string, d: Obj): Said {
  const key = (id: string) => (id ? sessionKey('hook:svix:clerk', id) : undefined);
  const [kind = ''] = type.split('.');
  switch (kind) {
    case 'user':
      return { text: `Clerk user ${action(type)}: ${clerkUser(d)}`, key: key(str(d.id)) };
    case 'session':
      return {
        text: `Clerk session ${str(d.id)} ${action(type)} for user ${str(d.user_id)}${str(d.status) ? ` (status ${words(str(d.status))})` : ''}`,
        key: key(str(d.user_id)),
      };
    case 'organization':
      return {
        text: `Clerk organization ${str(d.name) ? `"${oneLine(d.name, 80)}" ` : ''}${action(type)}${str(d.slug) ? ` (${str(d.slug)})` : ''}${str(d.created_by) ? ` by user ${str(d.created_by)}` : ''}`,
        key: key(str(d.id)),
      };
    case 'organizationMembership': {
      const org = obj(d.organization);
      const member = obj(d.public_user_data);
      return {
        text: `Clerk membership ${action(type)}: ${clerkUser(member)} in organization "${oneLine(org.name, 80)}"${str(d.role) ? ` as ${str(d.role)}` : ''}`,
        key: key(str(org.id)),
      };
    }
    case 'organizationInvitation':
      return {
        text: `Clerk invitation ${action(type)}: ${oneLine(d.email_address, 120)} to organization ${str(d.organization_id)}${str(d.role) ? ` as ${str(d.role)}` : ''}`,
        key: key(str(d.organization_id)),
      };
    // the bodies of Clerk's emails and texts carry sign-in codes and links: only who and what
    case 'email':
      return {
        text: `Clerk email ${action(type)}: "${oneLine(d.subject, 120)}" to ${oneLine(d.to_email_address, 120)}${str(d.status) ? ` (${words(str(d.status))})` : ''}`,
        key: key(str(d.user_id)),
      };
    case 'sms':
      return {
        text: `Clerk text message ${action(type)} to ${oneLine(d.to_phone_number, 40)}${str(d.status) ? ` (${words(str(d.status))})` : ''}`,
        key: key(str(d.user_id)),
      };
    default:
      return { text: lines(`Clerk event "${oneLine(type, 80)}"`, summarize(d)), key: key(str(d.id)) };
  }
}

// ---- Resend (resend.com/docs, "Event types"): email events by email_id, contacts, domains.

const EMAIL_VERBS: Record<string, string> = {
  sent: 'sent',
  scheduled: 'scheduled',
  delivered: 'delivered',
  delivery_delayed: 'delayed (a temporary problem at the recipient’s server)',
  complained: 'marked as spam by the recipient',
  bounced: 'bounced',
  opened: 'opened',
  clicked: 'clicked',
  failed: 'failed to send',
  suppressed: 'suppressed',
};

function resend(type: string, d: Obj): Said {
  if (type.startsWith('contact.')) {
    const name = [str(d.first_name), str(d.last_name)].filter(Boolean).join(' ');
    return {
      text: lines(
        `Resend contact ${action(type)}: ${name ? `${oneLine(name, 80)} ` : ''}<${oneLine(d.email, 120)}>${str(d.audience_id) ? ` (audience ${str(d.audience_id)})` : ''}`,
        d.unsubscribed === true && 'Unsubscribed',
      ),
      key: sessionKey('hook:svix:resend', str(d.id) || str(d.email)),
    };
  }
  if (type.startsWith('domain.')) {
    const records = list(d.records).map(obj);
    return {
      text: lines(
        `Resend domain ${oneLine(d.name, 120)} ${action(type)}: status ${words(str(d.status))}${str(d.region) ? ` (${str(d.region)})` : ''}`,
        ...records.slice(0, 10).map((r) => `- ${str(r.record)} ${str(r.type)} ${oneLine(r.name, 120)}: ${words(str(r.status))}`),
        type !== 'domain.deleted' && str(d.id) && `https://resend.com/domains/${str(d.id)}`,
      ),
      key: sessionKey('hook:svix:resend', str(d.id) || str(d.name)),
    };
  }
  const event = type.slice('email.'.length);
  const to = list(d.to).map((t) => oneLine(t, 120));
  const bounce = obj(d.bounce);
  const diagnostics = list(bounce.diagnosticCode).map((c) => oneLine(c, 200));
  const head =
    event === 'received'
      ? `Email received from ${oneLine(d.from, 120)} to ${to.join(', ')}: "${oneLine(d.subject, 160)}"`
      : `Email "${oneLine(d.subject, 160)}" to ${to.join(', ')} ${EMAIL_VERBS[event] ?? words(event)} (from ${oneLine(d.from, 120)})`;
  return {
    text: lines(
      head,
      str(bounce.type) && `Bounce: ${[str(bounce.type), str(bounce.subType)].filter(Boolean).join(', ')}: ${oneLine(bounce.message)}`,
      ...diagnostics.slice(0, 3),
      str(obj(d.click).link) && `Link: ${oneLine(obj(d.click).link, 300)}`,
      str(obj(d.failed).reason) && `Reason: ${oneLine(obj(d.failed).reason)}`,
      str(obj(d.suppressed).message) && `Reason: ${oneLine(obj(d.suppressed).message)}`,
      str(d.email_id) && `https://resend.com/emails/${str(d.email_id)}`,
    ),
    key: str(d.email_id) ? sessionKey('hook:svix:resend', str(d.email_id)) : undefined,
  };
}

/** Any other sender's event: its type and a summary of its fields (the data's, when it wraps them). */
function generic(type: string, p: Obj): Said {
  const data = obj(p.data);
  const { type: _t, ...rest } = p;
  const fields = Object.keys(data).length > 0 ? data : rest;
  const id = str(data.id) || str(p.id);
  return {
    text: lines(`Webhook event "${oneLine(type, 80) || 'unnamed'}"`, summarize(fields)),
    key: id ? sessionKey('hook:svix', id) : undefined,
  };
}
