/**
 * GitHub issues and pull requests → agent runs and wakes.
 *
 * Mapping (the webhook sends every event it is subscribed to to /hooks/github):
 *
 *   { id: 'github', match: { path: 'github' }, name: 'GitHub',
 *     verify: { type: 'github', secret: '${GITHUB_WEBHOOK_SECRET}' },
 *     transform: { module: 'github.ts' } }
 *
 * - an issue or pull request opened (or reopened, or marked ready for review):
 *   an agent run, one session per issue/PR so later events continue it;
 * - a watched label added: an agent run in the same session;
 * - closed or merged: a wake for the next heartbeat (worth knowing, not urgent);
 * - anything else (pushes to a PR, edits, assignments, `ping`, drafts): null, 204.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';

/** Labels that start an agent run when added. */
const WATCHED_LABELS = new Set(['bug', 'security', 'urgent']);
/** Issue and PR bodies are cut to this many characters. */
const MAX_BODY = 2000;

interface User {
  login: string;
}
interface Item {
  number: number;
  title: string;
  body: string | null;
  html_url: string;
  user: User;
  labels?: { name: string }[];
  draft?: boolean;
  merged?: boolean;
  merged_by?: User | null;
  head?: { ref: string };
  base?: { ref: string };
  additions?: number;
  deletions?: number;
  changed_files?: number;
}
export interface GitHubEvent {
  action: string;
  issue?: Item;
  pull_request?: Item;
  label?: { name: string };
  repository: { full_name: string };
  sender: User;
}

export default function github(ctx: TransformContext<GitHubEvent>): TransformResult {
  const event = ctx.headers['x-github-event'];
  const p = ctx.payload;
  const item = event === 'issues' ? p.issue : event === 'pull_request' ? p.pull_request : undefined;
  if (!item) return null;

  const isPr = event === 'pull_request';
  const what = `${isPr ? 'Pull request' : 'Issue'} #${item.number} in ${p.repository.full_name}`;
  const sessionKey = `hook:github:${p.repository.full_name}:${item.number}`;

  switch (p.action) {
    case 'opened':
    case 'reopened':
    case 'ready_for_review':
      if (item.draft) return null;
      return {
        sessionKey,
        message: [`${what} ${p.action.replace(/_/g, ' ')} by ${p.sender.login}: ${item.title}`, ...details(item, isPr)].join('\n'),
      };
    case 'labeled':
      if (!p.label || !WATCHED_LABELS.has(p.label.name)) return null;
      return { sessionKey, message: `${what} was labeled "${p.label.name}" by ${p.sender.login}: ${item.title}\n${item.html_url}` };
    case 'closed': {
      const how = item.merged ? `merged by ${item.merged_by?.login ?? p.sender.login}` : `closed by ${p.sender.login}`;
      return { kind: 'wake', mode: 'next-heartbeat', text: `${what} ${how}: ${item.title}\n${item.html_url}` };
    }
    default:
      return null;
  }
}

function details(item: Item, isPr: boolean): string[] {
  const lines: string[] = [];
  if (isPr && item.head && item.base)
    lines.push(`${item.head.ref} → ${item.base.ref}, ${item.changed_files ?? '?'} files (+${item.additions ?? 0} −${item.deletions ?? 0})`);
  const labels = item.labels?.map((l) => l.name) ?? [];
  if (labels.length) lines.push(`Labels: ${labels.join(', ')}`);
  lines.push(item.html_url);
  const body = item.body?.trim();
  if (body) lines.push('', body.length > MAX_BODY ? `${body.slice(0, MAX_BODY)}…` : body);
  return lines;
}
