/**
 * The `intercom` preset over real HTTP, with notifications from Intercom's own library's test data
 * (fixtures/SOURCES.md; one assembled with the conversation part of Intercom's reference), signed as
 * Intercom signs (`X-Hub-Signature: sha1=` and the hex HMAC-SHA1 of the body keyed by the app's
 * client secret; Intercom's Node library, intercom-client, has no verifier to check it against):
 * every notification answered 202 with a short message, Intercom's `ping` run as nothing, wrong
 * signatures refused, a retried notification a duplicate, `events` honoured.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const CLIENT_SECRET = 'intercom-client-secret-0123456789';
const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const ALL = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));

const headers = (body: string, secret = CLIENT_SECRET) => ({
  'content-type': 'application/json',
  'x-hub-signature': `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
  'user-agent': 'intercom-parrot-service-rb',
});
/** A notification with its own id: the library's examples share one. */
const notified = (payload: Record<string, unknown>) => JSON.stringify({ ...payload, id: `notif_${randomUUID()}` });

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'intercom', secret: CLIENT_SECRET },
    { name: 'intercom', path: 'intercom-new', secret: CLIENT_SECRET, events: ['conversation.user.created'] },
  ]);
});
afterAll(() => hooks.close());

describe('the intercom preset', () => {
  it(`takes every notification (${ALL.length}), answering 202 with a short message`, async () => {
    for (const name of ALL) {
      const body = notified(fixture(name));
      const answer = await hooks.send('intercom', body, headers(body));
      expect(answer.status, `${name}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it("writes who wrote what in a conversation, in the conversation's session", async () => {
    const body = notified(fixture('conversation.user.replied.assembled.json'));
    const answer = await hooks.send('intercom', body, headers(body));
    expect(answer.body.sessionKey).toBe('hook:intercom:aaaaa:conversation:123456789');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'Kill Bill <bill@bill.bill> replied in Intercom conversation 123456789',
        "Hi Jane, it's all great thanks!",
        'https://app.intercom.io/a/apps/aaaaaa/inbox/all/conversations/123456789',
      ].join('\n'),
    );
    const started = notified(fixture('conversation.user.created.json'));
    expect((await hooks.send('intercom', started, headers(started))).body.sessionKey).toBe(answer.body.sessionKey);
  });

  it("answers Intercom's ping with 204 and runs nothing", async () => {
    // the notification Intercom sends when a webhook is saved: the library's envelope with the topic "ping"
    const ping = notified({
      ...fixture('user.created.json'),
      topic: 'ping',
      data: { type: 'notification_event_data', item: { type: 'ping' } },
    });
    expect((await hooks.send('intercom', ping, headers(ping))).status).toBe(204);
  });

  it('refuses a wrong signature with 401, and answers a retried notification as a duplicate', async () => {
    const body = notified(fixture('conversation.user.created.json'));
    expect((await hooks.send('intercom', body, headers(body, 'wrong-secret'))).status).toBe(401);
    const first = await hooks.send('intercom', body, headers(body));
    const retry = await hooks.send('intercom', body, headers(body));
    expect(first.status).toBe(202);
    expect(retry.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [conversation.user.created], answers 204 to a new user and keeps it', async () => {
    const body = notified(fixture('user.created.json'));
    expect((await hooks.send('intercom-new', body, headers(body))).status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'intercom-new');
    expect(kept).toMatchObject({ status: 204, mappingId: 'intercom-new' });
  });
});
