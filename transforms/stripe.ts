/**
 * Stripe events → agent runs for what needs a follow-up, wakes for good news.
 *
 * Mapping (the Stripe endpoint posts to /hooks/stripe):
 *
 *   { id: 'stripe', match: { path: 'stripe' }, name: 'Stripe',
 *     verify: { type: 'stripe', secret: '${STRIPE_WEBHOOK_SECRET}' },
 *     transform: { module: 'stripe.ts' } }
 *
 * - payment_intent.succeeded: a wake for the next heartbeat;
 * - payment_intent.payment_failed, invoice.payment_failed: an agent run, one
 *   session per customer, so repeated failures of one customer stay together;
 * - customer.subscription.deleted: an agent run in the customer's session;
 * - every other event type: null, 204.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';

/** Currencies whose amounts Stripe gives in whole units, not cents. */
const ZERO_DECIMAL = new Set([
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'ugx',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
]);

export interface StripeEvent {
  id: string;
  type: string;
  livemode: boolean;
  // the object differs by event type; each case below reads the fields it needs
  // biome-ignore lint/suspicious/noExplicitAny: Stripe's objects differ per event type; the example reads them loosely
  data: { object: Record<string, any> };
}

export default function stripe(ctx: TransformContext<StripeEvent>): TransformResult {
  const { type, livemode, data } = ctx.payload;
  const o = data.object;
  const mode = livemode ? '' : ' [test mode]';
  const session = (customer: unknown) => (typeof customer === 'string' ? { sessionKey: `hook:stripe:${customer}` } : {});

  switch (type) {
    case 'payment_intent.succeeded':
      return {
        kind: 'wake',
        mode: 'next-heartbeat',
        text: `Payment received${mode}: ${money(o.amount_received ?? o.amount, o.currency)} from ${o.customer ?? 'a guest'} (${o.id})`,
      };
    case 'payment_intent.payment_failed': {
      const err = o.last_payment_error ?? {};
      const reason = [err.message, err.decline_code ?? err.code].filter(Boolean).join(' — ') || 'no reason given';
      return {
        ...session(o.customer),
        message: `Payment failed${mode}: ${money(o.amount, o.currency)} from ${o.customer ?? 'a guest'} (${o.id})\nReason: ${reason}`,
      };
    }
    case 'invoice.payment_failed':
      return {
        ...session(o.customer),
        message: [
          `Invoice payment failed${mode}: ${money(o.amount_due, o.currency)} for ${o.customer_email ?? o.customer} (invoice ${o.number ?? o.id}, attempt ${o.attempt_count})`,
          o.next_payment_attempt
            ? `Next attempt: ${new Date(o.next_payment_attempt * 1000).toISOString()}`
            : 'No further attempts are scheduled.',
          o.hosted_invoice_url,
        ]
          .filter(Boolean)
          .join('\n'),
      };
    case 'customer.subscription.deleted': {
      const plan = o.items?.data?.[0]?.price;
      const why = o.cancellation_details ?? {};
      return {
        ...session(o.customer),
        message: [
          `Subscription cancelled${mode}: ${o.id} of ${o.customer}${plan ? ` (${plan.nickname ?? plan.id}, ${money(plan.unit_amount, plan.currency)}/${plan.recurring?.interval ?? 'period'})` : ''}`,
          why.reason ? `Reason: ${why.reason}${why.feedback ? ` (${why.feedback})` : ''}` : '',
          why.comment ? `Comment: ${why.comment}` : '',
        ]
          .filter(Boolean)
          .join('\n'),
      };
    }
    default:
      return null;
  }
}

/** `4900, "eur"` → `49.00 EUR`; `1200, "jpy"` → `1200 JPY`. */
export function money(amount: number, currency: string): string {
  const c = String(currency ?? '').toLowerCase();
  return ZERO_DECIMAL.has(c) ? `${amount} ${c.toUpperCase()}` : `${(amount / 100).toFixed(2)} ${c.toUpperCase()}`;
}
