/**
 * The `gitlab` preset's messages (docs/presets/gitlab.md): one per common event — what happened, who did
 * it, where, the link — and a summary for the others. One session per merge request, per issue (their
 * numbers are two sequences in GitLab, so the key says which), per branch or tag for pushes and
 * pipelines, per environment, per release.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const who = (p: Obj): string => str(obj(p.user).name) || str(obj(p.user).username) || str(p.user_name) || 'someone';

interface Said {
  text: string;
  key?: string;
}
type Message = (p: Obj, where: string) => Said;

export default function gitlab(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const project = obj(p.project);
  const where =
    str(project.path_with_namespace) ||
    str(p.project_name) ||
    str(p.path_with_namespace) ||
    str(p.full_path) ||
    str(p.group_path) ||
    'GitLab';
  const kind = str(p.object_kind) || str(p.event_name);
  const said = (BY_EVENT[ctx.event ?? ''] ?? BY_KIND[kind] ?? generic(ctx.event ?? ''))(p, where);
  return result(ctx, said.text, said.key ?? sessionKey('hook:gitlab', where));
}

/** `open` → `opened`, `approval` → `approved`: GitLab's action names as the past tense a message reads. */
const DONE: Record<string, string> = {
  open: 'opened',
  close: 'closed',
  reopen: 'reopened',
  update: 'updated',
  merge: 'merged',
  approved: 'approved',
  unapproved: 'unapproved',
  approval: 'approved',
  unapproval: 'unapproved',
  create: 'created',
  delete: 'deleted',
};
const done = (action: string): string => DONE[action] ?? (action.replace(/_/g, ' ') || 'changed');
const labelsOf = (v: unknown): string =>
  (Array.isArray(v) ? v : [])
    .map((l) => oneLine(obj(l).title, 60))
    .filter(Boolean)
    .join(', ');

const issue: Message = (p, where) => {
  const a = obj(p.object_attributes);
  const action = str(a.action);
  const type = str(a.type) || 'Issue';
  const shown = action === 'open' || action === 'reopen';
  const labels = labelsOf(a.labels ?? p.labels);
  return {
    text: lines(
      `${type} #${str(a.iid)} in ${where} ${done(action)} by ${who(p)}${a.confidential === true ? ' (confidential)' : ''}: ${oneLine(a.title)}`,
      shown && block(a.description),
      shown && labels && `Labels: ${labels}`,
      str(a.url),
    ),
    key: sessionKey('hook:gitlab', where, 'issue', str(a.iid)),
  };
};

const mergeRequest: Message = (p, where) => {
  const a = obj(p.object_attributes);
  const action = str(a.action);
  const shown = action === 'open' || action === 'reopen';
  const draft = a.draft === true || a.work_in_progress === true ? ' (draft)' : '';
  return {
    text: lines(
      `Merge request !${str(a.iid)} in ${where} ${done(action)} by ${who(p)}${draft}: ${oneLine(a.title)}`,
      shown && `${str(a.source_branch)} → ${str(a.target_branch)}`,
      shown && block(a.description),
      action === 'update' && str(obj(a.last_commit).title) && `Last commit: ${oneLine(obj(a.last_commit).title, 120)}`,
      str(a.url),
    ),
    key: sessionKey('hook:gitlab', where, 'mr', str(a.iid)),
  };
};

/** A comment: on what (a merge request, an issue, a commit, a snippet), in a session with that thing. */
const note: Message = (p, where) => {
  const a = obj(p.object_attributes);
  const type = str(a.noteable_type);
  const mr = obj(p.merge_request);
  const is = obj(p.issue);
  const commit = obj(p.commit);
  const [what, title, key] =
    type === 'MergeRequest'
      ? [`merge request !${str(mr.iid)}`, mr.title, ['mr', str(mr.iid)]]
      : type === 'Issue'
        ? [`issue #${str(is.iid)}`, is.title, ['issue', str(is.iid)]]
        : type === 'Commit'
          ? [`commit ${str(commit.id).slice(0, 8)}`, str(commit.message).split('\n')[0], ['commit', str(commit.id)]]
          : [`snippet ${str(obj(p.snippet).id)}`, obj(p.snippet).title, ['snippet', str(obj(p.snippet).id)]];
  const verb = str(a.action) === 'update' ? 'edited a comment' : 'commented';
  return {
    text: lines(`${who(p)} ${verb} on ${what} in ${where}${oneLine(title) ? `: ${oneLine(title)}` : ''}`, block(a.note), str(a.url)),
    key: sessionKey('hook:gitlab', where, ...key),
  };
};

const ZERO = /^0+$/;
const MAX_COMMITS = 10;

const push: Message = (p, where) => {
  const ref = str(p.ref);
  const name = ref.replace(/^refs\/(heads|tags)\//, '');
  const kind = ref.startsWith('refs/tags/') ? 'tag' : 'branch';
  const key = sessionKey('hook:gitlab', where, 'ref', name);
  const web = str(obj(p.project).web_url);
  if (ZERO.test(str(p.after))) return { text: `${who(p)} deleted ${kind} ${name} in ${where}`, key };
  const commits = (Array.isArray(p.commits) ? p.commits : []).map(obj);
  const total = typeof p.total_commits_count === 'number' ? p.total_commits_count : commits.length;
  const head =
    kind === 'tag'
      ? `${who(p)} pushed tag ${name} in ${where}`
      : total === 0
        ? `${who(p)} ${ZERO.test(str(p.before)) ? 'created' : 'pushed to'} branch ${name} in ${where}`
        : `${who(p)} pushed ${total} commit${total === 1 ? '' : 's'} to branch ${name} in ${where}`;
  const shown = commits
    .slice(-MAX_COMMITS)
    .map(
      (c) =>
        `- ${str(c.id).slice(0, 8)} ${oneLine(str(c.title) || str(c.message).split('\n')[0], 120)} (${oneLine(obj(c.author).name, 60)})`,
    );
  const compare =
    web && !ZERO.test(str(p.before)) && total > 0 ? `${web}/-/compare/${str(p.before).slice(0, 12)}...${str(p.after).slice(0, 12)}` : '';
  return {
    text: lines(
      head,
      ...shown,
      total > shown.length && shown.length > 0 && `(${total - shown.length} more commits not listed)`,
      compare || (web && `${web}/-/${kind === 'tag' ? 'tags' : 'commits'}/${name}`),
    ),
    key,
  };
};

const pipeline: Message = (p, where) => {
  const a = obj(p.object_attributes);
  const mr = obj(p.merge_request);
  const failed = (Array.isArray(p.builds) ? p.builds : [])
    .map(obj)
    .filter((b) => str(b.status) === 'failed')
    .map(
      (b) =>
        `- ${oneLine(b.name, 80)} (stage ${oneLine(b.stage, 40)}${str(b.failure_reason) ? `, ${str(b.failure_reason).replace(/_/g, ' ')}` : ''})`,
    );
  const ref = str(a.ref);
  return {
    text: lines(
      `Pipeline #${str(a.id)} ${str(a.status) || 'changed'} on ${a.tag === true ? 'tag' : 'branch'} ${ref} in ${where} (${who(p)}${typeof a.duration === 'number' ? `, ${a.duration} s` : ''})`,
      str(mr.iid) && `For merge request !${str(mr.iid)}: ${oneLine(mr.title)}`,
      failed.length > 0 && 'Failed jobs:',
      ...failed.slice(0, 10),
      str(a.url),
    ),
    key: sessionKey('hook:gitlab', where, 'ci', ref),
  };
};

const job: Message = (p, where) => {
  const ref = str(p.ref);
  const status = str(p.build_status);
  const web = str(obj(p.project).web_url) || str(obj(p.repository).homepage);
  return {
    text: lines(
      `Job "${oneLine(p.build_name, 80)}" (stage ${oneLine(p.build_stage, 40)}) ${status || 'changed'} on ${ref} in ${where}${status === 'failed' && str(p.build_failure_reason) ? `: ${str(p.build_failure_reason).replace(/_/g, ' ')}` : ''}`,
      web && str(p.build_id) && `${web}/-/jobs/${str(p.build_id)}`,
    ),
    key: sessionKey('hook:gitlab', where, 'ci', ref),
  };
};

const deployment: Message = (p, where) => ({
  text: lines(
    `Deployment to ${oneLine(p.environment, 80) || 'an environment'} ${str(p.status) || 'changed'} in ${where} (${str(p.short_sha)} ${oneLine(p.commit_title, 100)}, by ${who(p)})`,
    str(p.environment_external_url),
    str(p.deployable_url),
  ),
  key: sessionKey('hook:gitlab', where, 'deploy', str(p.environment)),
});

const release: Message = (p, where) => {
  const action = str(p.action);
  return {
    text: lines(
      `Release ${oneLine(p.name, 80) || str(p.tag)} ${done(action)} in ${where}`,
      action !== 'delete' && block(p.description),
      str(p.url),
    ),
    key: sessionKey('hook:gitlab', where, 'release', str(p.tag)),
  };
};

const wiki: Message = (p, where) => {
  const a = obj(p.object_attributes);
  return {
    text: lines(`${who(p)} ${done(str(a.action))} wiki page "${oneLine(a.title, 120)}" in ${where}`, oneLine(a.message, 300), str(a.url)),
    key: sessionKey('hook:gitlab', where, 'wiki', str(a.slug)),
  };
};

const accessToken: Message = (p, where) => {
  const t = obj(p.object_attributes);
  return { text: `Access token "${oneLine(t.name, 100)}" of ${where} expires on ${str(t.expires_at) || 'a date soon'}` };
};

/** An event without a message of its own: its name, where, who, and a summary of its fields. */
const generic =
  (event: string): Message =>
  (p, where) => {
    const { project: _p, repository: _r, user: _u, ...rest } = p;
    return { text: lines(`GitLab event "${oneLine(event, 60) || str(p.event_name) || 'unnamed'}" in ${where}`, summarize(rest)) };
  };

const BY_EVENT: Record<string, Message> = {
  'Issue Hook': issue,
  'Confidential Issue Hook': issue,
  'Merge Request Hook': mergeRequest,
  'Note Hook': note,
  'Confidential Note Hook': note,
  'Push Hook': push,
  'Tag Push Hook': push,
  'Pipeline Hook': pipeline,
  'Job Hook': job,
  'Deployment Hook': deployment,
  'Release Hook': release,
  'Wiki Page Hook': wiki,
  'Resource Access Token Hook': accessToken,
};

/** System hooks send `System Hook` for every kind: the body's own kind names it then. */
const BY_KIND: Record<string, Message> = {
  issue,
  work_item: issue,
  merge_request: mergeRequest,
  note,
  push,
  tag_push: push,
  pipeline,
  build: job,
  deployment,
  release,
  wiki_page: wiki,
  access_token: accessToken,
};
