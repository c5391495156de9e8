/**
 * The `pagerduty` preset's messages (docs/presets/pagerduty.md): a v3 webhook event about an incident —
 * triggered, acknowledged, escalated, resolved, a note, a status update, a responder — with its title,
 * service, urgency, priority, who is on it and its link; a service event; a summary for the rest. One
 * session per incident. PagerDuty's test event (`pagey.ping`) runs nothing.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const names = (v: unknown): string =>
  (Array.isArray(v) ? v : [])
    .map((r) => oneLine(obj(r).summary, 60))
    .filter(Boolean)
    .join(', ');

export default function pagerduty(ctx: TransformContext<Obj>): TransformResult {
  const e = obj(obj(ctx.payload).event);
  const type = str(e.event_type);
  if (type === 'pagey.ping') return null;
  const data = obj(e.data);
  const agent = oneLine(obj(e.agent).summary, 80);
  const by = agent ? `, by ${agent}` : '';
  if (str(e.resource_type) === 'incident' || type.startsWith('incident.')) {
    const [text, id] = incident(type, data, by);
    return result(ctx, text, id ? sessionKey('hook:pagerduty:incident', id) : undefined);
  }
  if (type.startsWith('service.'))
    return result(
      ctx,
      lines(`PagerDuty service "${oneLine(data.summary ?? data.name, 120)}" ${type.slice('service.'.length)}${by}`, str(data.html_url)),
      undefined,
    );
  return result(ctx, lines(`PagerDuty event "${oneLine(type, 80) || 'unnamed'}"${by}`, summarize(data)), undefined);
}

/** What happened to the incident, as its headline verb. */
function verb(type: string): string {
  const what = type.replace(/^incident\./, '');
  const said: Record<string, string> = {
    'responder.added': 'responder requested',
    'responder.replied': 'responder replied',
    status_update_published: 'status update published',
    annotated: 'note added',
    priority_updated: 'priority changed',
  };
  return said[what] ?? what.replace(/[._]/g, ' ');
}

/** An incident event's message and the incident's id; note, status update and responder events name the incident by reference. */
function incident(type: string, data: Obj, by: string): [string, string] {
  const isIncident = str(data.type) === 'incident' || !data.incident;
  const inc = isIncident ? data : obj(data.incident);
  const id = str(inc.id);
  const title = oneLine(inc.title ?? inc.summary, 200);
  const head = `PagerDuty incident${str(inc.number) ? ` #${str(inc.number)}` : ''} ${verb(type)}${by}: ${title}`;
  if (!isIncident) {
    const said =
      str(data.type) === 'incident_responder'
        ? `${oneLine(obj(data.user).summary, 80)} (${str(data.state) || 'asked'}): ${oneLine(data.message, 500)}`
        : block(data.content ?? data.message, 1000);
    return [lines(head, said, str(inc.html_url)), id];
  }
  const facts = [
    str(inc.status) && `status ${str(inc.status)}`,
    str(inc.urgency) && `urgency ${str(inc.urgency)}`,
    str(obj(inc.priority).summary) && `priority ${oneLine(obj(inc.priority).summary, 20)}`,
  ].filter(Boolean);
  const service = oneLine(obj(inc.service).summary, 100);
  const assignees = names(inc.assignees);
  return [
    lines(
      head,
      `${service ? `Service ${service}` : 'PagerDuty'}${facts.length ? `: ${facts.join(', ')}` : ''}`,
      assignees && `Assigned to ${assignees}${names(inc.teams) ? ` (team ${names(inc.teams)})` : ''}`,
      str(inc.resolve_reason) && `Resolved because ${oneLine(inc.resolve_reason, 300)}`,
      str(obj(inc.conference_bridge).conference_url) && `Conference: ${oneLine(obj(inc.conference_bridge).conference_url, 300)}`,
      str(inc.html_url),
    ),
    id,
  ];
}
