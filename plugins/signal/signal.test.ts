/**
 * The `signal` channel against stand-ins for signal-cli's HTTP daemon
 * (JSON-RPC, checked against the request and error shapes of signal-cli's
 * JSON-RPC man page and source) and signal-cli-rest-api (checked against its
 * published Swagger), and how each answer maps to a retry.
 */
import { describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from 'hook-intake/plugin';
import type { Answer, StubRequest } from '../../test/helpers/provider-stub.ts';
import { signalSpec } from '../../test/helpers/provider-specs.ts';
import { signalRpcCheck } from '../../test/helpers/provider-checks.ts';
import {
  deliverParts,
  expectNoneOf,
  expectRefusedRetried,
  expectShutdownReason,
  expectSplit,
  queuedStandIn,
  shownOf,
  type Scripted,
} from '../../test/helpers/channel-cases.ts';
import { configIssues } from '../../test/helpers/plugin-tests.ts';
import { captureLogger, channelMessage, testGeneration } from '../../test/helpers/runtime.ts';

const ACCOUNT = '+15550001111';
const RECIPIENT = '+15552223333';
/** signal-cli prints group ids as base64 of 32 bytes. */
const GROUP_ID = Buffer.alloc(32, 7).toString('base64');

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

const rpcResult = (req: StubRequest): Answer => ({
  status: 200,
  json: {
    jsonrpc: '2.0',
    result: { timestamp: 1731234567890, results: [{ recipientAddress: { number: RECIPIENT }, type: 'SUCCESS' }] },
    id: req.body?.id,
  },
});
const rpcError =
  (code: number, message: string, results?: unknown[]) =>
  (req: StubRequest): Answer => ({
    status: 200,
    json: {
      jsonrpc: '2.0',
      error: { code, message, data: results ? { response: { timestamp: 1731234567890, results } } : null },
      id: req.body?.id,
    },
  });

describe('signal channel', () => {
  // signal-cli's daemon (JSON-RPC) on /api/v1/rpc, signal-cli-rest-api on the rest
  const q = queuedStandIn(
    (req) => (req.path === '/api/v1/rpc' ? signalRpcCheck(req) : signalSpec()(req)),
    (req) => (req.path === '/api/v1/rpc' ? rpcResult(req) : { status: 201, json: { timestamp: '1731234567890' } }),
  );

  const channel = (slice: Record<string, unknown> = {}, opts: Parameters<typeof testGeneration>[1] = {}): Channel =>
    testGeneration({ channels: { sig: { type: 'signal', url: q.stub.url, account: ACCOUNT, ...slice } } }, opts).channels.get('sig')!
      .channel;
  const message = (over: Parameters<typeof channelMessage>[0] = {}) => channelMessage({ to: RECIPIENT, text: 'the reply', ...over });
  const failure = async (ch: Channel, over: Parameters<typeof channelMessage>[0] = {}) =>
    (await ch.send(message(over)).catch((e: unknown) => e)) as ChannelError;

  describe('through signal-cli (JSON-RPC)', () => {
    it('calls send with the account, the recipient and the text', async () => {
      await channel().send(message({ deliveryId: 'd-7', part: 2, parts: 3 }));
      const [req] = q.stub.requests;
      expect(req!.path).toBe('/api/v1/rpc');
      expect(req!.body).toEqual({
        jsonrpc: '2.0',
        method: 'send',
        params: { account: ACCOUNT, recipient: [RECIPIENT], message: 'the reply' },
        id: 'd-7/2',
      });
      expect(signalRpcCheck(req!)).toEqual([]);
    });

    it('sends to a group by its id', async () => {
      await channel().send(message({ to: `group:${GROUP_ID}` }));
      expect(q.stub.requests[0]!.body.params).toEqual({ account: ACCOUNT, groupId: GROUP_ID, message: 'the reply' });
    });

    it.each([
      [
        'a rate limit, waiting as long as Signal asked',
        rpcError(-5, 'Failed to send message due to rate limiting', [
          { recipientAddress: { number: RECIPIENT }, type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: 90 },
        ]),
        { retryable: true, retryAfterMs: 90_000 },
        'signal-cli error -5: Failed to send message due to rate limiting (RATE_LIMIT_FAILURE)',
      ],
      [
        'an unregistered recipient, at once',
        rpcError(-1, 'Failed to send message', [{ recipientAddress: { number: RECIPIENT }, type: 'UNREGISTERED_FAILURE' }]),
        { retryable: false },
        'signal-cli error -1: Failed to send message (UNREGISTERED_FAILURE)',
      ],
      [
        'an untrusted identity, at once',
        rpcError(-4, 'Failed to send message due to untrusted identities', [
          { recipientAddress: { number: RECIPIENT }, type: 'IDENTITY_FAILURE' },
        ]),
        { retryable: false },
        'signal-cli error -4: Failed to send message due to untrusted identities (IDENTITY_FAILURE)',
      ],
      [
        "a network failure on signal-cli's side, retryably",
        rpcError(-1, 'Failed to send message', [{ recipientAddress: { number: RECIPIENT }, type: 'NETWORK_FAILURE' }]),
        { retryable: true, retryAfterMs: undefined },
        'signal-cli error -1: Failed to send message (NETWORK_FAILURE)',
      ],
      [
        'an I/O error, retryably',
        rpcError(-3, 'Failed to send message: connection closed'),
        { retryable: true },
        'signal-cli error -3: Failed to send message: connection closed',
      ],
      [
        'an internal error, retryably',
        rpcError(-32603, 'An internal server error has occurred.'),
        { retryable: true },
        'signal-cli error -32603: An internal server error has occurred.',
      ],
      [
        'an unknown account, at once',
        rpcError(-32602, 'Specified account does not exist'),
        { retryable: false },
        'signal-cli error -32602: Specified account does not exist',
      ],
      [
        'a bad group id, at once',
        rpcError(-1, 'Invalid group id: Failed to decode groupId'),
        { retryable: false },
        'signal-cli error -1: Invalid group id: Failed to decode groupId',
      ],
    ])('fails on %s', async (_what, answer, expected, reason) => {
      q.answers = [answer];
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ ...expected, ambiguous: false });
      expect(err.message).toBe(reason);
    });

    it.each([
      [503, 'Service Unavailable', true, 'HTTP 503: Service Unavailable'],
      [404, '', false, 'HTTP 404'],
      [415, '', false, 'HTTP 415'],
    ])('classifies HTTP %i %j from the daemon (retryable=%s)', async (status, text, retryable, reason) => {
      q.answers = [{ status, text }];
      expect(await failure(channel())).toMatchObject({ retryable, ambiguous: false, message: reason });
    });

    it('takes a 200 without a JSON-RPC result as possibly sent', async () => {
      q.answers = [{ status: 200, text: '<html>proxy</html>' }];
      expect(await failure(channel())).toMatchObject({ retryable: true, ambiguous: true });
    });

    it('ends with the shutdown signal’s reason when the service stops', async () => {
      q.answers = [{ hang: true }];
      await expectShutdownReason(
        (signal) => channel().send(message({ signal })),
        () => q.stub.requests.length === 1,
      );
    });

    it('treats a dropped connection after sending and a silent daemon as ambiguous, a refused connection as not', async () => {
      q.answers = [{ destroy: true }, { hang: true }];
      const ch = channel({ timeoutMs: 200 });
      expect(await failure(ch)).toMatchObject({ retryable: true, ambiguous: true });
      expect(await failure(ch)).toMatchObject({
        retryable: true,
        ambiguous: true,
        message: `no answer from ${q.stub.url}/api/v1/rpc within 200 ms; the message may have been posted`,
      });
      await expectRefusedRetried((url) => channel({ url }).send(message()), /could not connect/);
    });
  });

  describe('through signal-cli-rest-api', () => {
    it('posts /v2/send with the sending number and the recipient, as its spec describes', async () => {
      await channel({ api: 'rest' }).send(message());
      const [req] = q.stub.requests;
      expect(req!.path).toBe('/v2/send');
      expect(req!.body).toEqual({ message: 'the reply', number: ACCOUNT, recipients: [RECIPIENT] });
      expect(signalSpec()(req!)).toEqual([]);
    });

    it("names a group as the REST API does: group. and the base64 of signal-cli's id", async () => {
      await channel({ api: 'rest' }).send(message({ to: `group:${GROUP_ID}` }));
      expect(q.stub.requests[0]!.body.recipients).toEqual([`group.${Buffer.from(GROUP_ID).toString('base64')}`]);
    });

    it.each([
      [
        {
          status: 429,
          json: { account: ACCOUNT, error: 'Failed to send message due to rate limiting', challenge_tokens: ['t1'] },
          headers: { 'retry-after': '60' },
        },
        true,
        60_000,
      ],
      [
        { status: 400, json: { account: ACCOUNT, error: 'Failed to send (some) messages:\nUnregistered user "+15552223333"' } },
        false,
        undefined,
      ],
      [
        { status: 400, json: { account: ACCOUNT, error: 'Failed to send (some) messages:\nNetwork failure for "+15552223333"' } },
        true,
        undefined,
      ],
      [{ status: 400, json: { error: "Couldn't process request - please provide a valid number" } }, false, undefined],
      [{ status: 500, json: { error: 'internal' } }, true, undefined],
    ] as Array<[Answer, boolean, number | undefined]>)(
      'classifies %j as retryable=%s, retryAfterMs=%s',
      async (answer, retryable, retryAfterMs) => {
        q.answers = [answer];
        const err = await failure(channel({ api: 'rest' }));
        expect(err).toMatchObject({ retryable, retryAfterMs, ambiguous: false });
        const error = 'json' in answer ? String((answer.json as { error: string }).error) : '';
        expect(err.message).toBe(`HTTP ${(answer as { status: number }).status}: ${error.replace(/\s+/g, ' ')}`);
      },
    );
  });

  describe('render()', () => {
    it('sends plain text: Markdown markers dropped, links with their URL, raw HTML shown as written', () => {
      const reply = '# Done\n\n**Build** passed, see [the log](https://ci.example.com/1) and `make <target>`.\n\n- one\n- two';
      expect(channel().render!(reply)).toEqual([
        'Done\n\nBuild passed, see the log (https://ci.example.com/1) and make <target>.\n\n• one\n• two',
      ]);
    });

    it('splits a 9,000-character reply into parts of at most 2,000 UTF-8 bytes, each sent in order', async () => {
      // "ü" and "👋" take more UTF-8 bytes than UTF-16 units: the limit is counted in bytes
      const reply = Array.from({ length: 125 }, (_, i) => `Grüße ${i} 👋 ${'and more words '.repeat(4)}`.trim()).join('\n\n');
      expect(reply.length).toBeGreaterThanOrEqual(9000);
      for (const api of ['jsonrpc', 'rest']) {
        q.stub.requests.length = 0;
        const ch = channel({ api });
        const parts = await deliverParts(ch, reply, message);
        expectSplit(parts, { limit: 2000, measure: utf8Bytes, atLeast: 5, pieces: [] });
        expect(Math.max(...parts.map((p) => p.length))).toBeLessThan(2000);
        expect(parts.join('\n\n')).toBe(reply);
        expect(q.stub.requests.map((r) => (api === 'rest' ? r.body.message : r.body.params.message))).toEqual(parts);
      }
    });

    it('lowers the limit with textChunkLimit, in bytes', () => {
      expectSplit(channel({ textChunkLimit: 300 }).render!('ü '.repeat(600)), { limit: 300, measure: utf8Bytes, atLeast: 6, pieces: [] });
    });
  });

  describe('config and recipients', () => {
    const issuesOf = (slice: Record<string, unknown>) =>
      configIssues(() => testGeneration({ channels: { sig: { type: 'signal', ...slice } } }));

    it.each([
      [{}, 'channels.sig: missing required key "account"'],
      [{ account: '5550001111' }, 'channels.sig.account: must match ^\\+[1-9][0-9]{6,14}$'],
      [{ account: ACCOUNT, api: 'grpc' }, 'channels.sig.api: must be one of "jsonrpc", "rest"'],
      [{ account: ACCOUNT, textChunkLimit: 2001 }, 'channels.sig.textChunkLimit: must be <= 2000'],
      [
        { account: ACCOUNT, url: 'http://user:pw@127.0.0.1:8080' },
        'channels.sig.url: must be a plain base URL, without credentials, query or fragment',
      ],
    ])('refuses %j naming the key', (slice, issue) => {
      expect(issuesOf(slice)).toContain(issue);
    });

    it('takes E.164 numbers and group:<id>, and names the form for anything else', () => {
      const ch = channel();
      for (const to of [RECIPIENT, '+447700900123', `group:${GROUP_ID}`, 'group:AAAAAAAAAAAAAAAAAAAAAA=='])
        expect(ch.checkTo!(to)).toBeUndefined();
      for (const to of ['5552223333', '+0155', 'group:', 'group:not base64!', 'user.name', '']) {
        expect(ch.checkTo!(to)).toBe('an E.164 phone number (+15551234567) or group:<group id>');
      }
      expect(ch.limits).toEqual({ requiresTo: true });
    });
  });

  it('never lets the message text reach an error or the log, even when the service echoes it', async () => {
    const log = captureLogger('trace');
    const text = 'private words 8c1d07';
    const seen: string[] = [];
    for (const [api, answer] of [
      ['jsonrpc', rpcError(-1, `Failed: ${text}`)],
      ['jsonrpc', { status: 500, text }],
      ['rest', { status: 400, json: { account: ACCOUNT, error: text } }],
    ] as const) {
      q.answers = [answer as Scripted];
      seen.push(shownOf(await failure(channel({ api }, { logger: log.logger }), { text })));
    }
    const out = seen.join('\n') + log.text();
    expect(out).toContain('[redacted]');
    expectNoneOf(out, [text]);
  });
});
