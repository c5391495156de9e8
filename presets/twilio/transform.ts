/**
 * The `twilio` preset's messages (docs/presets/twilio.md): an incoming SMS, MMS or WhatsApp message
 * as its sender, its text and its media; a status callback as the outbound message's new status
 * (with Twilio's error code when it failed). One session per person: the number a message came from,
 * or the number an outbound message went to, so a conversation and the fate of its replies share one.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey } from '../_shared/message.ts';

type Fields = Record<string, unknown>;
/** A form field as one string: Twilio sends each once; a repeated one reads as its first value. */
const field = (p: Fields, name: string): string => {
  const v = Array.isArray(p[name]) ? (p[name] as unknown[])[0] : p[name];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
};

const CHANNELS: Record<string, string> = { whatsapp: 'WhatsApp', messenger: 'Messenger', rcs: 'RCS' };

/** An address as Twilio writes it (`+15558675310`, `whatsapp:+15558675310`): its channel and its number. */
function address(value: string): { channel: string; number: string } {
  const colon = value.indexOf(':');
  const prefix = colon > 0 ? value.slice(0, colon).toLowerCase() : '';
  return CHANNELS[prefix] ? { channel: CHANNELS[prefix], number: value.slice(colon + 1) } : { channel: '', number: value };
}

/** The session of a conversation with `who` (`+1555…` or `whatsapp:+1555…`), one per person and channel. */
const personKey = (who: string): string | undefined => {
  const a = address(who);
  const number = a.number.replace(/^\+/, '');
  return number ? sessionKey('hook:twilio', a.channel.toLowerCase(), number) : undefined;
};

export default function twilio(ctx: TransformContext<Fields>): TransformResult {
  const p = ctx.payload !== null && typeof ctx.payload === 'object' ? ctx.payload : {};
  const status = ctx.event || field(p, 'SmsStatus') || field(p, 'MessageStatus');
  if (status === 'received' || status === 'receiving' || (!status && field(p, 'Body'))) {
    return result(ctx, incoming(p), personKey(field(p, 'From')));
  }
  return result(ctx, statusUpdate(p, status), personKey(field(p, 'To')));
}

function incoming(p: Fields): string {
  const from = address(field(p, 'From'));
  const to = address(field(p, 'To'));
  const media = Number(field(p, 'NumMedia')) || 0;
  const kind = from.channel ? `${from.channel} message` : media > 0 ? 'MMS' : 'SMS';
  const name = field(p, 'ProfileName');
  const place = [field(p, 'FromCity'), field(p, 'FromState'), field(p, 'FromCountry')].filter(Boolean).join(', ');
  const attachments: string[] = [];
  for (let i = 0; i < Math.min(media, 10); i++) {
    const url = field(p, `MediaUrl${i}`);
    if (url) attachments.push(`- ${field(p, `MediaContentType${i}`) || 'media'}: ${url}`);
  }
  return lines(
    `${kind} from ${name ? `${oneLine(name, 80)} (${from.number})` : from.number || 'an unknown sender'} to ${to.number || 'your number'}${place ? ` (${oneLine(place, 120)})` : ''}:`,
    block(field(p, 'Body')),
    attachments.length > 0 && `Media (${media}):`,
    ...attachments,
    field(p, 'Latitude') &&
      `Location: ${field(p, 'Latitude')}, ${field(p, 'Longitude')}${field(p, 'Address') ? ` (${oneLine(field(p, 'Address'), 120)})` : ''}`,
    `Message ${field(p, 'MessageSid')}`,
  );
}

function statusUpdate(p: Fields, status: string): string {
  const to = address(field(p, 'To'));
  const error = field(p, 'ErrorCode');
  const sid = field(p, 'MessageSid');
  const what = `${to.channel ? `${to.channel} message` : 'Message'}${sid ? ` ${sid}` : ''}`;
  const how = status ? status.replace(/_/g, ' ') : 'changed status';
  const why = error ? ` (error ${oneLine(error, 20)}: https://www.twilio.com/docs/api/errors/${encodeURIComponent(error)})` : '';
  return lines(`${what} to ${to.number || 'an unknown number'} ${how}${why}`, oneLine(field(p, 'ErrorMessage')));
}
