/**
 * The `github` preset over real HTTP, with GitHub's own published example payloads
 * (`@octokit/webhooks-examples`, every event and action) signed by GitHub's own signing library
 * (`@octokit/webhooks-methods`): every one answered 2xx or 204, never a 5xx; each message within
 * `maxChars` and never raw JSON; wrong signatures refused; redeliveries duplicates; `events` honoured.
 */
import { randomUUID } from 'node:crypto';
import examples from '@octokit/webhooks-examples/api.github.com/index.json' with { type: 'json' };
import { sign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'gh-webhook-secret-0123456789';

interface Example {
  name: string;
  actions: string[];
  examples: Record<string, unknown>[];
}
const ALL = (examples as unknown as Example[]).flatMap((e) => e.examples.map((payload) => ({ event: e.name, payload })));

async function headers(event: string, body: string, delivery = randomUUID(), secret = SECRET) {
  return {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': delivery,
    'x-hub-signature-256': await sign(secret, body),
    'user-agent': 'GitHub-Hookshot/0000000',
  };
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'github', secret: SECRET },
    { name: 'github', path: 'github-issues', secret: SECRET, events: ['issues'] },
  ]);
});
afterAll(() => hooks.close());

describe('the github preset', () => {
  it(`takes every published example (${ALL.length}), answering 2xx or 204, each message short and not JSON`, async () => {
    const statuses = new Map<number, number>();
    for (const { event, payload } of ALL) {
      const body = JSON.stringify(payload);
      const answer = await hooks.send('github', body, await headers(event, body));
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      expect([200, 202, 204], `${event}: ${answer.status} ${answer.text}`).toContain(answer.status);
      if (answer.status === 204) {
        expect(event).toBe('ping');
        continue;
      }
      expectPresetMessage(await hooks.messageOf(answer));
    }
    expect(statuses.get(202)).toBeGreaterThan(300);
  });

  it('writes what happened, who, where and the link, in a session per issue', async () => {
    const opened = (examples as unknown as Example[]).find((e) => e.name === 'issues')!.examples.find((p) => p.action === 'opened')!;
    const body = JSON.stringify(opened);
    const answer = await hooks.send('github', body, await headers('issues', body));
    expect(answer.status).toBe(202);
    const issue = opened.issue as { number: number; title: string; html_url: string };
    const repo = (opened.repository as { full_name: string }).full_name;
    expect(answer.body.sessionKey).toBe(`hook:github:${repo}:${issue.number}`);
    const content = inner(await hooks.messageOf(answer));
    expect(content.split('\n')[0]).toBe(
      `Issue #${issue.number} in ${repo} opened by ${(opened.sender as { login: string }).login}: ${issue.title}`,
    );
    expect(content).toContain(issue.html_url);
  });

  it('refuses a wrong or missing signature with 401, and answers a redelivery as a duplicate', async () => {
    const body = JSON.stringify({ zen: 'x', hook_id: 1 });
    expect((await hooks.send('github', body, await headers('star', body, randomUUID(), 'wrong-secret'))).status).toBe(401);
    const unsigned = await headers('star', body);
    delete (unsigned as Partial<typeof unsigned>)['x-hub-signature-256'];
    expect((await hooks.send('github', body, unsigned)).status).toBe(401);

    const push = JSON.stringify(ALL.find((e) => e.event === 'push')!.payload);
    const delivery = randomUUID();
    const first = await hooks.send('github', push, await headers('push', push, delivery));
    const again = await hooks.send('github', push, await headers('push', push, delivery));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('on a second path with events: [issues], answers 204 to a push and keeps it with the reason', async () => {
    const push = JSON.stringify(ALL.find((e) => e.event === 'push')!.payload);
    const answer = await hooks.send('github-issues', push, await headers('push', push));
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'github-issues');
    expect(kept).toMatchObject({ status: 204, mappingId: 'github-issues' });
  });
});
