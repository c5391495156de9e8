/**
 * The `zoom` preset's messages (docs/presets/zoom.md): meetings and webinars scheduled, started and
 * ended, participants joining and leaving, recordings and transcripts ready — and a summary for the
 * other events. One session per meeting occurrence (its uuid). Zoom's URL validation never reaches
 * this: the `zoom` verifier answers it.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const words = (s: string): string => s.replace(/[._]/g, ' ');

interface Said {
  text: string;
  key?: string;
}

export default function zoom(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const event = ctx.event || str(p.event);
  const payload = obj(p.payload);
  const o = obj(payload.object);
  const [kind = '', action = ''] = event.split('.');
  const said =
    (kind === 'meeting' || kind === 'webinar') && action.startsWith('participant_')
      ? participant(kind, action, o)
      : kind === 'meeting' || kind === 'webinar'
        ? meeting(kind, action, o, payload)
        : kind === 'recording'
          ? recording(action, o)
          : generic(event, payload);
  const occurrence = str(o.uuid) || str(o.id);
  return result(ctx, said.text, said.key ?? (occurrence ? sessionKey('hook:zoom', occurrence) : undefined));
}

/** `meeting "Topic" (ID 123)`, or a webinar. */
const named = (kind: string, o: Obj): string =>
  `${kind === 'webinar' ? 'webinar' : 'meeting'} "${oneLine(o.topic, 120) || 'untitled'}"${str(o.id) ? ` (ID ${str(o.id)})` : ''}`;
const title = (kind: string, o: Obj): string => named(kind, o).replace(/^./, (c) => c.toUpperCase());

/** Minutes between two ISO times, when both are there. */
function minutes(from: unknown, to: unknown): number | undefined {
  const ms = Date.parse(str(to)) - Date.parse(str(from));
  return Number.isFinite(ms) && ms >= 0 ? Math.round(ms / 60000) : undefined;
}

const VERBS: Record<string, string> = {
  started: 'started',
  ended: 'ended',
  created: 'scheduled',
  updated: 'updated',
  deleted: 'deleted',
  recovered: 'recovered',
  permanently_deleted: 'permanently deleted',
  sharing_started: 'screen sharing started',
  sharing_ended: 'screen sharing ended',
  registration_created: 'has a new registrant',
  summary_completed: 'summary is ready',
};

function meeting(kind: string, action: string, o: Obj, payload: Obj): Said {
  const took = action === 'ended' ? minutes(o.start_time, o.end_time) : undefined;
  const by = str(payload.operator) ? ` by ${oneLine(payload.operator, 120)}` : '';
  const when =
    action === 'created' && str(o.start_time) ? ` for ${str(o.start_time)}${str(o.duration) ? ` (${str(o.duration)} min)` : ''}` : '';
  const registrant = obj(o.registrant);
  return {
    text: lines(
      `${title(kind, o)} ${VERBS[action] ?? words(action)}${when}${took !== undefined ? ` after ${took} minutes` : ''}${by}`,
      str(registrant.email) &&
        `Registrant: ${oneLine([str(registrant.first_name), str(registrant.last_name)].join(' '), 80)} <${oneLine(registrant.email, 120)}>`,
      (action === 'created' || action === 'updated') && oneLine(o.agenda, 300),
      str(o.host_id) && action === 'started' && `Host: ${str(o.host_id)}`,
      str(o.join_url),
    ),
  };
}

function participant(kind: string, action: string, o: Obj): Said {
  const person = obj(o.participant);
  const who =
    [oneLine(person.user_name, 80), str(person.email) && `<${oneLine(person.email, 120)}>`].filter(Boolean).join(' ') || 'someone';
  const verb = words(action.replace(/^participant_/, ''));
  return {
    text: lines(`${who} ${verb} ${named(kind, o)}`, str(person.leave_reason) && `Reason: ${oneLine(person.leave_reason, 200)}`),
  };
}

/** A size in bytes as people read it. */
function size(bytes: unknown): string {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '';
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

// the download token, the download URLs and the passcode grant access to the recording: never shown
function recording(action: string, o: Obj): Said {
  const files = list(o.recording_files);
  const shown = files.slice(0, 6).map((f) => {
    const took = minutes(f.recording_start, f.recording_end);
    return `- ${str(f.file_type)} ${words(str(f.recording_type))}${took !== undefined ? `, ${took} min` : ''}${size(f.file_size) ? `, ${size(f.file_size)}` : ''}`;
  });
  const ready = action === 'completed' ? 'is ready' : action === 'transcript_completed' ? 'has its transcript' : words(action);
  return {
    text: lines(
      `Recording of ${named('meeting', o)} ${ready}${files.length ? `: ${files.length} file${files.length === 1 ? '' : 's'}${size(o.total_size) ? ` (${size(o.total_size)})` : ''}` : ''}`,
      ...shown,
      files.length > 6 && `(${files.length - 6} more files)`,
      str(o.host_email) && `Host: ${oneLine(o.host_email, 120)}`,
      str(o.share_url),
    ),
  };
}

/** Any other event: its name, who did it, and a summary of the object (no passcodes or tokens). */
function generic(event: string, payload: Obj): Said {
  const o = obj(payload.object);
  const { password: _p, passcode: _c, token: _t, download_token: _d, ...rest } = Object.keys(o).length ? o : payload;
  return {
    text: lines(
      `Zoom event "${oneLine(event, 80) || 'unnamed'}"${str(payload.operator) ? ` by ${oneLine(payload.operator, 120)}` : ''}`,
      summarize(rest),
    ),
  };
}
