/**
 * The `healthchecks` preset's message (docs/presets/healthchecks.md): a check gone down or back up — its
 * name, tags, description, when it last pinged, its schedule, and its page. One session per check.
 * The body is the operator's template: the documented one nests the check (`$JSON`) under `check`; a
 * body of `$JSON` alone, or of the check's own fields, is read the same way.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** The check's page, from its API address (`<site>/api/v3/checks/<uuid>` → `<site>/checks/<uuid>/details/`). */
function page(c: Obj): string {
  const m = /^(https?:\/\/[^?#]*?)\/api\/v\d+\/checks\/([0-9a-f-]{36})$/i.exec(str(c.update_url));
  return m ? `${m[1]}/checks/${m[2]}/details/` : '';
}

/** Seconds as minutes, hours or days, whichever reads best. */
function duration(v: unknown): string {
  const s = typeof v === 'number' ? v : Number.NaN;
  if (!Number.isFinite(s) || s <= 0) return '';
  if (s % 86400 === 0) return `${s / 86400} d`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

function schedule(c: Obj): string {
  const grace = duration(c.grace);
  const every = str(c.schedule)
    ? `schedule ${oneLine(c.schedule, 80)}${str(c.tz) ? ` (${oneLine(c.tz, 40)})` : ''}`
    : duration(c.timeout) && `period ${duration(c.timeout)}`;
  return [every, grace && `grace ${grace}`].filter(Boolean).join(', ');
}

export default function healthchecks(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const c = Object.keys(obj(p.check)).length ? obj(p.check) : p;
  const name = oneLine(c.name, 150) || oneLine(c.slug, 150);
  const status = oneLine(ctx.event || c.status, 20);
  if (!name) return result(ctx, lines(`Healthchecks: a check is ${status || 'in an unknown state'}`, summarize(p)), undefined);
  const verb = status === 'up' ? 'is up again' : status === 'down' ? 'is down' : `is ${status || 'in an unknown state'}`;
  const pings = typeof c.n_pings === 'number' ? `, ${c.n_pings} ping${c.n_pings === 1 ? '' : 's'} in all` : '';
  const id = str(c.uuid) || str(c.unique_key) || str(c.slug) || name;
  return result(
    ctx,
    lines(
      `Check "${name}" ${verb}${str(c.tags) ? ` (tags: ${oneLine(c.tags, 150)})` : ''}${str(p.now) ? ` at ${oneLine(p.now, 40)}` : ''}`,
      oneLine(c.desc, 500),
      str(c.last_ping) ? `Last ping ${oneLine(c.last_ping, 40)}${pings}` : 'It has never pinged',
      schedule(c),
      page(c),
    ),
    sessionKey('hook:healthchecks', id),
  );
}
