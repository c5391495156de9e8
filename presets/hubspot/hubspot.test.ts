/**
 * The `hubspot` preset over real HTTP, with the example batch of HubSpot's Webhooks API guide
 * (fixtures/SOURCES.md) and batches built from it, signed by HubSpot's own library (`Signature` of
 * `@hubspot/api-client`, v3) over the URL rebuilt from Host and over a configured `publicUrl`: a
 * batch becomes one run per CRM record, each in the record's session; wrong signatures refused; a
 * redelivered batch a duplicate.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Signature } from '@hubspot/api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const CLIENT_SECRET = 'hubspot-client-secret-0123456789';
const PUBLIC_URL = 'https://hooks.example.com/hooks/hubspot-public';
const EXAMPLE: Record<string, unknown>[] = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'contact-events.json'), 'utf8'));

/** HubSpot's v3 headers for `body` posted to `url`, signed by HubSpot's library. */
function headers(body: string, url: string, secret = CLIENT_SECRET): Record<string, string> {
  const timestamp = Date.now();
  const signature = Signature.getSignature('POST', 'v3', { signature: '', clientSecret: secret, url, requestBody: body, timestamp });
  return {
    'content-type': 'application/json',
    'x-hubspot-signature-v3': signature,
    'x-hubspot-request-timestamp': String(timestamp),
    'x-hubspot-signature-version': 'v3',
    'user-agent': 'HubSpot Connect 2.0 (http://dev.hubspot.com/)',
  };
}

let hooks: PresetService;
const send = (path: string, events: unknown[], url = `${hooks.svc.url}/hooks/${path}`, secret = CLIENT_SECRET) => {
  const body = JSON.stringify(events);
  return hooks.send(path, body, headers(body, url, secret));
};
/** The example's events with other event ids, as another delivery would carry. */
const again = (events: Record<string, unknown>[], offset: number) => events.map((e) => ({ ...e, eventId: Number(e.eventId) + offset }));

beforeAll(async () => {
  hooks = await presetService([
    { name: 'hubspot', secret: CLIENT_SECRET },
    { name: 'hubspot', path: 'hubspot-public', secret: CLIENT_SECRET, publicUrl: PUBLIC_URL },
  ]);
});
afterAll(() => hooks.close());

describe('the hubspot preset', () => {
  it("runs HubSpot's example batch as one run per contact, each in its record's session, with the link", async () => {
    const answer = await send('hubspot', EXAMPLE);
    expect(answer.status, answer.text).toBe(202);
    expect(answer.body.runIds).toHaveLength(2);
    const messages = await Promise.all(answer.body.runIds.map((runId: string) => hooks.messageOf({ body: { runId } })));
    for (const m of messages) expectPresetMessage(m);
    expect(messages.map(inner)).toEqual([
      'HubSpot contact 1246965 lifecyclestage changed to "subscriber" (source ACADEMY)\nhttps://app.hubspot.com/contacts/33/record/0-1/1246965',
      'HubSpot contact 1246978 created (source IMPORT)\nhttps://app.hubspot.com/contacts/33/record/0-1/1246978',
    ]);
  });

  it('writes several events about one record as one message (a batch built from the example)', async () => {
    const [change, created] = again(EXAMPLE, 1000);
    const batch = [
      created,
      { ...change, objectId: 1246978 },
      { ...change, objectId: 1246978, propertyName: 'email', propertyValue: 'a@example.com' },
    ];
    const answer = await send('hubspot', batch);
    expect(answer.status).toBe(202);
    expect(answer.body.sessionKey).toBe('hook:hubspot:33:contact:1246978');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'HubSpot contact 1246978: 3 changes',
        '- created (source IMPORT)',
        '- lifecyclestage changed to "subscriber" (source ACADEMY)',
        '- email changed to "a@example.com" (source ACADEMY)',
        'https://app.hubspot.com/contacts/33/record/0-1/1246978',
      ].join('\n'),
    );
  });

  it('takes other objects and unknown subscription types (the example as deal and conversation events)', async () => {
    const batch = again(EXAMPLE, 2000).map((e, i) => ({
      ...e,
      subscriptionType: i === 0 ? 'deal.propertyChange' : 'conversation.newMessage',
    }));
    const answer = await send('hubspot', batch);
    expect(answer.status).toBe(202);
    for (const runId of answer.body.runIds) expectPresetMessage(await hooks.messageOf({ body: { runId } }));
  });

  it('checks the signature over publicUrl when set, refuses a wrong one with 401, and answers a redelivery as a duplicate', async () => {
    const batch = again(EXAMPLE, 3000);
    expect((await send('hubspot-public', batch, PUBLIC_URL, 'wrong-secret')).status).toBe(401);
    expect((await send('hubspot-public', batch, 'https://elsewhere.example.com/hooks/hubspot-public')).status).toBe(401);
    const first = await send('hubspot-public', batch, PUBLIC_URL);
    const redelivered = await send(
      'hubspot-public',
      batch.map((e) => ({ ...e, attemptNumber: 1 })),
      PUBLIC_URL,
    );
    expect(first.status).toBe(202);
    expect(redelivered.body).toEqual({ ...first.body, duplicate: true });
  });

  it('refuses events: a batch holds several types', async () => {
    await expect(presetService([{ name: 'hubspot', secret: CLIENT_SECRET, events: ['contact.creation'] }])).rejects.toThrow(/events/);
  });
});
