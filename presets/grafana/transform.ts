/**
 * The `grafana` preset's message (docs/presets/grafana.md): one per notification of a Grafana alerting
 * contact point, in Alertmanager's shape (presets/_shared/alerts.ts) with what Grafana adds per alert: the
 * values that fired it, the dashboard panel, the silence link and the screenshot. One session per alert
 * group (Grafana's `groupKey`).
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { type AlertExtra, alertGroupMessage, alertGroupSession, obj, str } from '../_shared/alerts.ts';
import { lines, oneLine, result, summarize } from '../_shared/message.ts';

/** `{B: 44.23943737541908, C: 1}` as `B=44.2394, C=1`; else Grafana's own value string. */
function values(alert: Record<string, unknown>): string {
  const v = obj(alert.values);
  const pairs = Object.entries(v).map(([k, n]) => `${k}=${typeof n === 'number' ? Number(n.toPrecision(6)) : oneLine(n, 40)}`);
  return pairs.length ? pairs.slice(0, 8).join(', ') : oneLine(alert.valueString, 300);
}

const extra: AlertExtra = (a) => [
  values(a) && `Values: ${values(a)}`,
  (str(a.panelURL) || str(a.dashboardURL)) && `Dashboard: ${oneLine(str(a.panelURL) || str(a.dashboardURL), 500)}`,
  str(a.silenceURL) && `Silence: ${oneLine(a.silenceURL, 500)}`,
  str(a.imageURL) && `Image: ${oneLine(a.imageURL, 500)}`,
];

export default function grafana(ctx: TransformContext<Record<string, unknown>>): TransformResult {
  const p = obj(ctx.payload);
  // a body that is not a notification (no alerts list) is still said, never refused
  if (!Array.isArray(p.alerts)) return result(ctx, lines('Grafana sent a body that is not an alert notification', summarize(p)), undefined);
  const message = alertGroupMessage(p, extra, [str(p.externalURL)]);
  return result(ctx, message, alertGroupSession('hook:grafana', p.groupKey, str(p.receiver) || 'alerts'));
}
