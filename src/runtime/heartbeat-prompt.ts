/**
 * What a heartbeat tells the main agent: its instruction, a count of the pending events it does not
 * show, and the events it shows, oldest first. And `heartbeat.every`'s duration syntax.
 */
import type { PendingBacklog, SystemEvent } from '../store/types.ts';

export const DEFAULT_HEARTBEAT_PROMPT =
  'Heartbeat. The system events below are pending in the main session, oldest first. ' +
  'Act on what needs attention and report it briefly. If nothing needs attention, reply exactly HEARTBEAT_OK.';

export function parseDuration(s: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(s);
  if (!m) throw new Error(`invalid duration "${s}"`);
  const n = Number(m[1]);
  const unit = m[2] ?? 'ms';
  return n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit]!;
}

const iso = (t: number) => new Date(t).toISOString();

/** The instruction, the older events' counts when there are any, then the events shown, oldest first. */
export function heartbeatPrompt(events: readonly SystemEvent[], instructions: string, older?: PendingBacklog['older']): string {
  const lines = events.map((e) => `[${iso(e.createdAt)}] ${e.text}`);
  return `${instructions}\n\n${older?.count ? `${olderLine(older, events.length)}\n\n` : ''}${lines.join('\n\n')}`;
}

/** What a heartbeat says of the pending events it does not show: how many, when, and how many from each source, most first. */
export function olderLine(older: PendingBacklog['older'], shown: number): string {
  const sources = Object.entries(older.bySource).sort(([a, m], [b, n]) => n - m || (a < b ? -1 : 1));
  const when = older.firstAt !== null && older.lastAt !== null ? ` (${iso(older.firstAt)} to ${iso(older.lastAt)})` : '';
  return (
    `[Backlog] ${older.count} older pending events${when} are not shown, only counted by source: ` +
    `${sources.map(([s, n]) => `${s} ${n}`).join(', ')}. The newest ${shown} follow.`
  );
}
