/**
 * One POST of an event (docs/callbacks.md, "Delivery" and "Addresses"): what the receiver gets, what
 * each answer comes to, and the addresses refused before any connection is made.
 */
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notPublic } from '../../src/callbacks/address.ts';
import { type Resolve, type SendRequest, sendEvent } from '../../src/callbacks/send.ts';
import { signatureHeaders } from '../../src/callbacks/sign.ts';
import { callbackSecret, startCallbackReceiver } from '../helpers/callback-receiver.ts';
import type { ProviderStub } from '../helpers/provider-stub.ts';

const secret = callbackSecret();
const key = Buffer.alloc(32, 7);
const body = JSON.stringify({ type: 'run.completed', timestamp: new Date().toISOString(), data: { runId: 'r1' } });
const signed = () => signatureHeaders(key, 'msg-1', Math.floor(Date.now() / 1000), body);

let receiver: ProviderStub;
beforeAll(async () => {
  receiver = await startCallbackReceiver(secret);
});
afterAll(() => receiver.close());

const send = (url: string, over: Partial<SendRequest> = {}) =>
  sendEvent({ url: new URL(url), body, headers: signed(), allowPrivateNetwork: true, signal: new AbortController().signal, ...over });

/** A resolver that answers `addresses` for every name, counting its calls. */
function resolver(...addresses: string[]): Resolve & { calls: string[] } {
  const calls: string[] = [];
  return Object.assign(
    async (host: string) => {
      calls.push(host);
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
    { calls },
  );
}

describe('sendEvent()', () => {
  it('posts the body as JSON with its signature, which the standardwebhooks library verifies', async () => {
    const before = receiver.requests.length;
    expect(await send(`${receiver.url}/events?x=1`)).toEqual({ ok: true, status: 204 });
    const got = receiver.requests[before]!;
    expect(got.path).toBe('/events');
    expect(got.query).toEqual({ x: '1' });
    expect(got.raw.toString()).toBe(body);
    expect(got.headers['webhook-id']).toBe('msg-1');
    expect(got.headers['user-agent']).toMatch(/^hook-intake\//);
    receiver.expectClean();
    // Svix's library reads the same headers (docs/callbacks.md, "Signing")
    expect(new SvixWebhook(secret).verify(got.raw.toString(), got.headers as Record<string, string>)).toEqual(JSON.parse(body));
  });

  it('refuses 127.0.0.1 without allowPrivateNetwork, before connecting, with the reason', async () => {
    const before = receiver.requests.length;
    expect(await send(receiver.url, { allowPrivateNetwork: false })).toEqual({
      ok: false,
      retryable: false,
      reason: 'refused: 127.0.0.1, a loopback address (set allowPrivateNetwork to allow it)',
    });
    expect(receiver.requests.length).toBe(before);
  });

  it('refuses a name that resolves to a private address, without connecting', async () => {
    const resolve = resolver('10.0.0.7');
    const r = await send('https://callbacks.example.com/in', { allowPrivateNetwork: false, resolve });
    expect(r).toEqual({
      ok: false,
      retryable: false,
      reason: 'refused: callbacks.example.com resolves to 10.0.0.7, a private address (set allowPrivateNetwork to allow it)',
    });
    expect(resolve.calls).toEqual(['callbacks.example.com']);
  });

  it('refuses a name when any of its addresses is not public', async () => {
    const r = await send('http://mixed.example.com/', {
      allowPrivateNetwork: false,
      resolve: resolver('93.184.215.14', '169.254.169.254'),
    });
    expect(r).toMatchObject({ ok: false, retryable: false, reason: expect.stringContaining('169.254.169.254, a link-local address') });
  });

  it('connects to the address the lookup checked: a name only the injected resolver knows reaches the receiver', async () => {
    const before = receiver.requests.length;
    const port = new URL(receiver.url).port;
    expect(await send(`http://receiver.invalid:${port}/events`, { resolve: resolver('127.0.0.1') })).toEqual({ ok: true, status: 204 });
    expect(receiver.requests[before]!.headers.host).toBe(`receiver.invalid:${port}`);
  });

  it.each([
    ['[::1]', 'a loopback address'],
    ['[::ffff:127.0.0.1]', 'a loopback address (127.0.0.1)'],
    ['169.254.169.254', 'a link-local address'],
    ['0.0.0.0', 'an unspecified address'],
  ])('refuses the literal %s as %s', async (host, why) => {
    expect(await send(`http://${host}:9/`, { allowPrivateNetwork: false })).toMatchObject({ reason: expect.stringContaining(why) });
  });

  it.each([
    [{ status: 500 }, { retryable: true, reason: 'HTTP 500' }],
    [
      { status: 429, headers: { 'retry-after': '7' } },
      { retryable: true, reason: 'HTTP 429', retryAfterMs: 7000 },
    ],
    [{ status: 404 }, { retryable: false, reason: 'HTTP 404' }],
    [
      { status: 302, headers: { location: '/elsewhere' } },
      { retryable: false, reason: 'HTTP 302: a redirect, which is not followed' },
    ],
  ])('answers %j as a failure: %j', async (answer, expected) => {
    const stub = await startCallbackReceiver(secret, () => answer);
    try {
      expect(await send(`${stub.url}/in`)).toEqual({ ok: false, retryAfterMs: undefined, ...expected });
      // a redirect's target is never asked
      expect(stub.requests.map((r) => r.path)).toEqual(['/in']);
    } finally {
      await stub.close();
    }
  });

  it('fails, to be tried again, when no answer comes in time or the connection is refused', async () => {
    const stub = await startCallbackReceiver(secret, () => ({ hang: true }));
    try {
      expect(await send(stub.url, { timeoutMs: 50 })).toEqual({ ok: false, retryable: true, reason: 'no answer within 0.05 s' });
    } finally {
      await stub.close();
    }
    expect(await send(stub.url)).toMatchObject({ ok: false, retryable: true, reason: expect.stringContaining('ECONNREFUSED') });
  });
});

describe('notPublic()', () => {
  it.each([
    ['8.8.8.8', undefined],
    ['172.32.0.1', undefined],
    ['2606:4700::1111', undefined],
    ['::ffff:8.8.8.8', undefined],
    ['10.1.2.3', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
    ['224.0.0.1', 'a multicast address'],
    ['255.255.255.255', 'a reserved address'],
    ['::', 'an unspecified address'],
    ['fd12::1', 'a private address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['::ffff:7f00:1', 'a loopback address (127.0.0.1)'],
    ['64:ff9b::a00:1', 'a private address (10.0.0.1)'],
    ['2002:c0a8:101::1', 'a private address (192.168.1.1)'],
    ['2001:db8::1', 'a documentation address'],
  ])('%s → %s', (address, why) => {
    expect(notPublic(address)).toBe(why);
  });
});
