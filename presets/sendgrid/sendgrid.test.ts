/**
 * The `sendgrid` preset over real HTTP, with the examples of SendGrid's Event Webhook Reference
 * (fixtures/SOURCES.md) and the batches SendGrid's own library tests with, signed as SendGrid's
 * Signed Event Webhook does (ECDSA P-256 over the timestamp and the body, base64 DER; the service
 * has SendGrid's verification key, base64 DER) with a key made here, each signature checked by
 * SendGrid's own verifier (`@sendgrid/eventwebhook`) before it is sent: one message per batch,
 * urgent events first; wrong signatures refused; a redelivered batch a duplicate.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (name: string): Record<string, unknown>[] => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const ALL = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));

// the batches of @sendgrid/eventwebhook's src/eventwebhook.spec.js, byte for byte (one event per line, CRLF)
const SDK_SINGLE = `${JSON.stringify([
  {
    email: 'hello@world.com',
    event: 'dropped',
    reason: 'Bounced Address',
    sg_event_id: 'ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA',
    sg_message_id: 'LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0',
    'smtp-id': '<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>',
    timestamp: 1600112492,
  },
])}\r\n`;
const SDK_MULTIPLE = `${JSON.stringify([
  {
    email: 'invalid@gmail.com',
    event: 'processed',
    send_at: 0,
    sg_event_id: 'cHJvY2Vzc2VkLTE5OTQyMTEyLXFOd0JMZ1BRUWpXNkRKdktRd1NBYnctMA',
    sg_message_id: 'qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0',
    'smtp-id': '<qNwBLgPQQjW6DJvKQwSAbw@ismtpd0178p1mdw1.sendgrid.net>',
    timestamp: 1619651146,
  },
  {
    email: 'invalid@gmail.com',
    event: 'bounce',
    ip: '167.89.101.76',
    reason:
      '552 5.2.2 The email account that you tried to reach is over quota and inactive. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaPerm c17si1130468pgv.34 - gsmtp',
    sg_event_id: 'Ym91bmNlLTAtMTk5NDIxMTItcU53QkxnUFFRalc2REp2S1F3U0Fidy0w',
    sg_message_id: 'qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0',
    'smtp-id': '<qNwBLgPQQjW6DJvKQwSAbw@ismtpd0178p1mdw1.sendgrid.net>',
    status: '5.2.2',
    timestamp: 1619651147,
    tls: 1,
    type: 'blocked',
  },
])
  .split('},{')
  .join('},\r\n{')}\r\n`;

const keys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
/** The verification key as SendGrid shows it: base64 of the DER SubjectPublicKeyInfo. */
const PUBLIC_KEY = keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

/** SendGrid's headers for `body`: the signature over timestamp + body, checked by SendGrid's verifier when made with our key. */
function headers(body: string, privateKey = keys.privateKey): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign('sha256', Buffer.from(timestamp + body), privateKey).toString('base64');
  if (privateKey === keys.privateKey) {
    const ew = new EventWebhook();
    expect(ew.verifySignature(ew.convertPublicKeyToECDSA(PUBLIC_KEY), body, signature, timestamp)).toBe(true);
  }
  return {
    'content-type': 'application/json',
    'x-twilio-email-event-webhook-signature': signature,
    'x-twilio-email-event-webhook-timestamp': timestamp,
    'user-agent': 'SendGrid Event API',
  };
}

/** A published example with its own delivery id: SendGrid's pages reuse event ids between examples. */
const delivered = (events: Record<string, unknown>[], tag: string) =>
  JSON.stringify(events.map((e, i) => ({ ...e, sg_event_id: `${String(e.sg_event_id)}-${tag}-${i}` })));

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([{ name: 'sendgrid', publicKey: PUBLIC_KEY }]);
});
afterAll(() => hooks.close());

describe('the sendgrid preset', () => {
  it(`takes every published example (${ALL.length}) and SendGrid's own test batches, one short message each`, async () => {
    for (const name of ALL) {
      const body = delivered(fixture(name), name);
      const answer = await hooks.send('sendgrid', body, headers(body));
      expect(answer.status, `${name}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
    for (const body of [SDK_SINGLE, SDK_MULTIPLE]) {
      const answer = await hooks.send('sendgrid', body, headers(body));
      expect(answer.status, answer.text).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it("writes one event as a sentence in the recipient's session, and a batch as a line per event, urgent first", async () => {
    const body = delivered(fixture('bounce.json'), 'exact');
    const one = await hooks.send('sendgrid', body, headers(body));
    expect(one.body.sessionKey).toBe('hook:sendgrid:alex_example.com');
    expect(inner(await hooks.messageOf(one))).toBe(
      [
        'Email to alex@example.com bounced: 500 unknown recipient (Invalid Address, 5.0.0)',
        'Category: cat facts',
        'Message 14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
      ].join('\n'),
    );

    const mixed = delivered(
      [...fixture('open.json'), ...fixture('click.json'), ...fixture('spamreport.json'), ...fixture('delivered.json')],
      'mix',
    );
    const many = await hooks.send('sendgrid', mixed, headers(mixed));
    expect(many.body.sessionKey).toBe('hook:sendgrid');
    expect(inner(await hooks.messageOf(many))).toBe(
      [
        'SendGrid: 4 email events (1 open, 1 click, 1 spam report, 1 delivered)',
        '- alex@example.com reported an email as spam',
        '- alex@example.com opened an email',
        '- email@example.com clicked a link in an email: http://example.com/blog/news.html',
        '- Email to alex@example.com delivered: 250 OK',
      ].join('\n'),
    );
  });

  it('lists at most 20 events of a large batch and counts the rest', async () => {
    const opens = Array.from({ length: 120 }, (_, i) => ({ ...fixture('open.json')[0], email: `reader${i}@example.com` }));
    const body = delivered(opens, 'large');
    const answer = await hooks.send('sendgrid', body, headers(body));
    const content = inner(await hooks.messageOf(answer));
    expect(content.split('\n')[0]).toBe('SendGrid: 120 email events (120 opens)');
    expect(content).toContain('(100 more events not listed)');
    expectPresetMessage(await hooks.messageOf(answer));
  });

  it('refuses a batch signed with another key with 401, and answers a redelivered batch as a duplicate', async () => {
    const body = delivered(fixture('dropped.json'), 'again');
    expect((await hooks.send('sendgrid', body, headers(body, other.privateKey))).status).toBe(401);
    const first = await hooks.send('sendgrid', body, headers(body));
    const again = await hooks.send('sendgrid', body, headers(body));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });
});
