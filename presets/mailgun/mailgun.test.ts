/**
 * The `mailgun` preset over real HTTP, with the payload of each event on Mailgun's "Webhook Payloads"
 * page (fixtures/SOURCES.md), posted as Mailgun posts them: the event data beside a `signature`
 * object whose `signature` is the hex HMAC-SHA256 of `timestamp` + `token` keyed by the webhook
 * signing key (Mailgun's "Securing Webhooks"; Mailgun's Node library, mailgun.js, has no verifier
 * to check it against). Every event answered 202 with a short message; a wrong key and a replayed
 * token refused; a retry (a new token, the same event) a duplicate; `events` honoured.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SIGNING_KEY = 'key-mailgun-signing-0123456789abcdef';
const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const ALL = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
const HEADERS = { 'content-type': 'application/json', 'user-agent': 'mailgun/treq-16.12.0' };

/** A delivery of `event` as Mailgun posts it, signed with `key` and a fresh token (or `token`). */
function delivery(event: Record<string, unknown>, key = SIGNING_KEY, token = randomBytes(25).toString('hex')): string {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', key)
    .update(timestamp + token)
    .digest('hex');
  return JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': event });
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'mailgun', secret: SIGNING_KEY },
    { name: 'mailgun', path: 'mailgun-failures', secret: SIGNING_KEY, events: ['failed', 'complained'] },
  ]);
});
afterAll(() => hooks.close());

describe('the mailgun preset', () => {
  it(`takes every published event (${ALL.length}), answering 202 with a short message`, async () => {
    for (const name of ALL) {
      const answer = await hooks.send('mailgun', delivery(fixture(name)), HEADERS);
      expect(answer.status, `${name}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes what happened to which email and why, in the session of the recipient', async () => {
    const event = { ...fixture('failed-permanent.json'), id: 'failed-exact' };
    const answer = await hooks.send('mailgun', delivery(event), HEADERS);
    expect(answer.body.sessionKey).toBe('hook:mailgun:badrecipient_sample.mailgun.com');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'Email to badrecipient@sample.mailgun.com failed (permanent, bounce): 550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [BN3PEPF0000B36D.namprd21.prod.outlook.com 2026-02-12T17:42:55.527Z 08DE657A58651558]',
        'Mailgun will not retry; later mail to this address may be suppressed.',
        'From: Sample Sender <sender@sample.mailgun.com>',
        'Subject: Sample webhook payload',
        'Tags: webhook_payload',
        'Message 20260212174255.58bbb7ce85a423e5@mailgun.com',
      ].join('\n'),
    );
  });

  it('refuses a wrong key and a replayed token with 401, and answers a retry of the same event as a duplicate', async () => {
    const event = { ...fixture('delivered.json'), id: 'delivered-retry' };
    expect((await hooks.send('mailgun', delivery(event, 'key-wrong'), HEADERS)).status).toBe(401);
    const body = delivery(event);
    const first = await hooks.send('mailgun', body, HEADERS);
    expect(first.status).toBe(202);
    // the same request again: its token was spent
    expect((await hooks.send('mailgun', body, HEADERS)).status).toBe(401);
    // Mailgun's retry: a new token and signature around the same event
    const retry = await hooks.send('mailgun', delivery(event), HEADERS);
    expect(retry.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [failed, complained], answers 204 to an open and keeps it', async () => {
    expect((await hooks.send('mailgun-failures', delivery({ ...fixture('complained.json'), id: 'c-1' }), HEADERS)).status).toBe(202);
    expect((await hooks.send('mailgun-failures', delivery({ ...fixture('opened.json'), id: 'o-1' }), HEADERS)).status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'mailgun-failures');
    expect(kept).toMatchObject({ status: 204, mappingId: 'mailgun-failures' });
  });
});
