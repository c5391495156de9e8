/**
 * The Stripe example: payments, failed invoices and cancelled subscriptions;
 * null for every other event type.
 */
import { describe, expect, it } from 'vitest';
import stripe, { money, type StripeEvent } from './stripe.ts';
import { context, fixture } from '../test/helpers/transform-context.ts';

const run = (payload: StripeEvent) => stripe(context(payload, { path: 'stripe' }));
const load = (type: string) => fixture<StripeEvent>(`stripe-${type}.json`);

describe('transforms/stripe.ts', () => {
  it('turns a successful payment into a wake for the next heartbeat', () => {
    expect(run(load('payment_intent.succeeded'))).toEqual({
      kind: 'wake',
      mode: 'next-heartbeat',
      text: 'Payment received: 49.00 EUR from cus_R4xYz9AbCdEf12 (pi_3QdT7bKZ9yQ2aB1c0k8Wq3Rt)',
    });
  });

  it("starts an agent run in the customer's session for a failed payment, with the reason", () => {
    expect(run(load('payment_intent.payment_failed'))).toEqual({
      sessionKey: 'hook:stripe:cus_R4xYz9AbCdEf12',
      message:
        'Payment failed: 129.00 USD from cus_R4xYz9AbCdEf12 (pi_3QdU1cKZ9yQ2aB1c1m9Xr4Su)\nReason: Your card has insufficient funds. — insufficient_funds',
    });
  });

  it('starts an agent run for a failed invoice payment, marking test-mode events', () => {
    expect(run(load('invoice.payment_failed'))).toEqual({
      sessionKey: 'hook:stripe:cus_R4xYz9AbCdEf12',
      message: [
        'Invoice payment failed [test mode]: 49.00 EUR for billing@customer.example (invoice C0FFEE-0042, attempt 2)',
        'Next attempt: 2025-11-23T09:46:40.000Z',
        'https://invoice.stripe.com/i/acct_1Abc/test_YWNjdF8xQWJj',
      ].join('\n'),
    });
  });

  it('says so when no further invoice attempt is scheduled', () => {
    const e = load('invoice.payment_failed');
    e.data.object.next_payment_attempt = null;
    expect((run(e) as { message: string }).message).toContain('\nNo further attempts are scheduled.\n');
  });

  it('starts an agent run for a cancelled subscription, with plan and reason', () => {
    expect(run(load('customer.subscription.deleted'))).toEqual({
      sessionKey: 'hook:stripe:cus_R4xYz9AbCdEf12',
      message: [
        'Subscription cancelled: sub_1QcA9bKZ9yQ2aB1cMn5Op6Qr of cus_R4xYz9AbCdEf12 (Team monthly, 49.00 EUR/month)',
        'Reason: cancellation_requested (switched_service)',
        'Comment: We moved to an in-house tool.',
      ].join('\n'),
    });
  });

  it('handles a payment without a customer or a reason', () => {
    const e = load('payment_intent.payment_failed');
    delete e.data.object.customer;
    delete e.data.object.last_payment_error;
    expect(run(e)).toEqual({ message: 'Payment failed: 129.00 USD from a guest (pi_3QdU1cKZ9yQ2aB1c1m9Xr4Su)\nReason: no reason given' });
  });

  it.each([
    ['charge.refunded', load('charge.refunded')],
    ['customer.created', { ...load('charge.refunded'), type: 'customer.created' }],
    ['invoice.paid', { ...load('invoice.payment_failed'), type: 'invoice.paid' }],
  ])('returns null for %s', (_type, event) => {
    expect(run(event)).toBeNull();
  });
});

describe('money()', () => {
  it.each([
    [4900, 'eur', '49.00 EUR'],
    [5, 'usd', '0.05 USD'],
    [1200, 'jpy', '1200 JPY'],
    [0, 'gbp', '0.00 GBP'],
  ])('%d %s → %s', (amount, currency, out) => {
    expect(money(amount, currency)).toBe(out);
  });
});
