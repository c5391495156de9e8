/**
 * The `alertmanager` preset's message (docs/presets/alertmanager.md): one per notification, the group's
 * firing alerts and then its resolved ones, each by name, where, severity and summary. One session per
 * alert group (Alertmanager's `groupKey`), so the notifications of one group, resolved included, reach one
 * conversation.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { alertGroupMessage, alertGroupSession, obj, str } from '../_shared/alerts.ts';
import { lines, result, summarize } from '../_shared/message.ts';

export default function alertmanager(ctx: TransformContext<Record<string, unknown>>): TransformResult {
  const p = obj(ctx.payload);
  // a body that is not a notification (no alerts list) is still said, never refused
  if (!Array.isArray(p.alerts)) return result(ctx, lines('Alertmanager sent a body that is not a notification', summarize(p)), undefined);
  const message = alertGroupMessage(p, undefined, [str(p.externalURL)]);
  return result(ctx, message, alertGroupSession('hook:alertmanager', p.groupKey, str(p.receiver) || 'alerts'));
}
