/**
 * The `stripe` preset over real HTTP (docs/presets/stripe.md), with Stripe's published examples
 * (fixtures/: each names its source) signed by Stripe's own library (`stripe`,
 * `webhooks.generateTestHeaderString`): every one answered 202 with a short message that is not
 * JSON; wrong signatures refused; a redelivered event a duplicate; `events` honoured.
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, presetFixtures } from '../../test/helpers/preset-fixtures.ts';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'whsec_test_0123456789abcdef0123456789';
const FIXTURES = presetFixtures(new URL('fixtures/', import.meta.url));
const fixture = (name: string): Fixture => FIXTURES.find((f) => f.name === name)!;

function headers(body: string, secret = SECRET) {
  return {
    'content-type': 'application/json; charset=utf-8',
    'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  };
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'stripe', secret: SECRET },
    { name: 'stripe', path: 'stripe-billing', secret: SECRET, events: ['invoice.paid', 'invoice.payment_failed'] },
  ]);
});
afterAll(() => hooks.close());

/** Sends the payload with a fresh event id, so fixtures sharing Stripe's example id are not duplicates. */
async function send(payload: Record<string, unknown>, path = 'stripe') {
  const body = JSON.stringify({ ...payload, id: `evt_${crypto.randomUUID().replace(/-/g, '')}` });
  return hooks.send(path, body, headers(body));
}

describe('the stripe preset', () => {
  it.each(FIXTURES.map((f) => [`${f.name} (${f.source})`, f] as const))('takes %s', async (_name, f) => {
    const answer = await send(f.payload);
    expect(answer.status, answer.text).toBe(202);
    const message = await hooks.messageOf(answer);
    expectPresetMessage(message);
    expect(inner(message)).not.toContain('[object Object]');
  });

  it('writes what happened, to whom, and the link, in a session per customer', async () => {
    const charge = await send(fixture('charge.succeeded.assembled').payload);
    expect(inner(await hooks.messageOf(charge))).toBe(
      [
        'Charge of 1.00 USD succeeded for Jenny Rosen',
        'My First Test Charge (created for API docs)',
        'Card: visa ending 4242',
        'https://dashboard.stripe.com/test/payments/ch_1PgafuB7WZ01zgkWXYmPNZs8',
      ].join('\n'),
    );
    // no customer on the charge: its session is the payment's
    expect(charge.body.sessionKey).toBe('hook:stripe:ch_1PgafuB7WZ01zgkWXYmPNZs8');

    const subscription = await send(fixture('customer.subscription.created.assembled').payload);
    const invoice = await send(fixture('invoice.created.assembled').payload);
    expect(subscription.body.sessionKey).toBe('hook:stripe:cus_QXg1o8vcGmoR32');
    expect(invoice.body.sessionKey).toBe('hook:stripe:cus_QXg1o8vcGmoR32');
    expect(inner(await hooks.messageOf(invoice)).split('\n')[0]).toBe(
      'Invoice in_1Pgc6tB7WZ01zgkWu9fdqL6I of 10.00 USD created for cus_QXg1o8vcGmoR32 (status draft)',
    );
  });

  it('gives an event type it has no message for a summary and the link to the event', async () => {
    const answer = await hooks.send(
      'stripe',
      JSON.stringify(fixture('plan.created').payload),
      headers(JSON.stringify(fixture('plan.created').payload)),
    );
    const content = inner(await hooks.messageOf(answer)).split('\n');
    expect(content[0]).toBe('Stripe event "plan.created" for plan price_1PgafmB7WZ01zgkW6dKueIc5');
    expect(content).toContain('amount: 2000');
    expect(content.at(-1)).toBe('https://dashboard.stripe.com/test/events/evt_1Pgc76B7WZ01zgkWwyRHS12y');
  });

  it('refuses a wrong or missing signature with 401, and answers a redelivered event as a duplicate', async () => {
    const body = JSON.stringify(fixture('customer.created.assembled').payload);
    expect((await hooks.send('stripe', body, headers(body, 'whsec_wrong'))).status).toBe(401);
    const { 'stripe-signature': _s, ...unsigned } = headers(body);
    expect((await hooks.send('stripe', body, unsigned)).status).toBe(401);

    const event = JSON.stringify({ ...fixture('payout.created.assembled').payload, id: 'evt_redelivered_0001' });
    const first = await hooks.send('stripe', event, headers(event));
    // Stripe signs each delivery afresh; the event id is what repeats
    const again = await hooks.send('stripe', event, headers(event));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('on a second path with events: [invoice.paid, invoice.payment_failed], answers 204 to a new customer and keeps it', async () => {
    const answer = await send(fixture('customer.created.assembled').payload, 'stripe-billing');
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'stripe-billing');
    expect(kept).toMatchObject({ status: 204, mappingId: 'stripe-billing' });
  });
});
