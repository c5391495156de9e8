/**
 * The `jira` preset over real HTTP (docs/presets/jira.md). Atlassian publishes one complete webhook
 * payload and no example file to take: the fixtures, `*.reconstructed.json`, are written from the shape
 * Atlassian documents for webhook callbacks ("Webhooks", https://developer.atlassian.com/cloud/jira/platform/webhooks/:
 * `timestamp`, `webhookEvent`, `issue_event_type_name`, `user`, `issue`, `changelog`, `comment`) and its
 * REST API's issue, user and comment objects, with values of our own. Atlassian has no library that
 * signs webhooks: they are signed as its docs describe, `sha256=` and the hex HMAC-SHA256 of the body
 * under the webhook's secret in `X-Hub-Signature`, with the headers Jira sends.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'jira-webhook-secret-0123456789';
const DIR = join(import.meta.dirname, 'fixtures');
const FILES = readdirSync(DIR);
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');

const headers = (body: string, identifier = randomUUID(), secret = SECRET) => ({
  'content-type': 'application/json; charset=utf-8',
  'user-agent': 'Atlassian Webhook HTTP Client',
  'x-atlassian-webhook-identifier': identifier,
  'x-atlassian-webhook-flow': 'Primary',
  'x-hub-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'jira', secret: SECRET },
    { name: 'jira', path: 'jira-created', secret: SECRET, events: ['jira:issue_created'] },
  ]);
});
afterAll(() => hooks.close());

describe('the jira preset', () => {
  it('takes every fixture, each message short and not JSON', async () => {
    for (const file of FILES) {
      const body = fixture(file);
      const answer = await hooks.send('jira', body, headers(body));
      expect(answer.status, `${file}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes an issue created, a transition and a comment, all in the session of the issue key', async () => {
    const created = fixture('jira_issue_created.reconstructed.json');
    const first = await hooks.send('jira', created, headers(created));
    expect(first.body.sessionKey).toBe('hook:jira:ED-24');
    expect(inner(await hooks.messageOf(first))).toBe(
      [
        'Jira issue ED-24 created by Mia Krystof: Checkout fails for orders with a discount code',
        'Bug, High, To Do, assigned to Emma Richards',
        'Applying a discount code at checkout returns an error page.',
        '',
        'Steps: add any item, enter SAVE10, press Pay.',
        'Labels: checkout, payments',
        'https://your-domain.atlassian.net/browse/ED-24',
      ].join('\n'),
    );
    const updated = fixture('jira_issue_updated.reconstructed.json');
    const moved = await hooks.send('jira', updated, headers(updated));
    expect(moved.body.sessionKey).toBe('hook:jira:ED-24');
    expect(inner(await hooks.messageOf(moved))).toContain('status: To Do → In Progress');
    const comment = fixture('comment_created.reconstructed.json');
    const said = await hooks.send('jira', comment, headers(comment));
    expect(said.body.sessionKey).toBe('hook:jira:ED-24');
    expect(inner(await hooks.messageOf(said)).split('\n')[0]).toBe(
      'Emma Richards commented on Jira issue ED-24: Checkout fails for orders with a discount code',
    );
  });

  it('refuses a wrong or missing signature with 401, and answers a retried delivery as a duplicate', async () => {
    const body = fixture('jira_issue_deleted.reconstructed.json');
    expect((await hooks.send('jira', body, headers(body, randomUUID(), 'wrong-secret'))).status).toBe(401);
    const { 'x-hub-signature': _, ...unsigned } = headers(body);
    expect((await hooks.send('jira', body, unsigned)).status).toBe(401);
    const identifier = randomUUID();
    const first = await hooks.send('jira', body, headers(body, identifier));
    const again = await hooks.send('jira', body, { ...headers(body, identifier), 'x-atlassian-webhook-retry': '1' });
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [jira:issue_created], answers 204 to a comment and keeps it with the reason', async () => {
    const body = fixture('comment_created.reconstructed.json');
    const answer = await hooks.send('jira-created', body, headers(body));
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'jira-created');
    expect(kept).toMatchObject({ status: 204, mappingId: 'jira-created' });
  });

  it('summarizes an event it has no message for, never refusing it', async () => {
    const body = fixture('sprint_started.reconstructed.json');
    const answer = await hooks.send('jira', body, headers(body));
    expect(answer.status).toBe(202);
    expect(inner(await hooks.messageOf(answer))).toBe('Jira event "sprint_started"\nsprint: ED Sprint 12');
  });
});
