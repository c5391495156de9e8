/**
 * The `linear` preset over real HTTP (docs/presets/linear.md). Fixtures:
 * - Comment.create.json: the webhook payload in @linear/sdk's own webhook test
 *   (https://github.com/linear/linear/blob/master/packages/sdk/src/_tests/LinearWebhooks.test.ts);
 * - `*.from-sdk-types.json`: not published — Issue payloads written from the SDK's webhook payload types
 *   (EntityWebhookPayload, IssueWebhookPayload), with values of our own.
 * Each is sent with `webhookTimestamp` set to the time of sending, as Linear does, signed as Linear's docs
 * describe (the hex HMAC-SHA256 of the body), and every signature is first checked by the SDK's own
 * verifier (`LinearWebhookClient.verify`).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'lin_wh_0123456789abcdef0123456789abcdef';
const DIR = join(import.meta.dirname, 'fixtures');
const FILES = readdirSync(DIR);
const sdk = new LinearWebhookClient(SECRET);

/** A fixture as Linear sends it now: its webhookTimestamp the time of sending. */
const delivery = (name: string, at = Date.now()) =>
  JSON.stringify({ ...JSON.parse(readFileSync(join(DIR, name), 'utf8')), webhookTimestamp: at });

function headers(body: string, id = randomUUID(), secret = SECRET) {
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  if (secret === SECRET) expect(sdk.verify(Buffer.from(body), signature)).toBe(true);
  return {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Linear-Webhook',
    'linear-delivery': id,
    'linear-event': String(JSON.parse(body).type),
    'linear-signature': signature,
  };
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'linear', secret: SECRET },
    { name: 'linear', path: 'linear-issues', secret: SECRET, events: ['Issue'] },
  ]);
});
afterAll(() => hooks.close());

describe('the linear preset', () => {
  it('takes every fixture, each message short and not JSON', async () => {
    for (const file of FILES) {
      const body = delivery(file);
      const answer = await hooks.send('linear', body, headers(body));
      expect(answer.status, `${file}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes an issue and what an update changed, in a session per issue shared by its comments', async () => {
    const created = delivery('Issue.create.from-sdk-types.json');
    const first = await hooks.send('linear', created, headers(created));
    expect(first.body.sessionKey).toBe('hook:linear:issue:539068e2-ae88-4d09-bd75-22eb4a59612f');
    expect(inner(await hooks.messageOf(first))).toBe(
      [
        'Linear issue LIN-1778 created by Ada Lovelace: Foo bar',
        'Todo, High priority, assigned to Ada Lovelace, team LIN',
        'The export button does nothing on Safari.',
        '',
        'Seen by two customers this week.',
        'Labels: Bug',
        'https://linear.app/issue/LIN-1778/foo-bar',
      ].join('\n'),
    );
    const updated = delivery('Issue.update.from-sdk-types.json');
    expect(inner(await hooks.messageOf(await hooks.send('linear', updated, headers(updated))))).toContain('Status: In Progress');
    const comment = delivery('Comment.create.json');
    const said = await hooks.send('linear', comment, headers(comment));
    expect(said.body.sessionKey).toBe(first.body.sessionKey);
  });

  it('refuses a wrong signature or a stale webhookTimestamp with 401; a redelivery is a duplicate', async () => {
    const body = delivery('Comment.create.json');
    expect((await hooks.send('linear', body, headers(body, randomUUID(), 'wrong-secret'))).status).toBe(401);
    const stale = delivery('Comment.create.json', Date.now() - 3_600_000);
    expect((await hooks.send('linear', stale, headers(stale, randomUUID(), 'lin_wh_other'))).status).toBe(401);
    const staleSigned = { ...headers(body), 'linear-signature': createHmac('sha256', SECRET).update(stale).digest('hex') };
    expect((await hooks.send('linear', stale, staleSigned)).status).toBe(401);
    const id = randomUUID();
    const first = await hooks.send('linear', body, headers(body, id));
    const again = await hooks.send('linear', body, headers(body, id));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [Issue], answers 204 to a comment and keeps it with the reason', async () => {
    const body = delivery('Comment.create.json');
    const answer = await hooks.send('linear-issues', body, headers(body));
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'linear-issues');
    expect(kept).toMatchObject({ status: 204, mappingId: 'linear-issues' });
  });
});
