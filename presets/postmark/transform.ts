/**
 * The `postmark` preset's messages (docs/presets/postmark.md): an inbound email as its sender,
 * recipients, subject, the reply text and its attachments; an outbound event (bounce, delivery, spam
 * complaint, open, click, subscription change) as what happened to which address and why. One
 * session per person: the sender of an inbound email, the recipient of an outbound one, so a
 * conversation by email and the fate of the mail sent to that person share one.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

interface Said {
  text: string;
  /** The person the event is about: its session. */
  who: string;
}

export default function postmark(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const type = ctx.event || str(p.RecordType);
  const said = type === '' && (p.FromFull || p.From) ? inbound(p) : (MESSAGES[type] ?? generic)(p, type);
  return result(
    ctx,
    lines(said.text, str(p.Tag) && `Tag: ${oneLine(p.Tag, 80)}`),
    said.who ? sessionKey('hook:postmark', said.who.toLowerCase()) : undefined,
  );
}

/** `Name <address>`, or the address alone. */
function person(p: Obj): string {
  const name = oneLine(p.Name, 80);
  const email = oneLine(p.Email, 200);
  return name && email ? `${name} <${email}>` : email || name;
}

function inbound(p: Obj): Said {
  const from = obj(p.FromFull);
  const sender = person(from) || oneLine(p.From, 200) || 'an unknown sender';
  const to = list(p.ToFull).map(person).filter(Boolean).join(', ') || oneLine(p.To, 300);
  const cc = list(p.CcFull).map(person).filter(Boolean).join(', ');
  const files = list(p.Attachments).map((a) => `${oneLine(a.Name, 100)} (${oneLine(a.ContentType, 60)}, ${str(a.ContentLength)} bytes)`);
  const spam = list(p.Headers).find((h) => str(h.Name).toLowerCase() === 'x-spam-status' && /^yes/i.test(str(h.Value)));
  return {
    text: lines(
      `Email from ${sender} to ${to || 'your inbound address'}: ${oneLine(p.Subject) || '(no subject)'}`,
      cc && `Cc: ${cc}`,
      spam && 'Postmark marked it as spam (X-Spam-Status: Yes).',
      // the reply without the quoted thread when Postmark could find it, else the whole text
      block(str(p.StrippedTextReply) || p.TextBody),
      files.length > 0 && `Attachments: ${files.join(', ')}`,
      `Message ${oneLine(p.MessageID, 100)}`,
    ),
    who: str(from.Email) || str(p.From),
  };
}

type Message = (p: Obj, type: string) => Said;

const subject = (p: Obj): string => (str(p.Subject) ? ` "${oneLine(p.Subject, 150)}"` : '');
const inactive = (p: Obj): string | false =>
  p.Inactive === true && `Postmark now suppresses mail to this address${p.CanActivate === true ? ' (it can be reactivated)' : ''}.`;

const bounce: Message = (p) => ({
  text: lines(
    `Email${subject(p)} to ${oneLine(p.Email, 200) || 'an unknown address'} bounced (${oneLine(p.Name, 60) || oneLine(p.Type, 60)})`,
    oneLine(p.Description, 300),
    str(p.Details) && `Details: ${oneLine(p.Details, 500)}`,
    inactive(p),
    `From ${oneLine(p.From, 200)}, message ${oneLine(p.MessageID, 100)}`,
  ),
  who: str(p.Email),
});

const spamComplaint: Message = (p) => ({
  text: lines(
    `${oneLine(p.Email, 200) || 'A recipient'} marked the email${subject(p)} as spam`,
    inactive(p),
    `From ${oneLine(p.From, 200)}, message ${oneLine(p.MessageID, 100)}`,
  ),
  who: str(p.Email),
});

const delivery: Message = (p) => ({
  text: lines(`Email to ${oneLine(p.Recipient, 200)} delivered: ${oneLine(p.Details, 300)}`, `Message ${oneLine(p.MessageID, 100)}`),
  who: str(p.Recipient),
});

/** Where and with what a message was opened or clicked: `Chrome on macOS, Houston, Texas, United States`. */
function reader(p: Obj): string {
  const geo = obj(p.Geo);
  const place = [str(geo.City), str(geo.Region), str(geo.Country)].filter(Boolean).join(', ');
  const client = [str(obj(p.Client).Family) || str(obj(p.Client).Name), str(obj(p.OS).Family) && `on ${str(obj(p.OS).Family)}`]
    .filter(Boolean)
    .join(' ');
  return [client, str(p.Platform), place].filter(Boolean).join(', ');
}

const open: Message = (p) => ({
  text: lines(
    `${oneLine(p.Recipient, 200) || 'A recipient'} opened an email${p.FirstOpen === true ? ' (first open)' : ''}${reader(p) ? ` (${reader(p)})` : ''}`,
    `Message ${oneLine(p.MessageID, 100)}`,
  ),
  who: str(p.Recipient),
});

const click: Message = (p) => ({
  text: lines(
    `${oneLine(p.Recipient, 200) || 'A recipient'} clicked a link in an email: ${oneLine(p.OriginalLink, 300)}`,
    reader(p) && `(${reader(p)})`,
    `Message ${oneLine(p.MessageID, 100)}`,
  ),
  who: str(p.Recipient),
});

const subscription: Message = (p) => ({
  text: lines(
    p.SuppressSending === false
      ? `Mail to ${oneLine(p.Recipient, 200)} was reactivated (by ${oneLine(p.Origin, 40) || 'someone'})`
      : `Mail to ${oneLine(p.Recipient, 200)} is now suppressed${str(p.SuppressionReason) ? ` (${oneLine(p.SuppressionReason, 60)})` : ''}, by ${oneLine(p.Origin, 40) || 'someone'}`,
    str(p.MessageID) && `Message ${oneLine(p.MessageID, 100)}`,
  ),
  who: str(p.Recipient),
});

/** A record type without a message of its own: its name, the address, and a summary of its fields. */
const generic: Message = (p, type) => {
  const who = str(p.Recipient) || str(p.Email);
  const { RecordType: _r, Metadata: _m, Content: _c, ...rest } = p;
  return { text: lines(`Postmark ${oneLine(type, 60) || 'event'}${who ? ` for ${oneLine(who, 200)}` : ''}`, summarize(rest)), who };
};

const MESSAGES: Record<string, Message> = {
  Bounce: bounce,
  SpamComplaint: spamComplaint,
  Delivery: delivery,
  Open: open,
  Click: click,
  SubscriptionChange: subscription,
};
