/**
 * The `linear` preset's messages (docs/presets/linear.md): an issue created, updated (what changed) or
 * removed, a comment on an issue, and for other data types (projects, project updates, cycles,
 * documents, …) what happened to which one; a summary when a payload names nothing. One session per
 * issue, its comments included.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** Linear's actions as a message reads them. */
const DONE: Record<string, string> = { create: 'created', update: 'updated', remove: 'removed', restore: 'restored', set: 'set' };
const done = (action: string): string => DONE[action] ?? (action || 'changed');

/** Who did it: the actor Linear names (a user, an app or an integration). */
const actor = (p: Obj): string => oneLine(obj(p.actor).name, 80);
const by = (p: Obj): string => (actor(p) ? ` by ${actor(p)}` : '');
const issueKey = (id: unknown): string | undefined => (str(id) ? sessionKey('hook:linear:issue', str(id)) : undefined);

/** What an update changed, from the fields Linear lists in `updatedFrom`, with their new values where it has them. */
function changed(d: Obj, from: Obj): string[] {
  const out: string[] = [];
  for (const field of Object.keys(from)) {
    if (field === 'updatedAt' || field === 'sortOrder' || field === 'prioritySortOrder' || field === 'subIssueSortOrder') continue;
    if (field === 'stateId') out.push(`Status: ${oneLine(obj(d.state).name, 60) || 'changed'}`);
    else if (field === 'assigneeId') out.push(`Assignee: ${oneLine(obj(d.assignee).name, 80) || 'none'}`);
    else if (field === 'priority') out.push(`Priority: ${oneLine(d.priorityLabel, 40) || str(d.priority)}`);
    else if (field === 'title') out.push(`Title was: ${oneLine(from.title, 200)}`);
    else if (field === 'labelIds') out.push(`Labels: ${labels(d) || 'none'}`);
    else out.push(`Changed: ${field}`);
  }
  return out.slice(0, 10);
}

const labels = (d: Obj): string =>
  (Array.isArray(d.labels) ? d.labels : [])
    .map((l) => oneLine(obj(l).name, 60))
    .filter(Boolean)
    .join(', ');

function issue(p: Obj, d: Obj, action: string): string {
  const facts = [
    oneLine(obj(d.state).name, 60),
    str(d.priorityLabel) && str(d.priorityLabel) !== 'No priority' ? `${oneLine(d.priorityLabel, 40)} priority` : '',
    obj(d.assignee).name ? `assigned to ${oneLine(obj(d.assignee).name, 80)}` : '',
    oneLine(obj(d.team).key ?? obj(d.team).name, 60) && `team ${oneLine(obj(d.team).key ?? obj(d.team).name, 60)}`,
  ].filter(Boolean);
  const shown = action === 'create';
  return lines(
    `Linear issue ${str(d.identifier) || str(d.id)} ${done(action)}${by(p)}: ${oneLine(d.title)}`,
    facts.join(', '),
    shown && block(d.description),
    shown && labels(d) && `Labels: ${labels(d)}`,
    ...(action === 'update' ? changed(d, obj(p.updatedFrom)) : []),
    str(p.url) || str(d.url),
  );
}

function comment(p: Obj, d: Obj, action: string): string {
  const on = obj(d.issue);
  const id = str(on.identifier);
  const what = id ? `Linear issue ${id}${oneLine(on.title) ? `: ${oneLine(on.title)}` : ''}` : 'a Linear issue';
  const who = oneLine(obj(d.user).name, 80) || actor(p) || 'Someone';
  const verb = action === 'create' ? 'commented on' : `${done(action)} a comment on`;
  return lines(`${who} ${verb} ${what}`, action !== 'remove' && block(d.body), str(p.url) || str(d.url));
}

export default function linear(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const d = obj(p.data);
  const type = ctx.event || str(p.type);
  const action = str(p.action);
  if (type === 'Issue') return result(ctx, issue(p, d, action), issueKey(d.id));
  if (type === 'Comment') return result(ctx, comment(p, d, action), issueKey(d.issueId ?? obj(d.issue).id));
  const name = oneLine(d.name ?? d.title ?? obj(d.issue).title, 200);
  const head = `Linear ${oneLine(type, 60) || 'event'}${action ? ` ${done(action)}` : ''}${by(p)}${name ? `: ${name}` : ''}`;
  const about = d.issueId ?? obj(d.issue).id;
  return result(ctx, lines(head, name ? block(d.body ?? d.description, 1000) : summarize(d), str(p.url) || str(d.url)), issueKey(about));
}
