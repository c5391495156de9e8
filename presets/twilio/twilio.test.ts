/**
 * The `twilio` preset over real HTTP: Twilio Messaging requests (form bodies of the parameters
 * Twilio documents; fixtures/SOURCES.md says where each comes from, and that they are reconstructed
 * from Twilio's parameter tables) signed by Twilio's own library (`getExpectedTwilioSignature` of
 * `twilio`), over the URL rebuilt from Host and over a configured `publicUrl`: each answered 202
 * with a short message, a session per person, wrong signatures refused, a redelivery a duplicate,
 * `events` honoured.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import twilioSdk from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const AUTH_TOKEN = 'twilio-auth-token-0123456789abcdef';
const PUBLIC_URL = 'https://hooks.example.com/hooks/twilio-public';
const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (name: string): Record<string, string> => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const ALL = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'twilio', secret: AUTH_TOKEN },
    { name: 'twilio', path: 'twilio-public', secret: AUTH_TOKEN, publicUrl: PUBLIC_URL },
    { name: 'twilio', path: 'twilio-inbound', secret: AUTH_TOKEN, events: ['received'] },
  ]);
});
afterAll(() => hooks.close());

/** POSTs `fields` to `/hooks/<path>` as Twilio does: a form body, signed over `url` by Twilio's library. */
async function send(path: string, fields: Record<string, string>, url = `${hooks.svc.url}/hooks/${path}`, token = AUTH_TOKEN) {
  const signature = twilioSdk.getExpectedTwilioSignature(token, url, fields);
  if (token === AUTH_TOKEN) expect(twilioSdk.validateRequest(AUTH_TOKEN, signature, url, fields)).toBe(true);
  const headers = {
    'content-type': 'application/x-www-form-urlencoded',
    'x-twilio-signature': signature,
    'user-agent': 'TwilioProxy/1.1',
  };
  return hooks.send(path, new URLSearchParams(fields).toString(), headers);
}

describe('the twilio preset', () => {
  it(`takes every request (${ALL.length}), signed over the URL from Host and over publicUrl, with a short message`, async () => {
    for (const name of ALL) {
      for (const [path, url] of [
        ['twilio', undefined],
        ['twilio-public', PUBLIC_URL],
      ] as const) {
        const fields = { ...fixture(name), MessageSid: `${fixture(name).MessageSid}${path === 'twilio' ? '' : 'p'}` };
        const answer = await send(path, fields, url);
        expect(answer.status, `${name} on ${path}: ${answer.text}`).toBe(202);
        expectPresetMessage(await hooks.messageOf(answer));
      }
    }
  });

  it('writes who sent what, in a session per sender number that the status of a reply to them shares', async () => {
    const answer = await send('twilio', fixture('inbound-sms.reconstructed.json'));
    expect(answer.status).toBe(202);
    expect(answer.body.sessionKey).toBe('hook:twilio:15558675310');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'SMS from +15558675310 to +15017250604 (SAN FRANCISCO, CA, US):',
        'Hi, is my order shipping today?',
        'Message SM1f0e8ae6ade43cb3c0ce4525424e404f',
      ].join('\n'),
    );

    const failed = await send('twilio', fixture('status-undelivered.reconstructed.json'));
    expect(failed.body.sessionKey).toBe('hook:twilio:15558675310');
    expect(inner(await hooks.messageOf(failed))).toBe(
      'Message SM6a8c2d3f9b2e5f1123d4c5b6a7f8e9d0 to +15558675310 undelivered (error 30003: https://www.twilio.com/docs/api/errors/30003)',
    );
  });

  it('refuses a wrong signature, and a request signed for another URL, with 401', async () => {
    const fields = fixture('inbound-sms.reconstructed.json');
    expect((await send('twilio', fields, undefined, 'wrong-token')).status).toBe(401);
    expect((await send('twilio-public', fields, 'https://elsewhere.example.com/hooks/twilio-public')).status).toBe(401);
  });

  it('answers a redelivery of one message and status as a duplicate, and a later status of it as new', async () => {
    const sent = { ...fixture('status-delivered.reconstructed.json'), MessageSid: 'SM00000000000000000000000000000001' };
    const first = await send('twilio', { ...sent, SmsStatus: 'sent', MessageStatus: 'sent' });
    const again = await send('twilio', { ...sent, SmsStatus: 'sent', MessageStatus: 'sent' });
    const delivered = await send('twilio', sent);
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
    expect(delivered.status).toBe(202);
    expect(delivered.body.duplicate).toBeUndefined();
  });

  it('with events: [received], takes incoming messages and answers 204 to status callbacks, keeping them', async () => {
    expect((await send('twilio-inbound', fixture('inbound-mms.reconstructed.json'))).status).toBe(202);
    expect((await send('twilio-inbound', fixture('status-delivered.reconstructed.json'))).status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'twilio-inbound');
    expect(kept).toMatchObject({ status: 204, mappingId: 'twilio-inbound' });
  });
});
