/**
 * The `stripe` preset's messages (docs/presets/stripe.md): one per common event type — what happened
 * to which payment, invoice or subscription, for which customer, the amount, the link to the
 * Dashboard — and a summary for the others. One session per customer; a payment, dispute or refund
 * of no known customer keeps one session per payment.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, money, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const words = (s: string): string => s.replace(/[._]/g, ' ');
/** An id whether the field holds it or the expanded object. */
const idOf = (v: unknown): string => str(v) || str(obj(v).id);

/** A Unix time in seconds as a date. */
const day = (v: unknown): string => (typeof v === 'number' && v > 0 ? new Date(v * 1000).toISOString().slice(0, 10) : '');

interface Said {
  text: string;
  key?: string;
}

interface Event {
  type: string;
  o: Obj;
  /** The Dashboard's address for this mode: `https://dashboard.stripe.com/test/`. */
  dash: string;
  previous: Obj;
}

export default function stripe(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const data = obj(p.data);
  const type = ctx.event || str(p.type);
  const e: Event = {
    type,
    o: obj(data.object),
    dash: `https://dashboard.stripe.com/${p.livemode === true ? '' : 'test/'}`,
    previous: obj(data.previous_attributes),
  };
  const said = (MESSAGES.find(([prefix]) => type.startsWith(prefix))?.[1] ?? generic)(e);
  const account = str(p.account) ? `(connected account ${str(p.account)})` : '';
  const link = `${e.dash}events/${str(p.id)}`;
  const text = lines(said.text, account, str(p.id) && !/https:\/\//.test(said.text) ? link : '');
  return result(ctx, text, said.key ?? sessionKey('hook:stripe', customerOf(e.o) || str(e.o.id) || str(p.id)));
}

/** The customer the object belongs to: its id, or the object itself when it is a customer. */
function customerOf(o: Obj): string {
  return str(o.object) === 'customer' ? str(o.id) : idOf(o.customer);
}

/** Who paid or is billed: a name and email when the object carries them, else the customer id. */
function who(o: Obj): string {
  const details = obj(o.customer_details ?? o.billing_details);
  const expanded = obj(o.customer);
  const name = str(details.name) || str(o.customer_name) || str(expanded.name) || (str(o.object) === 'customer' ? str(o.name) : '');
  const email = str(details.email) || str(o.receipt_email) || str(o.customer_email) || str(expanded.email) || str(o.email);
  const person = [oneLine(name, 80), email && `<${oneLine(email, 120)}>`].filter(Boolean).join(' ');
  const id = customerOf(o);
  return person && id ? `${person} (${id})` : person || id;
}

const forWho = (o: Obj): string => (who(o) ? ` for ${who(o)}` : '');
const of = (o: Obj, key = 'amount'): string => (money(o[key], o.currency) ? ` of ${money(o[key], o.currency)}` : '');
const action = (type: string): string => words(type.slice(type.lastIndexOf('.') + 1));
/** The fields a `*.updated` event changed, by name. */
const changed = (e: Event): string | false => Object.keys(e.previous).length > 0 && `Changed: ${Object.keys(e.previous).join(', ')}`;
/** A session for the payment a charge, refund or dispute belongs to, when no customer is known. */
const paymentKey = (o: Obj): string => sessionKey('hook:stripe', idOf(o.customer) || idOf(o.payment_intent) || idOf(o.charge) || str(o.id));

const PAYMENT_VERBS: Record<string, string> = {
  succeeded: 'succeeded',
  payment_failed: 'failed',
  canceled: 'was canceled',
  processing: 'is processing',
  requires_action: 'needs the customer to act',
  amount_capturable_updated: 'is ready to capture',
  partially_funded: 'is partially funded',
};

function paymentIntent(e: Event): Said {
  const { o } = e;
  const verb = PAYMENT_VERBS[e.type.slice('payment_intent.'.length)] ?? action(e.type);
  const error = obj(o.last_payment_error);
  const code = str(error.decline_code) || str(error.code);
  return {
    text: lines(
      `Payment${of(o)} ${verb}${forWho(o)}`,
      oneLine(o.description),
      e.type === 'payment_intent.payment_failed' && str(error.message) && `Reason: ${oneLine(error.message)}${code ? ` (${code})` : ''}`,
      e.type === 'payment_intent.canceled' && str(o.cancellation_reason) && `Reason: ${words(str(o.cancellation_reason))}`,
      `${e.dash}payments/${str(o.id)}`,
    ),
    key: paymentKey(o),
  };
}

function charge(e: Event): Said {
  const { o } = e;
  const card = obj(obj(o.payment_method_details).card);
  const refunded = e.type === 'charge.refunded' ? ` (${money(o.amount_refunded, o.currency)} refunded in all)` : '';
  return {
    text: lines(
      `Charge${of(o)} ${action(e.type)}${refunded}${forWho(o)}`,
      oneLine(o.description),
      str(card.last4) && `Card: ${str(card.brand)} ending ${str(card.last4)}`,
      str(o.failure_message) && `Reason: ${oneLine(o.failure_message)}${str(o.failure_code) ? ` (${str(o.failure_code)})` : ''}`,
      `${e.dash}payments/${idOf(o.payment_intent) || str(o.id)}`,
    ),
    key: paymentKey(o),
  };
}

function dispute(e: Event): Said {
  const { o } = e;
  const due = day(obj(o.evidence_details).due_by);
  return {
    text: lines(
      `Dispute${of(o)} ${action(e.type)} on charge ${idOf(o.charge)}: reason ${words(str(o.reason))}, status ${words(str(o.status))}`,
      due && !['won', 'lost'].includes(str(o.status)) && `Evidence due by ${due}`,
      `${e.dash}payments/${idOf(o.payment_intent) || idOf(o.charge)}`,
    ),
    key: paymentKey(o),
  };
}

function refund(e: Event): Said {
  const { o } = e;
  return {
    text: lines(
      `Refund${of(o)} ${action(e.type)}, status ${words(str(o.status))}, on ${idOf(o.payment_intent) ? `payment ${idOf(o.payment_intent)}` : `charge ${idOf(o.charge)}`}`,
      str(o.reason) && `Reason: ${words(str(o.reason))}`,
    ),
    key: paymentKey(o),
  };
}

function checkout(e: Event): Said {
  const { o } = e;
  const total = money(o.amount_total, o.currency);
  return {
    text: lines(
      `Checkout session ${action(e.type)}${total ? `: ${total}` : ''}${forWho(o)} (${str(o.mode)} mode, payment ${words(str(o.payment_status))})`,
      str(o.client_reference_id) && `Reference: ${oneLine(o.client_reference_id, 120)}`,
      idOf(o.subscription) && `Subscription: ${idOf(o.subscription)}`,
      idOf(o.payment_intent) && `${e.dash}payments/${idOf(o.payment_intent)}`,
    ),
    key: sessionKey('hook:stripe', idOf(o.customer) || idOf(o.payment_intent) || str(o.id)),
  };
}

function customer(e: Event): Said {
  const { o } = e;
  return {
    text: lines(`Customer ${action(e.type)}: ${who(o)}`, changed(e), e.type !== 'customer.deleted' && `${e.dash}customers/${str(o.id)}`),
  };
}

/** A subscription's items as `product × quantity at price / interval`. */
function items(o: Obj): string[] {
  const list = Array.isArray(obj(o.items).data) ? (obj(o.items).data as unknown[]) : [];
  return list.slice(0, 5).map((it) => {
    const item = obj(it);
    const price = obj(item.price);
    const recurring = obj(price.recurring);
    const product = str(price.nickname) || str(obj(price.product).name) || idOf(price.product);
    const amount = money(price.unit_amount, price.currency);
    return `- ${oneLine(product, 80)} × ${str(item.quantity) || '1'}${amount ? ` at ${amount}` : ''}${str(recurring.interval) ? ` / ${str(recurring.interval)}` : ''}`;
  });
}

function subscription(e: Event): Said {
  const { o } = e;
  const was = str(e.previous.status);
  const status = was && was !== str(o.status) ? `${words(was)} → ${words(str(o.status))}` : words(str(o.status));
  return {
    text: lines(
      `Subscription ${str(o.id)} ${action(e.type)}${forWho(o)}: status ${status}`,
      ...items(o),
      e.type.endsWith('trial_will_end') && day(o.trial_end) && `Trial ends ${day(o.trial_end)}`,
      o.cancel_at_period_end === true && day(o.current_period_end) && `Cancels at period end (${day(o.current_period_end)})`,
      changed(e),
      `${e.dash}subscriptions/${str(o.id)}`,
    ),
  };
}

function invoice(e: Event): Said {
  const { o } = e;
  const lineItems = Array.isArray(obj(o.lines).data) ? (obj(o.lines).data as unknown[]).map(obj) : [];
  const failed = e.type === 'invoice.payment_failed';
  return {
    text: lines(
      `Invoice ${str(o.number) || str(o.id)}${of(o, 'amount_due')} ${action(e.type)}${forWho(o)} (status ${words(str(o.status))})`,
      ...lineItems.slice(0, 5).map((l) => `- ${oneLine(l.description, 100)}: ${money(l.amount, l.currency)}`),
      lineItems.length > 5 && `(${lineItems.length - 5} more lines)`,
      failed &&
        `Attempt ${str(o.attempt_count)}${day(o.next_payment_attempt) ? `, next attempt ${day(o.next_payment_attempt)}` : ', no further attempt'}`,
      day(o.due_date) && !['paid', 'void'].includes(str(o.status)) && `Due ${day(o.due_date)}`,
      str(o.hosted_invoice_url) || `${e.dash}invoices/${str(o.id)}`,
    ),
  };
}

function payout(e: Event): Said {
  const { o } = e;
  return {
    text: lines(
      `Payout${of(o)} ${action(e.type)}, status ${words(str(o.status))}${day(o.arrival_date) ? `, arriving ${day(o.arrival_date)}` : ''}`,
      str(o.failure_message) && `Reason: ${oneLine(o.failure_message)}`,
      `${e.dash}payouts/${str(o.id)}`,
    ),
    key: sessionKey('hook:stripe', 'payouts'),
  };
}

function fraudWarning(e: Event): Said {
  const { o } = e;
  return {
    text: `Early fraud warning ${action(e.type)} on charge ${idOf(o.charge)}: ${words(str(o.fraud_type))}${o.actionable === true ? ' (actionable: refund it to avoid a dispute)' : ''}`,
    key: paymentKey(o),
  };
}

/** An event without a message of its own: its type, the object it is about, and a summary of the object. */
function generic(e: Event): Said {
  const { o } = e;
  const { object: _o, id: _i, livemode: _l, metadata: _m, client_secret: _c, ...rest } = o;
  return {
    text: lines(
      `Stripe event "${oneLine(e.type, 80) || 'unnamed'}"${str(o.object) ? ` for ${words(str(o.object))} ${str(o.id)}` : ''}`,
      changed(e),
      summarize(rest),
    ),
  };
}

// The first prefix that matches wins: `charge.dispute.` and `charge.refund.` before `charge.`.
const MESSAGES: [string, (e: Event) => Said][] = [
  ['payment_intent.', paymentIntent],
  ['charge.dispute.', dispute],
  ['charge.refund.', refund],
  ['charge.', charge],
  ['refund.', refund],
  ['checkout.session.', checkout],
  ['customer.subscription.', subscription],
  ['customer.created', customer],
  ['customer.updated', customer],
  ['customer.deleted', customer],
  ['invoice.', invoice],
  ['payout.', payout],
  ['radar.early_fraud_warning.', fraudWarning],
];
