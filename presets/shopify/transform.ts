/**
 * The `shopify` preset's messages (docs/presets/shopify.md): orders, refunds, fulfillments, disputes,
 * customers, products, inventory and abandoned checkouts, each with what happened, who, the amounts and
 * the link into the shop's admin; a summary for the other topics. One session per order (its refunds,
 * fulfillments and disputes too), per customer, per product.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const words = (s: string): string => s.replace(/[._/]/g, ' ');

/**
 * A resource's id, exact: Shopify's ids can pass 2^53, which a JSON number cannot hold, so the id at
 * the end of `admin_graphql_api_id` is preferred.
 */
const idOf = (o: Obj): string => /\/(\d+)(\?|$)/.exec(str(o.admin_graphql_api_id))?.[1] ?? str(o.id);
/** An order's admin path from an `order_id` number, unless it is too large to be exact. */
const orderPath = (id: unknown): string => (typeof id === 'number' && !Number.isSafeInteger(id) ? '' : `orders/${str(id)}`);

interface Shop {
  domain: string;
  admin: (path: string) => string;
  key: (...parts: string[]) => string;
}

interface Said {
  text: string;
  key?: string;
}

export default function shopify(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const topic = ctx.event || ctx.headers['x-shopify-topic'] || '';
  const domain = oneLine(ctx.headers['x-shopify-shop-domain'], 120);
  const shop: Shop = {
    domain,
    admin: (path) => (/^[a-z0-9][a-z0-9.-]*$/i.test(domain) ? `https://${domain}/admin/${path}` : ''),
    key: (...parts) => sessionKey('hook:shopify', domain || 'shop', ...parts),
  };
  const [resource = ''] = topic.split('/');
  const said = (MESSAGES[resource] ?? generic)(topic, p, shop);
  return result(ctx, said.text, said.key);
}

const PAST: Record<string, string> = { create: 'created', update: 'updated', delete: 'deleted' };
/** The topic's verb as done: `orders/create` → `created`, `orders/partially_fulfilled` → `partially fulfilled`. */
const action = (topic: string): string => {
  const verb = topic.slice(topic.indexOf('/') + 1);
  return PAST[verb] ?? words(verb);
};
const person = (c: Obj): string => {
  const name = [str(c.first_name), str(c.last_name)].filter(Boolean).join(' ');
  return [oneLine(name, 80), str(c.email) && `<${oneLine(c.email, 120)}>`].filter(Boolean).join(' ');
};
const price = (amount: unknown, currency: unknown): string =>
  str(amount) ? `${str(amount)}${str(currency) ? ` ${str(currency)}` : ''}` : '';

/** Line items as `- 2 × Title (variant) at 199.00`, at most ten. */
function items(o: Obj, currency: unknown): string[] {
  const all = list(o.line_items);
  const shown = all.slice(0, 10).map((l) => {
    const variant = str(l.variant_title) ? ` (${oneLine(l.variant_title, 60)})` : '';
    return `- ${str(l.quantity) || '1'} × ${oneLine(l.title ?? l.name, 100)}${variant}${str(l.price) ? ` at ${price(l.price, currency)}` : ''}`;
  });
  return all.length > 10 ? [...shown, `(${all.length - 10} more items)`] : shown;
}

function order(topic: string, o: Obj, shop: Shop): Said {
  const id = idOf(o);
  const name = str(o.name) || `#${str(o.order_number) || id}`;
  const who = person(obj(o.customer)) || oneLine(o.contact_email ?? o.email, 120);
  const ship = obj(o.shipping_address);
  const where = [str(ship.city), str(ship.country_code) || str(ship.country)].filter(Boolean).join(', ');
  const status = [
    str(o.financial_status) && `payment ${words(str(o.financial_status))}`,
    `fulfillment ${words(str(o.fulfillment_status) || 'unfulfilled')}`,
  ];
  // keyed by the id as parsed, as the order_id of its refunds, fulfillments and disputes is
  const key = shop.key('order', str(o.id));
  if (topic === 'orders/delete') return { text: `Order ${name} deleted`, key };
  return {
    text: lines(
      `Order ${name} ${action(topic)}${who ? ` for ${who}` : ''}: ${price(o.total_price, o.currency)} (${status.filter(Boolean).join(', ')})`,
      ...items(o, o.currency),
      where && `Ships to ${where}`,
      str(o.cancel_reason) && str(o.cancelled_at) && `Cancelled: ${words(str(o.cancel_reason))}`,
      oneLine(o.note, 500) && `Note: ${oneLine(o.note, 500)}`,
      shop.admin(`orders/${id}`),
    ),
    key,
  };
}

function refund(_topic: string, r: Obj, shop: Shop): Said {
  const amounts = list(r.transactions)
    .map((t) => Number(t.amount))
    .filter(Number.isFinite);
  const refunded = list(r.refund_line_items).map(
    (l) => `- ${str(l.quantity)} × ${oneLine(obj(l.line_item).title, 100) || `line item ${str(l.line_item_id)}`}`,
  );
  const currency = str(obj(obj(r.total_duties_set).shop_money).currency_code);
  return {
    text: lines(
      `Refund on order ${str(r.order_id)}${amounts.length ? ` of ${amounts.reduce((a, b) => a + b, 0).toFixed(2)}${currency ? ` ${currency}` : ''}` : ''}${r.restock === true ? ', restocked' : ''}`,
      ...refunded.slice(0, 10),
      oneLine(r.note, 500) && `Note: ${oneLine(r.note, 500)}`,
      orderPath(r.order_id) && shop.admin(orderPath(r.order_id)),
    ),
    key: shop.key('order', str(r.order_id)),
  };
}

function fulfillment(topic: string, f: Obj, shop: Shop): Said {
  const tracking = [str(f.tracking_company), str(f.tracking_number)].filter(Boolean).join(' ');
  return {
    text: lines(
      `Fulfillment ${str(f.name) || str(f.id)} of order ${str(f.order_id)} ${action(topic)}: status ${words(str(f.status))}${str(f.shipment_status) ? `, shipment ${words(str(f.shipment_status))}` : ''}`,
      ...items(f, ''),
      tracking && `Tracking: ${tracking}`,
      str(f.tracking_url) || (orderPath(f.order_id) && shop.admin(orderPath(f.order_id))),
    ),
    key: shop.key('order', str(f.order_id)),
  };
}

function dispute(topic: string, d: Obj, shop: Shop): Said {
  return {
    text: lines(
      `Dispute (${words(str(d.type))}) ${action(topic)} on order ${str(d.order_id)}: ${price(d.amount, d.currency)}, reason ${words(str(d.reason))}, status ${words(str(d.status))}`,
      str(d.evidence_due_by) && !str(d.evidence_sent_on) && `Evidence due by ${str(d.evidence_due_by).slice(0, 10)}`,
      orderPath(d.order_id) && shop.admin(orderPath(d.order_id)),
    ),
    key: shop.key('order', str(d.order_id)),
  };
}

function customer(topic: string, c: Obj, shop: Shop): Said {
  const id = idOf(c);
  const address = obj(c.default_address);
  return {
    text: lines(
      `Customer ${action(topic)}: ${person(c) || id}`,
      [str(address.city), str(address.country_code)].filter(Boolean).join(', '),
      oneLine(c.note, 500) && `Note: ${oneLine(c.note, 500)}`,
      topic !== 'customers/delete' && shop.admin(`customers/${id}`),
    ),
    key: shop.key('customer', id),
  };
}

function product(topic: string, o: Obj, shop: Shop): Said {
  const id = idOf(o);
  const variants = list(o.variants);
  const prices = variants.map((v) => str(v.price)).filter(Boolean);
  return {
    text: lines(
      `Product "${oneLine(o.title, 120) || id}" ${action(topic)}${str(o.status) ? ` (${str(o.status)})` : ''}`,
      [str(o.vendor), str(o.product_type)].filter(Boolean).join(', '),
      variants.length > 0 &&
        `${variants.length} variant${variants.length === 1 ? '' : 's'}${prices.length ? `, ${prices[0]}${prices.length > 1 ? ` – ${prices.at(-1)}` : ''}` : ''}`,
      topic !== 'products/delete' && shop.admin(`products/${id}`),
    ),
    key: shop.key('product', id),
  };
}

function inventory(_topic: string, i: Obj, shop: Shop): Said {
  return {
    text: `Inventory of item ${str(i.inventory_item_id)} at location ${str(i.location_id)} is now ${str(i.available)}`,
    key: shop.key('inventory', str(i.inventory_item_id)),
  };
}

function checkout(topic: string, c: Obj, shop: Shop): Said {
  return {
    text: lines(
      `Checkout ${action(topic)}${str(c.email) ? ` by ${oneLine(c.email, 120)}` : ''}: ${price(c.total_price, c.currency) || 'no total yet'}${str(c.completed_at) ? ', completed' : ''}`,
      ...items(c, c.currency),
      str(c.abandoned_checkout_url) ? shop.admin('checkouts') : '',
    ),
    key: shop.key('checkout', str(c.token) || str(c.id)),
  };
}

function app(topic: string, s: Obj, shop: Shop): Said {
  return {
    text:
      topic === 'app/uninstalled'
        ? `The app was uninstalled from ${oneLine(s.name, 120) || shop.domain || 'a shop'}`
        : generic(topic, s, shop).text,
    key: shop.key('app'),
  };
}

/** A topic without a message of its own: its name and a summary of the resource. */
function generic(topic: string, p: Obj, shop: Shop): Said {
  const { admin_graphql_api_id: _g, ...rest } = p;
  return {
    text: lines(`Shopify ${oneLine(topic, 80) || 'event'}${shop.domain ? ` in ${shop.domain}` : ''}`, summarize(rest)),
  };
}

const MESSAGES: Record<string, (topic: string, p: Obj, shop: Shop) => Said> = {
  orders: order,
  refunds: refund,
  fulfillments: fulfillment,
  disputes: dispute,
  customers: customer,
  products: product,
  inventory_levels: inventory,
  checkouts: checkout,
  app,
};
