/**
 * The `sentry` preset's messages (docs/presets/sentry.md): an issue created or changing state, an issue
 * alert with the event that fired it, a metric alert, an error, a comment, an installation; a summary for
 * the rest. One session per Sentry issue (its alerts, errors and comments join it), one per metric alert
 * incident.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const issueKey = (id: unknown): string | undefined => (str(id) ? sessionKey('hook:sentry:issue', str(id)) : undefined);

interface Said {
  text: string;
  key?: string | undefined;
}
type Message = (data: Obj, action: string, p: Obj) => Said;

export default function sentry(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const resource = ctx.headers['sentry-hook-resource'] ?? '';
  const action = str(p.action);
  const said = (MESSAGES[resource] ?? generic(resource))(obj(p.data), action, p);
  return result(ctx, said.text, said.key);
}

/** Who did it: a person's name, or Sentry itself. */
const actor = (p: Obj): string => str(obj(p.actor).name) || 'Sentry';

/** The organization and project slugs an API address names (`…/projects/<org>/<project>/…`). */
function projectOf(url: unknown): string {
  const m = /\/projects\/([^/]+)\/([^/]+)\//.exec(str(url));
  return m ? `${m[1]}/${m[2]}` : '';
}

const issue: Message = (data, action, p) => {
  const i = obj(data.issue);
  const project = str(obj(i.project).slug) || str(obj(i.project).name);
  const state = [str(i.level), str(i.substatus) || str(i.status)].filter(Boolean).join(', ');
  const assignee = obj(i.assignedTo);
  const seen = str(i.count)
    ? `Seen ${str(i.count)} time${str(i.count) === '1' ? '' : 's'}${typeof i.userCount === 'number' ? ` by ${i.userCount} user${i.userCount === 1 ? '' : 's'}` : ''}, first ${str(i.firstSeen)}, last ${str(i.lastSeen)}`
    : '';
  return {
    text: lines(
      `Sentry issue ${str(i.shortId) || str(i.id)} ${action || 'changed'}${project ? ` in ${project}` : ''}${state ? ` (${state})` : ''}${action === 'assigned' || action === 'created' ? '' : ` by ${actor(p)}`}: ${oneLine(i.title)}`,
      action === 'assigned' && `Assigned to ${oneLine(assignee.name ?? assignee.email, 100) || 'someone'} by ${actor(p)}`,
      str(i.culprit) && `In ${oneLine(i.culprit, 200)}`,
      seen,
      str(i.web_url) || str(i.permalink),
    ),
    key: issueKey(i.id),
  };
};

/** An event's where: its culprit, environment, release and the URL it happened on. */
function eventDetails(e: Obj): (string | false)[] {
  const tags = new Map((Array.isArray(e.tags) ? e.tags : []).filter(Array.isArray).map((t) => [str(t[0]), str(t[1])]));
  const env = tags.get('environment') ?? str(e.environment);
  return [
    str(e.culprit) && `In ${oneLine(e.culprit, 200)}`,
    (env || str(e.release)) &&
      [env && `environment ${oneLine(env, 60)}`, str(e.release) && `release ${oneLine(e.release, 80)}`].filter(Boolean).join(', '),
    str(obj(e.request).url) && `URL: ${oneLine(obj(e.request).url, 300)}`,
  ];
}

const eventAlert: Message = (data) => {
  const e = obj(data.event);
  const rule = oneLine(data.triggered_rule ?? obj(data.issue_alert).title, 150);
  const project = projectOf(e.url);
  return {
    text: lines(
      `Sentry alert "${rule || 'issue alert'}" triggered${project ? ` in ${project}` : ''} (${str(e.level) || 'event'}): ${oneLine(e.title)}`,
      ...eventDetails(e),
      str(e.web_url) || str(e.issue_url),
    ),
    key: issueKey(e.issue_id),
  };
};

const error: Message = (data, action) => {
  const e = obj(data.error);
  return {
    text: lines(
      `Sentry error ${action || 'received'}${projectOf(e.url) ? ` in ${projectOf(e.url)}` : ''} (${str(e.level) || 'error'}): ${oneLine(e.title)}`,
      ...eventDetails(e),
      str(e.web_url) || str(e.issue_url),
    ),
    key: issueKey(e.issue_id),
  };
};

const metricAlert: Message = (data, action) => {
  const m = obj(data.metric_alert);
  const rule = obj(m.alert_rule);
  // Sentry writes the line break of description_text as the two characters \n
  const description = str(data.description_text).replace(/\\n/g, '\n');
  const projects = (Array.isArray(rule.projects) ? rule.projects : []).map(str).filter(Boolean).join(', ');
  return {
    text: lines(
      `Sentry metric alert "${oneLine(rule.name, 150) || oneLine(m.title, 150)}" ${action || 'changed'}${projects ? ` in ${projects}` : ''}: ${oneLine(data.description_title, 200)}`,
      block(description, 500),
      str(rule.query) && `Query: ${oneLine(rule.aggregate, 80)} where ${oneLine(rule.query, 200)}`,
      str(data.web_url),
    ),
    key: str(m.id) ? sessionKey('hook:sentry:incident', str(m.id)) : undefined,
  };
};

const comment: Message = (data, action, p) => ({
  text: lines(
    `${actor(p)} ${action === 'created' ? 'commented' : `${action || 'changed'} a comment`} on Sentry issue ${str(data.issue_id)}${str(data.project_slug) ? ` in ${str(data.project_slug)}` : ''}`,
    action !== 'deleted' && block(data.comment),
  ),
  key: issueKey(data.issue_id),
});

const installation: Message = (data, action, p) => {
  const i = obj(data.installation);
  return {
    text: `${actor(p)} ${action === 'deleted' ? 'uninstalled' : 'installed'} the Sentry integration ${oneLine(obj(i.app).slug, 100)} in ${oneLine(obj(i.organization).slug, 100) || 'an organization'}`,
  };
};

/** A resource without a message of its own: its name and action, and a summary of its data. */
const generic =
  (resource: string): Message =>
  (data, action) => ({
    text: lines(`Sentry webhook "${oneLine(resource, 60) || 'unnamed'}"${action ? ` (${action})` : ''}`, summarize(data)),
  });

const MESSAGES: Record<string, Message> = {
  issue,
  event_alert: eventAlert,
  metric_alert: metricAlert,
  error,
  comment,
  installation,
};
