/**
 * The GitHub example: issues and pull requests opened, labeled, closed and
 * merged; null for the events not worth a run.
 */
import { describe, expect, it } from 'vitest';
import github, { type GitHubEvent } from './github.ts';
import { context, fixture } from '../test/helpers/transform-context.ts';

const run = (event: string, payload: GitHubEvent) => github(context(payload, { path: 'github', headers: { 'x-github-event': event } }));
const load = (name: string) => fixture<GitHubEvent>(`github-${name}.json`);

describe('transforms/github.ts', () => {
  it('starts an agent run for an opened issue, one session per issue', () => {
    expect(run('issues', load('issues-opened'))).toEqual({
      sessionKey: 'hook:github:acme/app:7',
      message: [
        'Issue #7 in acme/app opened by octocat: Crash on start when the config has no channels',
        'Labels: bug',
        'https://github.com/acme/app/issues/7',
        '',
        "Steps to reproduce:\n1. remove `channels` from the config\n2. run `hook-intake serve`\n\nExpected: it starts. Actual: TypeError: Cannot read properties of undefined (reading 'console')",
      ].join('\n'),
    });
  });

  it('starts an agent run for an opened pull request, with branches and size', () => {
    const r = run('pull_request', load('pull_request-opened')) as { sessionKey: string; message: string };
    expect(r.sessionKey).toBe('hook:github:acme/app:12');
    expect(r.message.split('\n').slice(0, 3)).toEqual([
      'Pull request #12 in acme/app opened by octocat: Default to the console channel when none is configured',
      'fix-default-channel → main, 4 files (+41 −3)',
      'https://github.com/acme/app/pull/12',
    ]);
    expect(r.message).toContain('\n\nFixes #7.');
  });

  it('turns a merged pull request into a wake for the next heartbeat', () => {
    expect(run('pull_request', load('pull_request-merged'))).toEqual({
      kind: 'wake',
      mode: 'next-heartbeat',
      text: 'Pull request #12 in acme/app merged by maintainer-ana: Default to the console channel when none is configured\nhttps://github.com/acme/app/pull/12',
    });
  });

  it('says "closed" for a pull request closed without merging, and for an issue', () => {
    const pr = load('pull_request-merged');
    pr.pull_request = { ...pr.pull_request!, merged: false, merged_by: null };
    expect(run('pull_request', pr)).toMatchObject({
      kind: 'wake',
      text: expect.stringMatching(/^Pull request #12 in acme\/app closed by maintainer-ana: /),
    });
    const issue = { ...load('issues-opened'), action: 'closed' };
    expect(run('issues', issue)).toMatchObject({
      kind: 'wake',
      mode: 'next-heartbeat',
      text: expect.stringMatching(/^Issue #7 in acme\/app closed by octocat: /),
    });
  });

  it('starts a run in the same session when a watched label is added', () => {
    expect(run('issues', load('issues-labeled'))).toEqual({
      sessionKey: 'hook:github:acme/app:7',
      message:
        'Issue #7 in acme/app was labeled "security" by maintainer-ana: Crash on start when the config has no channels\nhttps://github.com/acme/app/issues/7',
    });
  });

  it('ignores other labels', () => {
    const p = load('issues-labeled');
    p.label = { name: 'documentation' };
    expect(run('issues', p)).toBeNull();
  });

  it('cuts long bodies', () => {
    const p = load('issues-opened');
    p.issue!.body = 'x'.repeat(5000);
    const r = run('issues', p) as { message: string };
    expect(r.message.endsWith(`\n${'x'.repeat(2000)}…`)).toBe(true);
  });

  it.each([
    ['a push to a pull request (synchronize)', 'pull_request', load('pull_request-synchronize')],
    [
      'a draft pull request opened',
      'pull_request',
      { ...load('pull_request-opened'), pull_request: { ...load('pull_request-opened').pull_request!, draft: true } },
    ],
    ['an edited issue', 'issues', { ...load('issues-opened'), action: 'edited' }],
    ['an assigned issue', 'issues', { ...load('issues-opened'), action: 'assigned' }],
    [
      'the ping GitHub sends when the webhook is created',
      'ping',
      { zen: 'Keep it logically awesome.', hook_id: 1 } as unknown as GitHubEvent,
    ],
    ['a push', 'push', { ref: 'refs/heads/main' } as unknown as GitHubEvent],
    ['an issues event without the issue', 'issues', { action: 'opened' } as unknown as GitHubEvent],
  ])('returns null for %s', (_what, event, payload) => {
    expect(run(event, payload)).toBeNull();
  });

  it('starts a run when a draft is marked ready for review', () => {
    const p = { ...load('pull_request-opened'), action: 'ready_for_review' };
    expect((run('pull_request', p) as { message: string }).message).toMatch(/^Pull request #12 in acme\/app ready for review by octocat: /);
  });
});
