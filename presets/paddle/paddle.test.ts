/**
 * The `paddle` preset over real HTTP (docs/presets/paddle.md), with Paddle's published examples (the
 * Node SDK's test data for every notification, fixtures/: each names its source), signed as Paddle's
 * docs describe (`Paddle-Signature: ts=<t>;h1=<hex>` over `<t>:<body>`) and each signature checked by
 * Paddle's own SDK (`@paddle/paddle-node-sdk`): every one answered 202 with a short message that is
 * not JSON; wrong signatures refused; a redelivered event a duplicate; `events` honoured.
 */
import { createHmac } from 'node:crypto';
import { Paddle } from '@paddle/paddle-node-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, presetFixtures } from '../../test/helpers/preset-fixtures.ts';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'pdl_ntfset_01gt21c5pdx9q1e4mh1xrsjjn6_zXPA8c6N7MpMmCbLcvqu3bOgMCEd3tLa';
const FIXTURES = presetFixtures(new URL('fixtures/', import.meta.url));
const fixture = (name: string): Fixture => FIXTURES.find((f) => f.name === name)!;
const sdk = new Paddle('pdl_sdbx_apikey_01gtgztp8fy6vwzqsnx9ygwc20_unusedunusedunusedunused').webhooks;

function signature(body: string, secret = SECRET): string {
  const ts = Math.floor(Date.now() / 1000);
  return `ts=${ts};h1=${createHmac('sha256', secret).update(`${ts}:${body}`).digest('hex')}`;
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'paddle', secret: SECRET },
    { name: 'paddle', path: 'paddle-failures', secret: SECRET, events: ['transaction.payment_failed', 'subscription.past_due'] },
  ]);
});
afterAll(() => hooks.close());

/** Sends the payload with a fresh event id (the SDK's examples share some), the signature checked by Paddle's SDK first. */
async function send(payload: Record<string, unknown>, path = 'paddle') {
  const body = JSON.stringify({ ...payload, event_id: `evt_${crypto.randomUUID().replace(/-/g, '')}` });
  const header = signature(body);
  expect(await sdk.isSignatureValid(body, SECRET, header)).toBe(true);
  return hooks.send(path, body, { 'content-type': 'application/json', 'paddle-signature': header });
}

describe('the paddle preset', () => {
  it.each(FIXTURES.map((f) => [`${f.name} (${f.source})`, f] as const))('takes %s', async (_name, f) => {
    const answer = await send(f.payload);
    expect(answer.status, answer.text).toBe(202);
    const message = await hooks.messageOf(answer);
    expectPresetMessage(message);
    expect(inner(message)).not.toMatch(/\[object Object\]|pdl_live_apikey|live_7d279f61/);
  });

  it('writes what happened, the amount, the items and why, in a session per customer', async () => {
    const failed = await send(fixture('transaction.payment_failed').payload);
    const content = inner(await hooks.messageOf(failed)).split('\n');
    expect(content[0]).toBe(
      'Transaction txn_01h8dzxgkvdwemdhbpcapj2tbj of 652.15 USD payment failed (status ready) for customer ctm_01h8e18bxp9hby49dnm8ewf0m0',
    );
    expect(content).toContain('Payment error: declined (visa ending 0000)');
    expect(failed.body.sessionKey).toBe('hook:paddle:ctm_01h8e18bxp9hby49dnm8ewf0m0');

    const customer = await send(fixture('customer.created').payload);
    expect(inner(await hooks.messageOf(customer))).toBe('Customer created: Sam Miller <sam@example.com> (ctm_01h8441jn5pcwrfhwh78jqt8hk)');
    expect(customer.body.sessionKey).toBe('hook:paddle:ctm_01h8441jn5pcwrfhwh78jqt8hk');
  });

  it('refuses a wrong or missing signature with 401, and answers a redelivered event as a duplicate', async () => {
    const body = JSON.stringify(fixture('customer.created').payload);
    expect(
      (await hooks.send('paddle', body, { 'content-type': 'application/json', 'paddle-signature': signature(body, 'pdl_ntfset_wrong') }))
        .status,
    ).toBe(401);
    expect((await hooks.send('paddle', body, { 'content-type': 'application/json' })).status).toBe(401);

    const event = JSON.stringify({ ...fixture('subscription.canceled').payload, event_id: 'evt_redelivered_0001' });
    const first = await hooks.send('paddle', event, { 'content-type': 'application/json', 'paddle-signature': signature(event) });
    const again = await hooks.send('paddle', event, { 'content-type': 'application/json', 'paddle-signature': signature(event) });
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [transaction.payment_failed, subscription.past_due], answers 204 to a completed transaction and keeps it', async () => {
    const answer = await send(fixture('transaction.completed').payload, 'paddle-failures');
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'paddle-failures');
    expect(kept).toMatchObject({ status: 204, mappingId: 'paddle-failures' });
  });
});
