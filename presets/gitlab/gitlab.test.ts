/**
 * The `gitlab` preset over real HTTP (docs/presets/gitlab.md), with the payload examples GitLab
 * publishes in "Webhook events" (https://docs.gitlab.com/user/project/integrations/webhook_events/),
 * one fixture each, sent with the headers GitLab documents. Two examples are not valid JSON as
 * published (a `//` comment, a trailing comma): their fixtures, `*.comments-removed.json`, have those
 * taken out and nothing else changed. GitLab signs nothing: it sends the webhook's secret token in
 * `X-Gitlab-Token`, and has no library to sign with, so the header is set as GitLab sets it.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'gitlab-secret-token-0123456789';
const DIR = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');

/** The X-Gitlab-Event header each example is documented with. */
const EVENTS: Record<string, string> = {
  'push.json': 'Push Hook',
  'tag_push.json': 'Tag Push Hook',
  'issue.json': 'Issue Hook',
  'note_commit.json': 'Note Hook',
  'note_merge_request.json': 'Note Hook',
  'note_issue.json': 'Note Hook',
  'note_snippet.json': 'Note Hook',
  'merge_request.json': 'Merge Request Hook',
  'wiki_page.json': 'Wiki Page Hook',
  'pipeline.json': 'Pipeline Hook',
  'job.comments-removed.json': 'Job Hook',
  'deployment.json': 'Deployment Hook',
  'member_add.json': 'Member Hook',
  'project_create.json': 'Project Hook',
  'subgroup_create.json': 'Subgroup Hook',
  'feature_flag.json': 'Feature Flag Hook',
  'release.comments-removed.json': 'Release Hook',
  'milestone.json': 'Milestone Hook',
  'emoji.json': 'Emoji Hook',
};

/** The headers GitLab sends with a delivery. */
const headers = (event: string, uuid = randomUUID(), token = SECRET) => ({
  'content-type': 'application/json',
  'user-agent': 'GitLab/18.2.0',
  'x-gitlab-event': event,
  'x-gitlab-event-uuid': uuid,
  'x-gitlab-webhook-uuid': '2a2c3e9b-6c0b-4e8a-9c5d-8f0c1e7d4b21',
  'x-gitlab-instance': 'https://gitlab.example.com',
  'x-gitlab-token': token,
});

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'gitlab', secret: SECRET },
    { name: 'gitlab', path: 'gitlab-mr', secret: SECRET, events: ['Merge Request Hook', 'Note Hook'] },
  ]);
});
afterAll(() => hooks.close());

describe('the gitlab preset', () => {
  it('has a documented event for every fixture', () => {
    expect(readdirSync(DIR).sort()).toEqual(Object.keys(EVENTS).sort());
  });

  it('takes every published example, each message short and not JSON', async () => {
    for (const [file, event] of Object.entries(EVENTS)) {
      const answer = await hooks.send('gitlab', fixture(file), headers(event));
      expect(answer.status, `${file}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes a merge request with its branches, in a session per merge request shared by its comments', async () => {
    const mr = await hooks.send('gitlab', fixture('merge_request.json'), headers('Merge Request Hook'));
    expect(mr.body.sessionKey).toBe('hook:gitlab:gitlabhq/gitlab-test:mr:1');
    expect(inner(await hooks.messageOf(mr))).toBe(
      [
        'Merge request !1 in gitlabhq/gitlab-test opened by Administrator: MS-Viewport',
        'ms-viewport → master',
        'http://example.com/diaspora/merge_requests/1',
      ].join('\n'),
    );
    const comment = await hooks.send('gitlab', fixture('note_merge_request.json'), headers('Note Hook'));
    expect(comment.body.sessionKey).toBe('hook:gitlab:gitlab-org/gitlab-test:mr:1');
    expect(inner(await hooks.messageOf(comment))).toBe(
      [
        'Administrator commented on merge request !1 in gitlab-org/gitlab-test: Tempora et eos debitis quae laborum et.',
        'This MR needs work.',
        'http://example.com/gitlab-org/gitlab-test/merge_requests/1#note_1244',
      ].join('\n'),
    );
  });

  it('writes an issue, a push and a failed pipeline job list, each in its own session', async () => {
    const issue = await hooks.send('gitlab', fixture('issue.json'), headers('Issue Hook'));
    expect(issue.body.sessionKey).toBe('hook:gitlab:gitlabhq/gitlab-test:issue:23');
    expect(inner(await hooks.messageOf(issue)).split('\n')[0]).toBe(
      'Issue #23 in gitlabhq/gitlab-test opened by Administrator: New API: create/update/delete file',
    );
    const push = await hooks.send('gitlab', fixture('push.json'), headers('Push Hook'));
    expect(push.body.sessionKey).toBe('hook:gitlab:mike/diaspora:ref:master');
    expect(inner(await hooks.messageOf(push))).toBe(
      [
        'John Smith pushed 4 commits to branch master in mike/diaspora',
        '- b6568db1 Update Catalan translation to e38cb41. (Jordi Mallach)',
        '- da156088 fixed readme (GitLab dev user)',
        '(2 more commits not listed)',
        'http://example.com/mike/diaspora/-/compare/95790bf891e7...da1560886d4f',
      ].join('\n'),
    );
    const pipeline = await hooks.send('gitlab', fixture('pipeline.json'), headers('Pipeline Hook'));
    expect(pipeline.body.sessionKey).toBe('hook:gitlab:gitlab-org/gitlab-test:ci:master');
    expect(inner(await hooks.messageOf(pipeline))).toContain('Failed jobs:\n- test-build (stage test, script failure)');
  });

  it('refuses a wrong or missing token with 401, and answers a redelivery (same X-Gitlab-Event-UUID) as a duplicate', async () => {
    const body = fixture('push.json');
    expect((await hooks.send('gitlab', body, headers('Push Hook', randomUUID(), 'wrong-token'))).status).toBe(401);
    const { 'x-gitlab-token': _, ...none } = headers('Push Hook');
    expect((await hooks.send('gitlab', body, none)).status).toBe(401);
    const uuid = randomUUID();
    const first = await hooks.send('gitlab', body, headers('Push Hook', uuid));
    const again = await hooks.send('gitlab', body, headers('Push Hook', uuid));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [Merge Request Hook, Note Hook], answers 204 to a push and keeps it with the reason', async () => {
    const answer = await hooks.send('gitlab-mr', fixture('push.json'), headers('Push Hook'));
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'gitlab-mr');
    expect(kept).toMatchObject({ status: 204, mappingId: 'gitlab-mr' });
  });

  it('summarizes an event it has no message for, never refusing it', async () => {
    const answer = await hooks.send('gitlab', fixture('subgroup_create.json'), headers('Subgroup Hook'));
    expect(answer.status).toBe(202);
    expect(
      inner(await hooks.messageOf(answer))
        .split('\n')
        .slice(0, 2),
    ).toEqual(['GitLab event "Subgroup Hook" in group1/subgroup1', 'created_at: 2021-01-20T09:40:12Z']);
  });
});
