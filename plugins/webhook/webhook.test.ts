/**
 * The `webhook` channel against a local receiver over real HTTP: the request
 * it makes, the signature the receiver checks, how answers map to retries,
 * and the outbox carrying a reply through 429 and 503 to a 2xx.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from 'hook-intake/plugin';
import { until } from '../../test/helpers/cli.ts';
import { json, startStub, type HttpStub, type Recorded } from '../../test/helpers/http-stub.ts';
import { MAX_ATTEMPTS, outboxFor, type OutboxHarness } from '../../test/helpers/outbox-delivery.ts';
import { configIssues, verdictOf, type Generation } from '../../test/helpers/plugin-tests.ts';
import { channelMessage, testGeneration } from '../../test/helpers/runtime.ts';

/** A Standard Webhooks secret: `whsec_` and the base64 of the key bytes. */
const KEY = Buffer.from('0123456789abcdef0123456789abcdef');
const SECRET = `whsec_${KEY.toString('base64')}`;
const NOW = Date.parse('2030-01-01T00:00:00Z');
const TOLERANCE_SECONDS = 300;

/**
 * What a receiver does, following the published Standard Webhooks spec with
 * node:crypto: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`,
 * base64, compared in constant time with each `v1,` entry of the signature
 * header; a timestamp outside the tolerance of the receiver's clock is refused.
 */
function verified(req: Recorded, nowMs: number, key: Buffer = KEY): boolean {
  const id = String(req.headers['webhook-id'] ?? '');
  const timestamp = String(req.headers['webhook-timestamp'] ?? '');
  if (!id || !/^\d+$/.test(timestamp) || Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const want = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.`).update(req.raw).digest('base64'));
  return String(req.headers['webhook-signature'] ?? '')
    .split(' ')
    .some((entry) => {
      const got = Buffer.from(entry.startsWith('v1,') ? entry.slice(3) : '');
      return got.length === want.length && timingSafeEqual(got, want);
    });
}

const message = channelMessage;

describe('webhook channel', () => {
  let stub: HttpStub;
  beforeAll(async () => {
    stub = await startStub();
  });
  afterAll(() => stub.close());
  afterEach(() => {
    stub.requests.length = 0;
  });

  const gen = (slice: Record<string, unknown> = {}, opts: Parameters<typeof testGeneration>[1] = {}): Generation =>
    testGeneration({ channels: { hooks: { type: 'webhook', url: `${stub.url}/in`, secret: SECRET, ...slice } } }, opts);
  const channel = (g: Generation): Channel => g.channels.get('hooks')!.channel;

  describe('send()', () => {
    it('POSTs {runId, deliveryId, to, text, part, parts}, signed as Standard Webhooks sign, at the injected time', async () => {
      stub.handler = (req, res) => json(res, verified(req, NOW) ? 200 : 401, {});
      await channel(gen({ headers: { 'X-Team': 'ops' } }, { clock: () => NOW })).send(message({ part: 2, parts: 3 }));
      const [req] = stub.requests;
      expect(req!.method).toBe('POST');
      expect(req!.url).toBe('/in');
      expect(req!.headers['content-type']).toBe('application/json');
      expect(req!.headers['x-team']).toBe('ops');
      expect(req!.headers['x-hook-intake-delivery']).toBe('d-1/2');
      expect(req!.json).toEqual({ runId: 'run-1', deliveryId: 'd-1', to: 'ops', text: 'the reply', part: 2, parts: 3 });
      expect(req!.headers['webhook-id']).toBe('d-1_2');
      expect(req!.headers['webhook-timestamp']).toBe(String(NOW / 1000));
      expect(req!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(verified(req!, NOW)).toBe(true);
      // another hook-intake, with verify: {type: "standard-webhooks"}, takes it too
      expect(verdictOf({ type: 'standard-webhooks', secret: SECRET }, req!.headers, req!.raw, NOW)).toMatchObject({ ok: true });
    });

    it('signs a retry with the same id and the time of the retry, so a replay of the first attempt goes stale', async () => {
      stub.handler = (_req, res) => json(res, 200, {});
      let now = NOW;
      const ch = channel(gen({}, { clock: () => now }));
      await ch.send(message());
      now += 3600_000;
      await ch.send(message());
      const [first, retry] = stub.requests;
      expect(retry!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(retry!.headers['webhook-timestamp']).toBe(String((NOW + 3600_000) / 1000));
      expect(verified(retry!, now)).toBe(true);
      // the first attempt, sent again an hour later, is outside any receiver's tolerance
      expect(verified(first!, now)).toBe(false);
      expect(verified(first!, NOW)).toBe(true);
    });

    it('uses a secret without the whsec_ prefix as its UTF-8 bytes, and sends no signature without a secret', async () => {
      stub.handler = (_req, res) => json(res, 204, {});
      await channel(gen({ secret: 'plain-shared-secret' }, { clock: () => NOW })).send(message());
      await testGeneration({ channels: { plain: { type: 'webhook', url: stub.url } } })
        .channels.get('plain')!
        .channel.send(message());
      expect(verified(stub.requests[0]!, NOW, Buffer.from('plain-shared-secret', 'utf8'))).toBe(true);
      for (const h of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) expect(stub.requests[1]!.headers[h]).toBeUndefined();
    });

    it('declares its limits from the config', () => {
      expect(channel(gen({ maxTextLength: 4000, requiresTo: true })).limits).toEqual({ maxTextLength: 4000, requiresTo: true });
    });

    it.each([
      [429, { 'retry-after': '7' }, true, 7000],
      [503, { 'retry-after': new Date(NOW + 30_000).toUTCString() }, true, 30_000],
      [503, { 'retry-after': new Date(NOW - 30_000).toUTCString() }, true, 0],
      [500, {}, true, undefined],
      [502, { 'retry-after': 'soon' }, true, undefined],
      [408, {}, true, undefined],
      [400, { 'retry-after': '5' }, false, undefined],
      [401, {}, false, undefined],
      [404, {}, false, undefined],
      [301, { location: 'http://elsewhere.invalid/' }, false, undefined],
    ])('maps HTTP %i %j to retryable=%s, retryAfterMs=%s', async (status, headers, retryable, retryAfterMs) => {
      stub.handler = (_req, res) => json(res, status, { error: { message: 'receiver says no' } }, headers as Record<string, string>);
      const err = (await channel(gen({}, { clock: () => NOW }))
        .send(message())
        .catch((e: unknown) => e)) as ChannelError;
      expect(err).toBeInstanceOf(ChannelError);
      expect(err.message).toBe(`HTTP ${status}: receiver says no`);
      expect(err.retryable).toBe(retryable);
      expect(err.retryAfterMs).toBe(retryAfterMs);
    });

    it('treats a network error as retryable', async () => {
      const gone = await startStub();
      await gone.close();
      const g = testGeneration({ channels: { hooks: { type: 'webhook', url: `${gone.url}/in` } } });
      const err = (await channel(g)
        .send(message())
        .catch((e: unknown) => e)) as ChannelError;
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/in failed: .*ECONNREFUSED/);
    });

    it('gives up on a silent receiver after timeoutMs, retryably', async () => {
      stub.handler = () => undefined;
      const err = (await channel(gen({ timeoutMs: 200 }))
        .send(message())
        .catch((e: unknown) => e)) as ChannelError;
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/no answer from .* within 200 ms/);
    });

    it('never puts the secret in an error, even when the receiver echoes it', async () => {
      stub.handler = (_req, res) => json(res, 400, { message: `bad secret ${SECRET}` });
      const err = (await channel(gen())
        .send(message())
        .catch((e: unknown) => e)) as Error;
      expect(err.message).toBe('HTTP 400: bad secret [redacted]');
    });

    it.each([
      [{ url: 'ftp://x/' }, 'channels.hooks.url: must be an http:// or https:// URL'],
      [{ url: 'nope' }, 'channels.hooks.url: "nope" is not a URL'],
      [{ timeoutMs: 0 }, 'channels.hooks.timeoutMs: must be >= 1'],
      [{ secret: '' }, 'channels.hooks.secret: must NOT have fewer than 1 characters'],
      [{ sekret: 'x' }, 'channels.hooks.sekret: unknown key (did you mean "secret"?)'],
      [
        { secret: 'whsec_not base64!' },
        'channels.hooks.secret: a secret starting with whsec_ must continue in base64 (Standard Webhooks form)',
      ],
    ])('refuses %j naming the key', (slice, issue) => {
      const issues = configIssues(() => gen(slice));
      expect(issues).toContain(issue);
    });
  });

  describe('through the outbox', () => {
    let outbox: OutboxHarness | undefined;
    afterEach(async () => {
      await outbox?.close();
      outbox = undefined;
    });
    const start = (slice: Record<string, unknown>): OutboxHarness =>
      (outbox = outboxFor({ channels: { hooks: { type: 'webhook', url: `${stub.url}/in`, secret: SECRET, ...slice } } }));

    it('retries after 429 and 503, waiting as long as Retry-After says, and records the reply as sent', async () => {
      const arrivals: number[] = [];
      stub.handler = (req, res) => {
        arrivals.push(Date.now());
        // the generation's clock is the real one here, as is the receiver's
        if (!verified(req, Date.now())) return json(res, 401, { error: 'bad signature' });
        if (arrivals.length === 1) return json(res, 429, { error: 'slow down' }, { 'retry-after': '1' });
        if (arrivals.length === 2)
          return json(res, 503, { error: 'maintenance' }, { 'retry-after': new Date(Date.now() + 2000).toUTCString() });
        return json(res, 200, { ok: true });
      };
      const ob = start({});
      const { runId } = await ob.queueReply({ channel: 'hooks', to: 'ops', text: 'disk is full' });
      ob.start();
      const d = await until(async () => {
        const x = await ob.delivery(runId);
        return x.status === 'sent' ? x : undefined;
      });
      expect(d).toEqual({ status: 'sent', reason: null, channel: 'hooks', to: 'ops', attempts: 3 });
      expect(stub.requests.map((r) => r.json.text)).toEqual(['disk is full', 'disk is full', 'disk is full']);
      // with initialBackoffMs 10, only Retry-After explains gaps of a second or more
      expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(950);
      expect(arrivals[2]! - arrivals[1]!).toBeGreaterThanOrEqual(950);
    });

    it(`stops after ${MAX_ATTEMPTS} attempts and records the delivery as failed with the reason`, async () => {
      stub.handler = (_req, res) => json(res, 500, { error: { message: 'receiver crashed' } });
      const ob = start({});
      const { runId } = await ob.queueReply({ channel: 'hooks', text: 'x' });
      ob.start();
      const d = await until(async () => {
        const x = await ob.delivery(runId);
        return x.status === 'failed' ? x : undefined;
      });
      expect(d).toMatchObject({ status: 'failed', reason: 'HTTP 500: receiver crashed', attempts: MAX_ATTEMPTS });
      await ob.idle();
      expect(stub.requests).toHaveLength(MAX_ATTEMPTS);
    });

    it('does not retry a 4xx other than 408/425/429', async () => {
      stub.handler = (_req, res) => json(res, 422, { message: 'unknown recipient' });
      const ob = start({});
      const { runId } = await ob.queueReply({ channel: 'hooks', to: 'nobody', text: 'x' });
      ob.start();
      const d = await until(async () => {
        const x = await ob.delivery(runId);
        return x.status === 'failed' ? x : undefined;
      });
      expect(d).toMatchObject({ status: 'failed', reason: 'HTTP 422: unknown recipient', attempts: 1 });
      expect(stub.requests).toHaveLength(1);
    });

    it('keeps the secret, the signature and the reply out of the log, even when the receiver echoes the secret', async () => {
      stub.handler = (req, res) =>
        json(res, 400, {
          message: `wrong secret ${SECRET} (${SECRET.slice(6)}), got ${String(req.headers['webhook-signature'])} for ${String(req.json.text)}`,
        });
      const ob = start({});
      const { runId } = await ob.queueReply({ channel: 'hooks', text: 'CONFIDENTIAL-REPLY' });
      ob.start();
      await until(async () => (await ob.delivery(runId)).status === 'failed');
      const signature = String(stub.requests[0]!.headers['webhook-signature']);
      expect(ob.log()).toContain('delivery failed');
      for (const s of [SECRET, SECRET.slice(6), signature, signature.slice(3), 'CONFIDENTIAL-REPLY']) expect(ob.log()).not.toContain(s);
    });

    it('splits a long reply at maxTextLength and resumes a failed delivery after the parts already accepted', async () => {
      let failedOnce = false;
      stub.handler = (req, res) => {
        if (req.json.part === 2 && !failedOnce) {
          failedOnce = true;
          return json(res, 503, {});
        }
        json(res, 200, {});
      };
      const ob = start({ maxTextLength: 20 });
      const text = 'first paragraph.\n\nsecond paragraph.\n\nthird one.';
      const { runId } = await ob.queueReply({ channel: 'hooks', text });
      ob.start();
      await until(async () => (await ob.delivery(runId)).status === 'sent');
      expect(stub.requests.map((r) => `${r.json.part}/${r.json.parts}:${r.json.text}`)).toEqual([
        '1/3:first paragraph.',
        '2/3:second paragraph.',
        '2/3:second paragraph.',
        '3/3:third one.',
      ]);
    });

    it('sends to one route one message at a time, in order, while other routes proceed', async () => {
      let active = 0;
      let maxSameRoute = 0;
      const activeByRoute = new Map<string, number>();
      stub.handler = async (req, res) => {
        const route = String(req.json.to);
        activeByRoute.set(route, (activeByRoute.get(route) ?? 0) + 1);
        active++;
        maxSameRoute = Math.max(maxSameRoute, activeByRoute.get(route)!);
        await new Promise((r) => setTimeout(r, 30));
        activeByRoute.set(route, activeByRoute.get(route)! - 1);
        active--;
        json(res, 200, {});
      };
      const ob = start({});
      const runs: { runId: string }[] = [];
      for (let i = 0; i < 6; i++) runs.push(await ob.queueReply({ channel: 'hooks', to: i % 2 ? 'b' : 'a', text: `m${i}` }));
      ob.start();
      await until(async () => (await Promise.all(runs.map((r) => ob.delivery(r.runId)))).every((d) => d.status === 'sent'));
      expect(maxSameRoute).toBe(1);
      const order = (to: string) => stub.requests.filter((r) => r.json.to === to).map((r) => r.json.text);
      expect(order('a')).toEqual(['m0', 'm2', 'm4']);
      expect(order('b')).toEqual(['m1', 'm3', 'm5']);
      expect(active).toBe(0);
    });
  });
});
