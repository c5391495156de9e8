/**
 * Grafana alerting → one wake per firing alert; resolved alerts are dropped.
 *
 * Mapping (a Grafana "Webhook" contact point with URL …/hooks/grafana and
 * "Authorization header" credentials set to the hook token):
 *
 *   { id: 'grafana', match: { path: 'grafana' }, label: 'Grafana', transform: { module: 'grafana.ts' } }
 *
 * Each firing alert becomes a wake now, with the values that fired it and a
 * link to its panel. Resolved alerts return nothing, so a notification with
 * only resolved alerts answers 204.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';

interface GrafanaAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  valueString?: string;
  values?: Record<string, number> | null;
  dashboardURL?: string;
  panelURL?: string;
  generatorURL?: string;
}
export interface GrafanaNotification {
  status: 'firing' | 'resolved';
  title?: string;
  alerts: GrafanaAlert[];
}

export default function grafana(ctx: TransformContext<GrafanaNotification>): TransformResult {
  const firing = (ctx.payload.alerts ?? []).filter((a) => a.status === 'firing');
  if (!firing.length) return null;
  return firing.map((a) => ({
    kind: 'wake' as const,
    mode: 'now' as const,
    text: [
      `Grafana alert firing: ${a.labels.alertname ?? 'alert'}${a.labels.grafana_folder ? ` (${a.labels.grafana_folder})` : ''}`,
      a.annotations.summary ?? '',
      a.annotations.description ?? '',
      values(a) ? `Values: ${values(a)}` : '',
      `Since ${a.startsAt}`,
      a.panelURL || a.dashboardURL || a.generatorURL || '',
    ]
      .filter(Boolean)
      .join('\n'),
  }));
}

/** `{B: 912.4, C: 1}` → `B=912.4, C=1`. */
const values = (a: GrafanaAlert) =>
  a.values
    ? Object.entries(a.values)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')
    : '';
