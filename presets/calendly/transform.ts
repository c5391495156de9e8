/**
 * The `calendly` preset's messages (docs/presets/calendly.md): who booked, canceled or missed which
 * meeting, when, where, and what they answered; routing form submissions as their questions and
 * answers; a summary for other events. One session per scheduled event, so a booking and its
 * cancellation or no-show share it.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
/** The last segment of a Calendly API URI: the thing's uuid. */
const uuid = (uri: unknown): string => str(uri).split('/').filter(Boolean).pop() ?? '';

export default function calendly(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const event = ctx.event || str(p.event);
  const d = obj(p.payload);
  const scheduled = obj(d.scheduled_event);
  const meeting = uuid(scheduled.uri) || uuid(d.event);
  const text =
    event === 'routing_form_submission.created'
      ? routing(d)
      : event.startsWith('invitee')
        ? invitee(event, d, scheduled)
        : lines(`Calendly event "${oneLine(event, 80) || 'unnamed'}"`, summarize(d));
  const key = meeting ? sessionKey('hook:calendly', meeting) : uuid(d.uri) ? sessionKey('hook:calendly', uuid(d.uri)) : undefined;
  return result(ctx, text, key);
}

/** `2019-08-24 14:15 UTC` from an ISO time. */
const at = (v: unknown): string => (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(str(v)) ? `${str(v).slice(0, 16).replace('T', ' ')} UTC` : '');

/** The questions and answers as `Q:` and `A:` lines. */
const answers = (qa: unknown): string[] =>
  list(qa)
    .slice(0, 20)
    .flatMap((a) => [`Q: ${oneLine(a.question, 300)}`, `A: ${oneLine(a.answer, 1000) || '(no answer)'}`]);

// the cancel and reschedule links act for the invitee without signing in: never shown
function invitee(event: string, d: Obj, scheduled: Obj): string {
  const who = [oneLine(d.name, 80), str(d.email) && `<${oneLine(d.email, 120)}>`].filter(Boolean).join(' ') || 'Someone';
  const what = `"${oneLine(scheduled.name, 120) || 'a meeting'}"${at(scheduled.start_time) ? ` on ${at(scheduled.start_time)}` : ''}`;
  const hosts = list(scheduled.event_memberships).map((m) => oneLine(m.user_name, 80) || oneLine(m.user_email, 120));
  const cancel = obj(d.cancellation);
  const head =
    event === 'invitee.created'
      ? `${who} booked ${what}${d.rescheduled === true || str(d.old_invitee) ? ' (rescheduled)' : ''}`
      : event === 'invitee.canceled'
        ? `${who} ${d.rescheduled === true ? 'rescheduled' : 'canceled'} ${what}`
        : event === 'invitee_no_show.created'
          ? `${who} was marked a no-show for ${what}`
          : event === 'invitee_no_show.deleted'
            ? `${who} is no longer marked a no-show for ${what}`
            : `Calendly ${event.replace(/[._]/g, ' ')}: ${who}, ${what}`;
  const place = obj(scheduled.location);
  return lines(
    head,
    hosts.length > 0 && `With: ${hosts.join(', ')}`,
    str(d.timezone) && `Invitee's time zone: ${str(d.timezone)}`,
    str(cancel.reason) &&
      `Reason: ${oneLine(cancel.reason, 500)}${str(cancel.canceler_type) ? ` (canceled by the ${str(cancel.canceler_type)})` : ''}`,
    event === 'invitee.created' && str(place.join_url),
    event === 'invitee.created' && !str(place.join_url) && oneLine(place.location, 200),
    ...(event === 'invitee.created' ? answers(d.questions_and_answers) : []),
  );
}

function routing(d: Obj): string {
  const result = obj(d.result);
  return lines(
    `Routing form submitted by ${str(d.submitter_type).toLowerCase() || 'someone'}${at(d.created_at) ? ` on ${at(d.created_at)}` : ''}`,
    ...answers(d.questions_and_answers),
    str(result.type) &&
      `Routed to: ${str(result.type).replace(/_/g, ' ')}${typeof result.value === 'string' ? ` ${oneLine(result.value, 200)}` : ''}`,
  );
}
