/**
 * The `paddle` preset's messages (docs/presets/paddle.md), Paddle Billing's notifications: one per
 * common event type — what happened to which transaction, subscription or customer, the amount, the
 * items, why a payment failed — and a summary for the others. One session per customer.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, money, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const words = (s: string): string => s.replace(/[._]/g, ' ');
const action = (type: string): string => words(type.slice(type.lastIndexOf('.') + 1));
/** An ISO time as its date. */
const day = (v: unknown): string => (/^\d{4}-\d{2}-\d{2}/.test(str(v)) ? str(v).slice(0, 10) : '');

interface Said {
  text: string;
  key?: string;
}

export default function paddle(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const type = ctx.event || str(p.event_type);
  const d = obj(p.data);
  const [kind = ''] = type.split('.');
  const said = (MESSAGES[kind] ?? generic)(type, d);
  const customer = str(d.customer_id) || (kind === 'customer' ? str(d.id) : '');
  return result(ctx, said.text, said.key ?? (customer ? sessionKey('hook:paddle', customer) : undefined));
}

/** A price's items as `- name × quantity at price / interval`, at most five. */
function items(d: Obj): string[] {
  const all = list(d.items);
  const shown = all.slice(0, 5).map((item) => {
    const price = obj(item.price);
    const unit = obj(price.unit_price);
    const cycle = obj(price.billing_cycle);
    const name = str(obj(item.product).name) || str(price.name) || str(price.description) || str(price.id);
    const amount = money(unit.amount, unit.currency_code);
    return `- ${oneLine(name, 80)} × ${str(item.quantity) || '1'}${amount ? ` at ${amount}` : ''}${str(cycle.interval) ? ` / ${str(cycle.interval)}` : ''}`;
  });
  return all.length > 5 ? [...shown, `(${all.length - 5} more items)`] : shown;
}

const TRANSACTION_VERBS: Record<string, string> = {
  completed: 'completed',
  paid: 'paid',
  payment_failed: 'payment failed',
  past_due: 'is past due',
  billed: 'billed',
  canceled: 'canceled',
};

function transaction(type: string, d: Obj): Said {
  const totals = obj(obj(d.details).totals);
  const total = money(totals.grand_total ?? totals.total, totals.currency_code ?? d.currency_code);
  const event = type.slice('transaction.'.length);
  // the payments list keeps earlier attempts: an error is news only while the transaction is unpaid
  const failing = event === 'payment_failed' || event === 'past_due';
  const failed = failing ? list(d.payments).find((pay) => str(pay.status) === 'error' || str(pay.error_code)) : undefined;
  const card = obj(obj(obj(failed).method_details).card);
  return {
    text: lines(
      `Transaction ${str(d.id)}${total ? ` of ${total}` : ''} ${TRANSACTION_VERBS[event] ?? words(event)} (status ${words(str(d.status))})${str(d.customer_id) ? ` for customer ${str(d.customer_id)}` : ''}`,
      ...items(d),
      str(d.invoice_number) && `Invoice ${str(d.invoice_number)}`,
      str(d.subscription_id) && `Subscription: ${str(d.subscription_id)}`,
      failed &&
        `Payment error: ${words(str(obj(failed).error_code)) || 'unknown'}${str(card.last4) ? ` (${str(card.type)} ending ${str(card.last4)})` : ''}`,
    ),
  };
}

function subscription(type: string, d: Obj): Said {
  const change = obj(d.scheduled_change);
  return {
    text: lines(
      `Subscription ${str(d.id)} ${action(type)} for customer ${str(d.customer_id)}: status ${words(str(d.status))}`,
      ...items(d),
      day(d.next_billed_at) && `Next billed ${day(d.next_billed_at)}`,
      str(change.action) && `Scheduled: ${words(str(change.action))} on ${day(change.effective_at)}`,
      day(d.canceled_at) && `Canceled ${day(d.canceled_at)}`,
      day(d.paused_at) && `Paused ${day(d.paused_at)}`,
    ),
  };
}

function customer(type: string, d: Obj): Said {
  const who = [oneLine(d.name, 80), str(d.email) && `<${oneLine(d.email, 120)}>`].filter(Boolean).join(' ');
  return { text: `Customer ${action(type)}: ${who ? `${who} ` : ''}(${str(d.id)})` };
}

function adjustment(type: string, d: Obj): Said {
  const totals = obj(d.totals);
  return {
    text: lines(
      `${words(str(d.action)) || 'Adjustment'} of ${money(totals.total, totals.currency_code ?? d.currency_code)} ${action(type)} on transaction ${str(d.transaction_id)} (status ${words(str(d.status))})`.replace(
        /^./,
        (c) => c.toUpperCase(),
      ),
      str(d.reason) && `Reason: ${oneLine(d.reason)}`,
    ),
  };
}

function payout(type: string, d: Obj): Said {
  return {
    text: `Payout ${str(d.id)} of ${money(d.amount, d.currency_code)} ${action(type)} (status ${words(str(d.status))})`,
    key: sessionKey('hook:paddle', 'payouts'),
  };
}

/** An event without a message of its own: its type, what it is about, and a summary of its data. */
function generic(type: string, d: Obj): Said {
  const { id: _i, custom_data: _c, key: _k, token: _t, ...rest } = d;
  return {
    text: lines(`Paddle event "${oneLine(type, 80) || 'unnamed'}"${str(d.id) ? ` for ${str(d.id)}` : ''}`, summarize(rest)),
  };
}

const MESSAGES: Record<string, (type: string, d: Obj) => Said> = {
  transaction,
  subscription,
  customer,
  adjustment,
  payout,
};
