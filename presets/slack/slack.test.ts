/**
 * The `slack` preset over real HTTP, with the example payloads Slack publishes on its event
 * reference pages (fixtures/SOURCES.md names each page), signed as Slack documents ("Verifying
 * requests from Slack": HMAC-SHA256 of `v0:<timestamp>:<body>`), each signature checked by Slack's
 * own verifier (`isValidSlackRequest` of @slack/bolt) before it is sent: the URL check answered as
 * Slack requires, every event answered 202 with a short message, the app's own messages run
 * nothing, retries are duplicates, wrong signatures refused, `events` honoured.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isValidSlackRequest } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'slack-signing-secret-0123456789';
const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const ALL = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));

/** Slack's headers for `body`, signed with `secret`; a signature made with ours is checked by Slack's verifier first. */
function headers(body: string, secret = SECRET, extra: Record<string, string> = {}): Record<string, string> {
  const ts = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  if (secret === SECRET)
    expect(
      isValidSlackRequest({ signingSecret: SECRET, body, headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': ts } }),
    ).toBe(true);
  return {
    'content-type': 'application/json',
    'x-slack-signature': signature,
    'x-slack-request-timestamp': String(ts),
    'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
    ...extra,
  };
}

/** A published example with its own delivery id: Slack's pages give most examples the same `event_id`. */
const delivered = (payload: Record<string, unknown>) => JSON.stringify({ ...payload, event_id: `Ev${randomUUID().slice(0, 8)}` });

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'slack', secret: SECRET },
    { name: 'slack', path: 'slack-mentions', secret: SECRET, events: ['app_mention'] },
  ]);
});
afterAll(() => hooks.close());

describe('the slack preset', () => {
  it('answers the url_verification handshake with its challenge, storing nothing', async () => {
    const body = JSON.stringify(fixture('url_verification.json'));
    const answer = await hooks.send('slack', body, headers(body));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect((await hooks.send('slack', body, headers(body, 'wrong-secret'))).status).toBe(401);
  });

  it(`takes every published event example (${ALL.length - 1}), answering 202 with a short message`, async () => {
    for (const name of ALL.filter((f) => f !== 'url_verification.json')) {
      const body = delivered(fixture(name));
      const answer = await hooks.send('slack', body, headers(body));
      expect(answer.status, `${name}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes who, where and the text, in a session per channel thread', async () => {
    const body = delivered(fixture('message.channels.json'));
    const answer = await hooks.send('slack', body, headers(body));
    expect(answer.status).toBe(202);
    expect(answer.body.sessionKey).toBe('hook:slack:T123ABC456:C123ABC456:1355517523.000005');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'Slack message from U123ABC456 in channel C123ABC456:',
        'Live long and prospect.',
        'https://slack.com/app_redirect?channel=C123ABC456&team=T123ABC456',
      ].join('\n'),
    );

    // a reply in that thread (the published example, given a thread_ts) joins the same session
    const example = fixture('message.channels.json');
    const reply = { ...example, event: { ...(example.event as object), ts: '1355517600.000001', thread_ts: '1355517523.000005' } };
    const replyBody = delivered(reply);
    const again = await hooks.send('slack', replyBody, headers(replyBody));
    expect(again.body.sessionKey).toBe(answer.body.sessionKey);
    expect(inner(await hooks.messageOf(again)).split('\n')[0]).toBe(
      'Slack message from U123ABC456 in channel C123ABC456 (thread 1355517523.000005):',
    );

    const mention = delivered(fixture('app_mention.json'));
    const mentioned = await hooks.send('slack', mention, headers(mention));
    expect(inner(await hooks.messageOf(mentioned))).toContain(
      'U061F7AUR mentioned the app in channel C123ABC456:\n<@U0LAN0Z89> is it everything a river should be?',
    );
  });

  it("runs nothing for the app's own messages (answered 204), so an agent answering in Slack does not wake itself", async () => {
    // the published message example, as posted by this app (its app_id) and by its bot user
    const example = fixture('message.channels.json');
    const byApp = { ...example, event: { ...(example.event as object), bot_id: 'B123ABC456', app_id: 'A123ABC456' } };
    const byBotUser = { ...example, authorizations: [{ team_id: 'T123ABC456', user_id: 'U123ABC456', is_bot: true }] };
    for (const payload of [byApp, byBotUser]) {
      const body = delivered(payload);
      expect((await hooks.send('slack', body, headers(body))).status).toBe(204);
    }
  });

  it('answers a retry (X-Slack-Retry-Num, same event_id) as a duplicate, and refuses a wrong signature', async () => {
    const body = delivered(fixture('reaction_added.json'));
    const first = await hooks.send('slack', body, headers(body));
    const retry = await hooks.send(
      'slack',
      body,
      headers(body, SECRET, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' }),
    );
    expect(first.status).toBe(202);
    expect(retry.body).toEqual({ ...first.body, duplicate: true });
    expect((await hooks.send('slack', body, headers(body, 'wrong-secret'))).status).toBe(401);
  });

  it('on a second path with events: [app_mention], answers 204 to a message and keeps it with the reason', async () => {
    const body = delivered(fixture('message.channels.json'));
    expect((await hooks.send('slack-mentions', body, headers(body))).status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'slack-mentions');
    expect(kept).toMatchObject({ status: 204, mappingId: 'slack-mentions' });
    const mention = delivered(fixture('app_mention.json'));
    expect((await hooks.send('slack-mentions', mention, headers(mention))).status).toBe(202);
  });
});
