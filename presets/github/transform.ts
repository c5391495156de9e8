/**
 * The `github` preset's messages (docs/presets/github.md): one per common event type — what happened,
 * who did it, where, the link — and a summary for the others. One session per issue or pull request
 * (their numbers share one sequence in a repository), per branch for pushes and CI, per release, per
 * alert.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const login = (u: unknown): string => str(obj(u).login) || str(obj(u).name) || 'someone';
const words = (s: string): string => s.replace(/_/g, ' ');

interface Said {
  text: string;
  key?: string;
}

export default function github(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const event = ctx.event ?? '';
  const repo = str(obj(p.repository).full_name) || str(obj(p.organization).login) || 'GitHub';
  const said = (MESSAGES[event] ?? generic)(p, repo, event);
  return result(ctx, said.text, said.key ?? sessionKey('hook:github', repo));
}

type Message = (p: Obj, repo: string, event: string) => Said;

/** An issue or pull request as its headline and its details. */
function item(kind: string, it: Obj, repo: string): { head: string; url: string; n: string } {
  const n = str(it.number);
  return { head: `${kind} #${n} in ${repo}`, url: str(it.html_url), n };
}

const issues: Message = (p, repo) => {
  const it = obj(p.issue);
  const { head, url, n } = item('Issue', it, repo);
  const action = str(p.action);
  const labels = (Array.isArray(it.labels) ? it.labels : []).map((l) => str(obj(l).name)).filter(Boolean);
  const detail =
    action === 'labeled' || action === 'unlabeled'
      ? `label "${oneLine(obj(p.label).name, 80)}"`
      : action === 'assigned' || action === 'unassigned'
        ? `assignee ${login(p.assignee)}`
        : action === 'milestoned'
          ? `milestone "${oneLine(obj(p.milestone).title, 80)}"`
          : '';
  const opened = action === 'opened' || action === 'reopened' || action === 'edited';
  return {
    text: lines(
      `${head} ${words(action)}${detail ? ` (${detail})` : ''} by ${login(p.sender)}: ${oneLine(it.title)}`,
      opened && block(it.body),
      opened && labels.length > 0 && `Labels: ${labels.join(', ')}`,
      url,
    ),
    key: sessionKey('hook:github', repo, n),
  };
};

const pullRequest: Message = (p, repo) => {
  const pr = obj(p.pull_request);
  const { head, url, n } = item('Pull request', pr, repo);
  let action = str(p.action);
  if (action === 'closed' && pr.merged === true) action = 'merged';
  const by = action === 'merged' ? login(pr.merged_by ?? p.sender) : login(p.sender);
  const shown = action === 'opened' || action === 'reopened' || action === 'ready_for_review' || action === 'edited';
  const branches = `${str(obj(pr.head).ref)} → ${str(obj(pr.base).ref)}`;
  const files = typeof pr.changed_files === 'number' ? pr.changed_files : undefined;
  const size = files === undefined ? '' : `, ${files} file${files === 1 ? '' : 's'} (+${str(pr.additions)} −${str(pr.deletions)})`;
  return {
    text: lines(
      `${head} ${words(action)} by ${by}${pr.draft === true ? ' (draft)' : ''}: ${oneLine(pr.title)}`,
      shown && `${branches}${size}`,
      shown && block(pr.body),
      action === 'review_requested' && `Review requested from ${login(p.requested_reviewer ?? p.requested_team)}`,
      url,
    ),
    key: sessionKey('hook:github', repo, n),
  };
};

const issueComment: Message = (p, repo) => {
  const it = obj(p.issue);
  const kind = it.pull_request ? 'pull request' : 'issue';
  const c = obj(p.comment);
  const action = str(p.action);
  return {
    text: lines(
      `${login(c.user ?? p.sender)} ${action === 'created' ? 'commented' : `${words(action)} a comment`} on ${kind} #${str(it.number)} in ${repo}: ${oneLine(it.title)}`,
      action !== 'deleted' && block(c.body),
      str(c.html_url) || str(it.html_url),
    ),
    key: sessionKey('hook:github', repo, str(it.number)),
  };
};

const review: Message = (p, repo) => {
  const pr = obj(p.pull_request);
  const r = obj(p.review);
  const state = str(r.state).toLowerCase();
  const verb = state === 'approved' ? 'approved' : state === 'changes_requested' ? 'requested changes on' : 'reviewed';
  return {
    text: lines(
      `${login(r.user ?? p.sender)} ${str(p.action) === 'dismissed' ? 'had a review dismissed on' : verb} pull request #${str(pr.number)} in ${repo}: ${oneLine(pr.title)}`,
      block(r.body),
      str(r.html_url) || str(pr.html_url),
    ),
    key: sessionKey('hook:github', repo, str(pr.number)),
  };
};

const reviewComment: Message = (p, repo) => {
  const pr = obj(p.pull_request);
  const c = obj(p.comment);
  const where = str(c.path) ? ` (${str(c.path)}${typeof c.line === 'number' ? `:${c.line}` : ''})` : '';
  return {
    text: lines(
      `${login(c.user ?? p.sender)} ${str(p.action) === 'created' ? 'commented' : `${words(str(p.action))} a comment`} on pull request #${str(pr.number)} in ${repo}${where}: ${oneLine(pr.title)}`,
      block(c.body),
      str(c.html_url) || str(pr.html_url),
    ),
    key: sessionKey('hook:github', repo, str(pr.number)),
  };
};

const reviewThread: Message = (p, repo) => {
  const pr = obj(p.pull_request);
  return {
    text: lines(
      `${login(p.sender)} ${words(str(p.action))} a review thread on pull request #${str(pr.number)} in ${repo}: ${oneLine(pr.title)}`,
      str(pr.html_url),
    ),
    key: sessionKey('hook:github', repo, str(pr.number)),
  };
};

const MAX_COMMITS = 10;

const push: Message = (p, repo) => {
  const ref = str(p.ref);
  const name = ref.replace(/^refs\/(heads|tags)\//, '');
  const kind = ref.startsWith('refs/tags/') ? 'tag' : 'branch';
  const who = login(p.pusher ?? p.sender);
  const key = sessionKey('hook:github', repo, 'ref', name);
  if (p.deleted === true) return { text: lines(`${who} deleted ${kind} ${name} in ${repo}`), key };
  const commits = Array.isArray(p.commits) ? p.commits.map(obj) : [];
  const shown = commits
    .slice(-MAX_COMMITS)
    .map((c) => `- ${str(c.id).slice(0, 7)} ${oneLine(str(c.message).split('\n')[0], 120)} (${login(c.author)})`);
  const head =
    commits.length === 0
      ? `${who} ${p.created === true ? 'created' : 'pushed to'} ${kind} ${name} in ${repo}`
      : `${who} pushed ${commits.length} commit${commits.length === 1 ? '' : 's'} to ${kind} ${name} in ${repo}${p.forced === true ? ' (forced)' : ''}`;
  return {
    text: lines(
      head,
      ...shown,
      commits.length > MAX_COMMITS && `(${commits.length - MAX_COMMITS} earlier commits not listed)`,
      str(p.compare),
    ),
    key,
  };
};

const release: Message = (p, repo) => {
  const r = obj(p.release);
  const tag = str(r.tag_name);
  const shown = str(p.action) === 'published' || str(p.action) === 'created' || str(p.action) === 'released';
  return {
    text: lines(
      `Release ${tag}${str(r.name) && str(r.name) !== tag ? ` (${oneLine(r.name, 80)})` : ''} ${words(str(p.action))} in ${repo} by ${login(r.author ?? p.sender)}${r.prerelease === true ? ' (pre-release)' : ''}`,
      shown && block(r.body),
      str(r.html_url),
    ),
    key: sessionKey('hook:github', repo, 'release', tag),
  };
};

/** A CI result: what ran, where, how it ended, and the link. */
function ci(kind: string, name: string, branch: string, status: string, url: string, repo: string, extra = ''): Said {
  return {
    text: lines(`${kind} "${oneLine(name, 100)}" ${status}${branch ? ` on ${branch}` : ''} in ${repo}${extra}`, url),
    key: sessionKey('hook:github', repo, 'ci', branch || 'default'),
  };
}
const outcome = (o: Obj) => (str(o.conclusion) ? words(str(o.conclusion)) : words(str(o.status) || str(o.action)));

const workflowRun: Message = (p, repo) => {
  const r = obj(p.workflow_run);
  return ci(
    'Workflow',
    str(r.name) || str(obj(p.workflow).name),
    str(r.head_branch),
    outcome(r),
    str(r.html_url),
    repo,
    ` (run #${str(r.run_number)}, ${login(r.actor ?? p.sender)})`,
  );
};
const workflowJob: Message = (p, repo) => {
  const j = obj(p.workflow_job);
  return ci(
    'Job',
    str(j.name),
    str(j.head_branch),
    outcome(j),
    str(j.html_url),
    repo,
    str(j.workflow_name) ? ` of workflow "${oneLine(j.workflow_name, 80)}"` : '',
  );
};
const checkRun: Message = (p, repo) => {
  const c = obj(p.check_run);
  const suite = obj(c.check_suite);
  return ci('Check', str(c.name), str(suite.head_branch), outcome(c), str(c.html_url) || str(c.details_url), repo);
};
const checkSuite: Message = (p, repo) => {
  const s = obj(p.check_suite);
  return ci(
    'Check suite',
    str(obj(s.app).name) || 'checks',
    str(s.head_branch),
    outcome(s),
    '',
    repo,
    ` for ${str(s.head_sha).slice(0, 7)}`,
  );
};
const status: Message = (p, repo) => {
  const branch = (Array.isArray(p.branches) ? p.branches.map(obj) : []).map((b) => str(b.name))[0] ?? '';
  return ci(
    'Status',
    str(p.context),
    branch,
    str(p.state),
    str(p.target_url),
    repo,
    `${oneLine(p.description) ? `: ${oneLine(p.description)}` : ''}`,
  );
};

const deploymentStatus: Message = (p, repo) => {
  const s = obj(p.deployment_status);
  const d = obj(p.deployment);
  const env = str(s.environment) || str(d.environment);
  return {
    text: lines(
      `Deployment to ${env || 'an environment'} ${words(str(s.state))} in ${repo} (${str(d.ref)} ${str(d.sha).slice(0, 7)}, by ${login(s.creator ?? p.sender)})`,
      oneLine(s.description),
      str(s.target_url) || str(s.log_url) || str(s.environment_url),
    ),
    key: sessionKey('hook:github', repo, 'deploy', env),
  };
};

const refChange: Message = (p, repo, event) => ({
  text: `${login(p.sender)} ${event === 'create' ? 'created' : 'deleted'} ${str(p.ref_type)} ${oneLine(p.ref, 120)} in ${repo}`,
  key: sessionKey('hook:github', repo, 'ref', str(p.ref)),
});

const discussion: Message = (p, repo, event) => {
  const d = obj(p.discussion);
  const c = obj(p.comment);
  const head =
    event === 'discussion_comment'
      ? `${login(c.user ?? p.sender)} ${str(p.action) === 'created' ? 'commented' : `${words(str(p.action))} a comment`} on discussion #${str(d.number)} in ${repo}: ${oneLine(d.title)}`
      : `Discussion #${str(d.number)} in ${repo} ${words(str(p.action))} by ${login(p.sender)}: ${oneLine(d.title)}`;
  const body = event === 'discussion_comment' ? c.body : str(p.action) === 'created' ? d.body : '';
  return {
    text: lines(head, block(body), str(c.html_url) || str(d.html_url)),
    key: sessionKey('hook:github', repo, 'discussion', str(d.number)),
  };
};

/** A security alert: which one, how severe, what it is about. */
const alert: Message = (p, repo, event) => {
  const a = obj(p.alert);
  const kind = words(event.replace(/_alert$/, ''));
  const rule = obj(a.rule);
  const advisory = obj(a.security_advisory);
  const pkg = str(obj(obj(a.dependency).package).name) || str(obj(a.affected_package_name));
  const severity = str(advisory.severity) || str(rule.security_severity_level) || str(rule.severity) || str(a.severity);
  const about =
    oneLine(advisory.summary) || oneLine(rule.description) || oneLine(a.secret_type_display_name) || oneLine(a.affected_package_name);
  return {
    text: lines(
      `${kind[0]!.toUpperCase()}${kind.slice(1)} alert #${str(a.number)} ${words(str(p.action))} in ${repo}${severity ? ` (${severity})` : ''}${pkg ? ` for ${pkg}` : ''}`,
      about,
      str(a.html_url),
    ),
    key: sessionKey('hook:github', repo, 'alert', event, str(a.number)),
  };
};

const advisory: Message = (p, repo) => {
  const a = obj(p.security_advisory);
  return {
    text: lines(
      `Security advisory ${str(a.ghsa_id)} ${words(str(p.action))} (${str(a.severity)}): ${oneLine(a.summary)}`,
      str(a.html_url) || str(a.permalink),
    ),
    key: sessionKey('hook:github', repo, 'advisory', str(a.ghsa_id)),
  };
};

const star: Message = (p, repo, event) => {
  const count = obj(p.repository).stargazers_count;
  const verb = event === 'fork' ? 'forked' : event === 'watch' ? 'started watching' : str(p.action) === 'deleted' ? 'unstarred' : 'starred';
  return { text: `${login(p.sender)} ${verb} ${repo}${typeof count === 'number' ? ` (${count} stars)` : ''}` };
};

/** An event without a message of its own: its name, action, where and who, and a summary of its fields. */
function generic(p: Obj, repo: string, event: string): Said {
  const action = str(p.action);
  const { action: _a, repository: _r, sender: _s, organization: _o, installation: _i, enterprise: _e, ...rest } = p;
  return {
    text: lines(
      `GitHub event "${oneLine(event, 60) || 'unnamed'}"${action ? ` (${words(action)})` : ''} in ${repo} by ${login(p.sender)}`,
      summarize(rest),
    ),
  };
}

const MESSAGES: Record<string, Message> = {
  issues,
  issue_comment: issueComment,
  pull_request: pullRequest,
  pull_request_review: review,
  pull_request_review_comment: reviewComment,
  pull_request_review_thread: reviewThread,
  push,
  release,
  workflow_run: workflowRun,
  workflow_job: workflowJob,
  check_run: checkRun,
  check_suite: checkSuite,
  status,
  deployment_status: deploymentStatus,
  create: refChange,
  delete: refChange,
  discussion,
  discussion_comment: discussion,
  code_scanning_alert: alert,
  dependabot_alert: alert,
  secret_scanning_alert: alert,
  repository_vulnerability_alert: alert,
  security_advisory: advisory,
  star,
  watch: star,
  fork: star,
};
