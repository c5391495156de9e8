/**
 * Alertmanager's notification format, which Grafana's alerting webhook shares (docs/presets/alertmanager.md,
 * docs/presets/grafana.md): a group of alerts as a short message — how many fire and resolved, each alert by
 * its name, where, severity, summary and links — and a session key per alert group.
 */
import { hash } from 'node:crypto';
import { lines, oneLine, sessionKey } from './message.ts';

type Obj = Record<string, unknown>;
export const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
export const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** What one sender adds to an alert's lines (Grafana: values, dashboard, silence and image links). */
export type AlertExtra = (alert: Obj) => (string | false | undefined)[];

/** Labels said in other words: the alert's name, where it fires, how bad it is. */
const SHOWN_APART = new Set(['alertname', 'instance', 'severity']);
const MAX_FIRING = 20;
const MAX_RESOLVED = 10;
const MAX_LABELS = 6;

/** A time as `2026-11-29T03:06:48Z`: the fraction of a second dropped. */
const time = (v: unknown): string => oneLine(str(v).replace(/\.\d+(?=Z|[+-]\d\d:\d\d$)/, ''), 40);

/** `{a: '1', b: '2'}` as `a=1, b=2`, without the names in `skip`. */
function labelText(labels: Obj, skip: ReadonlySet<string> = new Set()): string {
  const pairs = Object.entries(labels)
    .filter(([k, v]) => !skip.has(k) && str(v) !== '')
    .map(([k, v]) => `${k}=${oneLine(v, 60)}`);
  const shown = pairs.slice(0, MAX_LABELS).join(', ');
  return pairs.length > MAX_LABELS ? `${shown}, …` : shown;
}

/** One alert: a headline, then its description, runbook and links, indented under it. */
function alertLines(alert: Obj, skip: ReadonlySet<string>, extra: AlertExtra | undefined): string[] {
  const labels = obj(alert.labels);
  const notes = obj(alert.annotations);
  const name = oneLine(labels.alertname, 100) || 'alert';
  const where = str(labels.instance) ? ` on ${oneLine(labels.instance, 100)}` : str(labels.job) ? ` in ${oneLine(labels.job, 100)}` : '';
  const others = labelText(labels, new Set([...SHOWN_APART, ...skip]));
  const severity = str(labels.severity) ? ` (${oneLine(labels.severity, 30)})` : '';
  const firing = str(alert.status) !== 'resolved';
  const when = firing
    ? str(alert.startsAt)
      ? `, since ${time(alert.startsAt)}`
      : ''
    : str(alert.endsAt)
      ? `, ended ${time(alert.endsAt)}`
      : '';
  const summary = oneLine(notes.summary ?? notes.message ?? notes.title, 300);
  const description = oneLine(notes.description ?? notes.info, 500);
  const runbook = oneLine(notes.runbook_url ?? notes.runbook, 300);
  const source = oneLine(alert.generatorURL, 500);
  const more = firing
    ? [
        description && description !== summary && description,
        runbook && `Runbook: ${runbook}`,
        source && `Source: ${source}`,
        ...(extra?.(alert) ?? []),
      ]
    : [];
  return [
    `- ${name}${where}${others ? ` [${others}]` : ''}${severity}${when}${summary ? `: ${summary}` : ''}`,
    ...more.filter((l): l is string => typeof l === 'string' && l !== '').map((l) => `  ${l}`),
  ];
}

/** A list of alerts under its heading, at most `max` of them, the rest counted. */
function section(title: string, alerts: Obj[], max: number, skip: ReadonlySet<string>, extra?: AlertExtra): string[] {
  if (!alerts.length) return [];
  const out = [`${title}:`, ...alerts.slice(0, max).flatMap((a) => alertLines(a, skip, extra))];
  if (alerts.length > max) out.push(`(${alerts.length - max} more not listed)`);
  return out;
}

/**
 * A notification as the agent reads it: its status and counts, the group it is about, the firing alerts
 * and then the resolved ones, and `links` (the sender's own page) last.
 */
export function alertGroupMessage(p: Obj, extra: AlertExtra | undefined, links: (string | false)[]): string {
  const alerts = (Array.isArray(p.alerts) ? p.alerts : []).map(obj);
  const firing = alerts.filter((a) => str(a.status) !== 'resolved');
  const resolved = alerts.filter((a) => str(a.status) === 'resolved');
  const grouped = labelText(obj(p.groupLabels)) ? obj(p.groupLabels) : obj(p.commonLabels);
  const group = labelText(grouped);
  const counts =
    str(p.status) === 'resolved' || !firing.length
      ? `${resolved.length} alert${resolved.length === 1 ? '' : 's'} resolved`
      : `${firing.length} alert${firing.length === 1 ? '' : 's'} firing${resolved.length ? `, ${resolved.length} resolved` : ''}`;
  const truncated = Number(p.truncatedAlerts) > 0 ? ` (${Number(p.truncatedAlerts)} more left out by the sender)` : '';
  const receiver = str(p.receiver) ? ` (receiver ${oneLine(p.receiver, 80)})` : '';
  // labels every alert of the group shares are said once, in the headline or the common line
  const common = obj(p.commonLabels);
  const skip = new Set(alerts.length > 1 ? Object.keys(common) : Object.keys(obj(p.groupLabels)));
  const commonText = alerts.length > 1 ? labelText(common, new Set([...Object.keys(grouped), 'alertname'])) : '';
  const summary = oneLine(obj(p.commonAnnotations).summary, 300);
  return lines(
    `${str(p.status) === 'resolved' ? 'Resolved' : 'Firing'}: ${counts}${truncated}${group ? ` in group ${group}` : ''}${receiver}`,
    commonText && `Common labels: ${commonText}`,
    alerts.length > 1 && summary && `Summary: ${summary}`,
    ...section('Firing', firing, MAX_FIRING, skip, extra),
    ...section('Resolved', resolved, MAX_RESOLVED, skip),
    ...links,
  );
}

/**
 * The session of an alert group: its group key made readable (`{}:{alertname="DiskFull"}` →
 * `alertname_DiskFull`), with a short digest of the whole key when it is long, so that two long keys
 * sharing a beginning stay apart. Without a group key, `fallback` names the session.
 */
export function alertGroupSession(prefix: string, groupKey: unknown, fallback: string): string {
  const key = str(groupKey);
  const readable = key
    .replace(/[{}"]/g, '')
    .replace(/=/g, '_')
    .replace(/^[:/]+|[:/]+$/g, '');
  if (!readable) return sessionKey(prefix, fallback);
  if (readable.length <= 120) return sessionKey(prefix, readable);
  return sessionKey(prefix, readable.slice(0, 100), hash('sha256', key, 'hex').slice(0, 12));
}
