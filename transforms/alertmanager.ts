/**
 * Prometheus Alertmanager → one action per firing alert (fan-out).
 *
 * Mapping (an Alertmanager receiver with `webhook_configs: [{ url: …/hooks/alertmanager,
 * http_config: { authorization: { credentials: <hook token> } } }]`):
 *
 *   { id: 'alertmanager', match: { path: 'alertmanager', payload: { version: '4' } },
 *     name: 'Alertmanager', label: 'Alertmanager', transform: { module: 'alertmanager.ts' } }
 *
 * A notification carries a group of alerts. Each firing alert becomes
 * - an agent run when its severity is one of PAGE_SEVERITIES (one session per
 *   alert fingerprint, so a repeat notification continues the investigation),
 * - else a wake now.
 * Alerts that resolved become one wake for the next heartbeat. A group with
 * nothing in it returns null (204).
 */
import type { PartialAction, TransformContext, TransformResult } from 'hook-intake/transform';

const PAGE_SEVERITIES = new Set(['critical', 'page']);

interface Alert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
  fingerprint: string;
}
export interface AlertmanagerNotification {
  version: string;
  status: 'firing' | 'resolved';
  receiver: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  externalURL: string;
  alerts: Alert[];
}

export default function alertmanager(ctx: TransformContext<AlertmanagerNotification>): TransformResult {
  const alerts = ctx.payload.alerts ?? [];
  const actions: PartialAction[] = [];

  for (const a of alerts.filter((x) => x.status === 'firing')) {
    const severity = a.labels.severity ?? 'none';
    const { summary, description } = a.annotations;
    const lines = [
      `FIRING ${a.labels.alertname ?? 'alert'} (${severity})${where(a)}${summary || description ? `: ${summary ?? description}` : ''}`,
      summary && description ? description : '',
      `Since ${a.startsAt}`,
      a.annotations.runbook_url ? `Runbook: ${a.annotations.runbook_url}` : '',
      a.generatorURL ?? '',
    ].filter(Boolean);
    if (PAGE_SEVERITIES.has(severity))
      actions.push({ kind: 'agent', sessionKey: `hook:alert:${a.fingerprint}`, message: lines.join('\n') });
    else actions.push({ kind: 'wake', mode: 'now', text: lines.join('\n') });
  }

  const resolved = alerts.filter((x) => x.status === 'resolved');
  if (resolved.length) {
    const list = resolved.map((a) => `- ${a.labels.alertname ?? 'alert'}${where(a)} (resolved ${a.endsAt})`);
    actions.push({ kind: 'wake', mode: 'next-heartbeat', text: [`Resolved (${resolved.length}):`, ...list].join('\n') });
  }
  return actions.length ? actions : null;
}

const where = (a: Alert) => (a.labels.instance ? ` on ${a.labels.instance}` : a.labels.job ? ` in ${a.labels.job}` : '');
