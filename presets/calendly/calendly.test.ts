/**
 * The `calendly` preset over real HTTP (docs/presets/calendly.md), with examples rebuilt from the
 * fields Calendly's API reference documents (fixtures/: each names its source; Calendly publishes no
 * whole delivery to copy), signed as Calendly documents (`Calendly-Webhook-Signature: t=<t>,v1=<hex>`,
 * the HMAC-SHA256 of `<t>.` and the body with the subscription's signing key): every one answered 202
 * with a short message that is not JSON and shows no cancel or reschedule link; wrong signatures
 * refused; a retried delivery a duplicate; `events` honoured.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, presetFixtures } from '../../test/helpers/preset-fixtures.ts';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'calendly-signing-key-0123456789';
const FIXTURES = presetFixtures(new URL('fixtures/', import.meta.url));
const fixture = (name: string): Fixture => FIXTURES.find((f) => f.name === name)!;

function headers(body: string, secret = SECRET) {
  const t = Math.floor(Date.now() / 1000);
  return {
    'content-type': 'application/json',
    'calendly-webhook-signature': `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`,
  };
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'calendly', secret: SECRET },
    { name: 'calendly', path: 'calendly-bookings', secret: SECRET, events: ['invitee.created'] },
  ]);
});
afterAll(() => hooks.close());

const send = (payload: unknown, path = 'calendly') => {
  const body = JSON.stringify(payload);
  return hooks.send(path, body, headers(body));
};

describe('the calendly preset', () => {
  it.each(FIXTURES.map((f) => [`${f.name} (${f.source})`, f] as const))('takes %s', async (_name, f) => {
    const answer = await send(f.payload);
    expect(answer.status, answer.text).toBe(202);
    const message = await hooks.messageOf(answer);
    expectPresetMessage(message);
    expect(inner(message)).not.toMatch(/\[object Object\]|cancellations\/|reschedulings\//);
  });

  it('writes who booked which meeting, when, where and what they answered; its cancellation shares the session', async () => {
    // sent with a later created_at: the fixture above was this booking's first delivery
    const booked = await send({ ...fixture('invitee.created.reconstructed').payload, created_at: '2020-11-23T17:51:20.000000Z' });
    expect(inner(await hooks.messageOf(booked))).toBe(
      [
        'John Doe <test@example.com> booked "15 Minute Meeting" on 2019-08-24 14:15 UTC',
        'With: John Smith',
        "Invitee's time zone: America/New_York",
        'https://calendly.zoom.us/j/123456789',
        'Q: What would you like to discuss?',
        'A: The renewal of our contract and the new seats.',
      ].join('\n'),
    );
    const canceled = await send({ ...fixture('invitee.canceled.reconstructed').payload, created_at: '2020-11-24T09:00:02.000000Z' });
    expect(booked.body.sessionKey).toBe('hook:calendly:GBGBDCAADAEDCRZ2');
    expect(canceled.body.sessionKey).toBe(booked.body.sessionKey);
  });

  it('refuses a wrong or missing signature with 401, and answers a retried delivery as a duplicate', async () => {
    const payload = { ...fixture('invitee_no_show.created.reconstructed').payload, created_at: '2019-08-24T14:40:09.000000Z' };
    const body = JSON.stringify(payload);
    expect((await hooks.send('calendly', body, headers(body, 'not-the-key'))).status).toBe(401);
    expect((await hooks.send('calendly', body, { 'content-type': 'application/json' })).status).toBe(401);
    // Calendly signs each attempt afresh; the body is what repeats
    const first = await send(payload);
    const again = await send(payload);
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [invitee.created], answers 204 to a cancellation and keeps it', async () => {
    const answer = await send(fixture('invitee.canceled.reconstructed').payload, 'calendly-bookings');
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'calendly-bookings');
    expect(kept).toMatchObject({ status: 204, mappingId: 'calendly-bookings' });
  });
});
