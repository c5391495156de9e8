/**
 * The `jira` preset's messages (docs/presets/jira.md): an issue created, updated (what changed, or the
 * comment added) or deleted, a comment created, updated or deleted — the issue's key, summary, type,
 * priority, status, assignee and link — and a summary for other events. One session per issue key.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const person = (u: unknown): string => str(obj(u).displayName) || str(obj(u).name) || 'someone';

/** Text as Jira sends it: a string, or an Atlassian document (its text nodes, a paragraph a line). */
function text(v: unknown, depth = 0): string {
  if (typeof v === 'string') return v;
  const node = obj(v);
  if (depth > 20 || !Array.isArray(node.content)) return str(node.text);
  const inner = node.content.map((c) => text(c, depth + 1)).join(node.type === 'paragraph' ? '' : '\n');
  return inner;
}

/** The issue's page: `<site>/browse/<key>`, from the address of its REST resource. */
function page(issue: Obj): string {
  const m = /^(https?:\/\/[^/]+)\//.exec(str(issue.self));
  return m && str(issue.key) ? `${m[1]}/browse/${str(issue.key)}` : '';
}

/** `Bug, High, In Progress, assigned to Emma Richards`. */
function facts(f: Obj): string {
  return [
    str(obj(f.issuetype).name),
    str(obj(f.priority).name),
    str(obj(f.status).name),
    f.assignee ? `assigned to ${person(f.assignee)}` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** A changelog as `status: To Do → In Progress` lines (at most ten). */
function changes(changelog: unknown): string[] {
  const items = (Array.isArray(obj(changelog).items) ? (obj(changelog).items as unknown[]) : []).map(obj);
  return items
    .slice(0, 10)
    .map((i) => `${oneLine(i.field, 60)}: ${oneLine(i.fromString, 120) || '(none)'} → ${oneLine(i.toString, 120) || '(none)'}`);
}

export default function jira(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const event = ctx.event || str(p.webhookEvent);
  const issue = obj(p.issue);
  const f = obj(issue.fields);
  const key = str(issue.key);
  const session = key ? sessionKey('hook:jira', key) : undefined;
  const head = `${key}${str(f.summary) ? `: ${oneLine(f.summary)}` : ''}`;
  const comment = obj(p.comment);
  const commented = event.startsWith('comment_') || str(p.issue_event_type_name) === 'issue_commented';
  if (commented && Object.keys(comment).length) {
    const verb =
      event === 'comment_updated' ? 'edited a comment on' : event === 'comment_deleted' ? 'deleted a comment on' : 'commented on';
    return result(
      ctx,
      lines(
        `${person(comment.updateAuthor ?? comment.author ?? p.user)} ${verb} Jira issue ${head || 'an issue'}`,
        event !== 'comment_deleted' && block(text(comment.body)),
        page(issue),
      ),
      session,
    );
  }
  if (event.startsWith('jira:issue_')) {
    const action = event.slice('jira:issue_'.length);
    const shown = action === 'created';
    return result(
      ctx,
      lines(
        `Jira issue ${key} ${action} by ${person(p.user)}${str(f.summary) ? `: ${oneLine(f.summary)}` : ''}`,
        facts(f),
        shown && block(text(f.description)),
        shown && Array.isArray(f.labels) && f.labels.length > 0 && `Labels: ${f.labels.map(str).join(', ')}`,
        ...changes(p.changelog),
        page(issue),
      ),
      session,
    );
  }
  const { webhookEvent: _e, timestamp: _t, matchedWebhookIds: _m, ...rest } = p;
  return result(ctx, lines(`Jira event "${oneLine(event, 80) || 'unnamed'}"`, summarize(rest)), session);
}
