/**
 * The `imessage` channel against a stand-in for a BlueBubbles server. There
 * is no published machine-readable spec, so each request is checked against
 * the server's own route and validator (`POST /api/v1/message/text`,
 * `sendTextRules` and `validateText` in bluebubbles-server, see
 * test/fixtures/specs/imessage/SOURCE.md), and the answers are its response
 * envelopes `{status, message, error: {type, message}, data}`.
 */
import { describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from 'hook-intake/plugin';
import type { Answer, StubRequest } from '../../test/helpers/provider-stub.ts';
import { blueBubblesCheck } from '../../test/helpers/provider-checks.ts';
import {
  deliverParts,
  expectNoneOf,
  expectRefusedRetried,
  expectShutdownReason,
  expectSplit,
  queuedStandIn,
  shownOf,
} from '../../test/helpers/channel-cases.ts';
import { configIssues } from '../../test/helpers/plugin-tests.ts';
import { captureLogger, channelMessage, testGeneration } from '../../test/helpers/runtime.ts';

const PASSWORD = 'bb-server-pass&word=9';

const checkSendText = blueBubblesCheck(PASSWORD);

const sent = (req: StubRequest): Answer => ({
  status: 200,
  json: {
    status: 200,
    message: 'Message sent!',
    data: { guid: 'p:0/5E1A…', tempGuid: req.body?.tempGuid, text: req.body?.message, error: 0 },
  },
});
const badRequest = (error: string): Answer => ({
  status: 400,
  json: {
    status: 400,
    message: "You've made a bad request! Please check your request params & body",
    error: { type: 'Validation Error', message: error },
  },
});

describe('imessage channel', () => {
  const q = queuedStandIn(checkSendText, sent);

  const channel = (slice: Record<string, unknown> = {}, opts: Parameters<typeof testGeneration>[1] = {}): Channel =>
    testGeneration({ channels: { imsg: { type: 'imessage', url: `${q.stub.url}/`, password: PASSWORD, ...slice } } }, opts).channels.get(
      'imsg',
    )!.channel;
  const message = (over: Parameters<typeof channelMessage>[0] = {}) => channelMessage({ to: '+15552223333', text: 'the reply', ...over });
  const failure = async (ch: Channel, over: Parameters<typeof channelMessage>[0] = {}) =>
    (await ch.send(message(over)).catch((e: unknown) => e)) as ChannelError;

  describe('send()', () => {
    it('posts the text to the direct chat of a phone number, with the password in the query', async () => {
      await channel().send(message());
      const [req] = q.stub.requests;
      expect(req!.path).toBe('/api/v1/message/text');
      expect(req!.query).toEqual({ password: PASSWORD });
      expect(req!.body).toEqual({
        chatGuid: 'iMessage;-;+15552223333',
        message: 'the reply',
        tempGuid: 'hook-intake-d-1-1',
        method: 'apple-script',
      });
      expect(checkSendText(req!)).toEqual([]);
    });

    it('sends to an e-mail handle, to a chat guid, and by the Private API when configured', async () => {
      await channel().send(message({ to: 'someone@example.com' }));
      await channel({ method: 'private-api' }).send(message({ to: 'chat:iMessage;+;chat493787264915' }));
      expect(q.stub.requests.map((r) => [r.body.chatGuid, r.body.method])).toEqual([
        ['iMessage;-;someone@example.com', 'apple-script'],
        ['iMessage;+;chat493787264915', 'private-api'],
      ]);
    });

    it('keeps tempGuid the same on every attempt at a part, and different between parts and deliveries', async () => {
      const ch = channel();
      await ch.send(message({ part: 1, parts: 2 }));
      await ch.send(message({ part: 1, parts: 2, attempt: 2 }));
      await ch.send(message({ part: 2, parts: 2 }));
      await ch.send(message({ deliveryId: 'd-2' }));
      expect(q.stub.requests.map((r) => r.body.tempGuid)).toEqual([
        'hook-intake-d-1-1',
        'hook-intake-d-1-1',
        'hook-intake-d-1-2',
        'hook-intake-d-2-1',
      ]);
    });

    it('counts a part as sent when the server says an earlier attempt at it is still queued', async () => {
      q.answers = [badRequest('Message is already queued to be sent! (Temp GUID: hook-intake-d-1-1)')];
      await expect(channel().send(message({ attempt: 2 }))).resolves.toBeUndefined();
    });

    it.each([
      [
        badRequest('Chat does not exist'),
        false,
        undefined,
        "HTTP 400: You've made a bad request! Please check your request params & body: Chat does not exist",
      ],
      [
        {
          status: 401,
          json: {
            status: 401,
            message: 'You are not authorized to access this resource',
            error: { type: 'Authentication Error', message: 'Unauthorized' },
          },
        },
        false,
        undefined,
        'HTTP 401: You are not authorized to access this resource: Unauthorized',
      ],
      [
        {
          status: 500,
          json: {
            status: 500,
            message: 'Message sent with an error. See attached message',
            error: { type: 'iMessage Error', message: 'Message failed to send!' },
            data: { error: 22 },
          },
        },
        false,
        undefined,
        'HTTP 500: Message sent with an error. See attached message: Message failed to send! (iMessage error 22)',
      ],
      [
        {
          status: 500,
          json: { status: 500, message: 'Message Send Error', error: { type: 'iMessage Error', message: 'Messages is not running' } },
        },
        true,
        undefined,
        'HTTP 500: Message Send Error: Messages is not running',
      ],
      [{ status: 503, text: 'Service Unavailable', headers: { 'retry-after': '20' } }, true, 20_000, 'HTTP 503: Service Unavailable'],
      [{ status: 429, text: 'Too Many Requests', headers: { 'retry-after': '5' } }, true, 5000, 'HTTP 429: Too Many Requests'],
    ] as Array<[Answer, boolean, number | undefined, string]>)(
      'classifies %j as retryable=%s, retryAfterMs=%s',
      async (answer, retryable, retryAfterMs, reason) => {
        q.answers = [answer];
        const err = await failure(channel());
        expect(err).toBeInstanceOf(ChannelError);
        expect(err).toMatchObject({ retryable, retryAfterMs, ambiguous: false, message: reason });
      },
    );

    it('ends with the shutdown signal’s reason when the service stops', async () => {
      q.answers = [{ hang: true }];
      await expectShutdownReason(
        (signal) => channel().send(message({ signal })),
        () => q.stub.requests.length === 1,
      );
    });

    it('treats a dropped connection after sending and a silent server as ambiguous, a refused connection as not', async () => {
      q.answers = [{ destroy: true }, { hang: true }];
      const ch = channel({ timeoutMs: 200 });
      expect(await failure(ch)).toMatchObject({ retryable: true, ambiguous: true });
      expect(await failure(ch)).toMatchObject({
        retryable: true,
        ambiguous: true,
        message: `no answer from ${q.stub.url}/api/v1/message/text within 200 ms; the message may have been posted`,
      });
      await expectRefusedRetried((url) => channel({ url }).send(message()), /could not connect/);
    });
  });

  describe('render()', () => {
    it('sends plain text: Markdown markers dropped, links with their URL, raw HTML shown as written', () => {
      const reply = '**Ready**: [the report](https://example.com/r) <b>now</b>\n\n```\nexit 0\n```';
      expect(channel().render!(reply)).toEqual(['Ready: the report (https://example.com/r) <b>now</b>\n\nexit 0']);
    });

    it('splits a 9,000-character reply into parts of at most 4,000 characters, each sent in order with its own tempGuid', async () => {
      const reply = Array.from({ length: 101 }, (_, i) => `Line ${i}: ${'the agent said this '.repeat(4)}`.trim()).join('\n\n');
      expect(reply.length).toBeGreaterThanOrEqual(9000);
      const parts = await deliverParts(channel(), reply, message);
      expect(parts.length).toBe(3);
      expectSplit(parts, { limit: 4000, pieces: [] });
      expect(parts.join('\n\n')).toBe(reply);
      expect(q.stub.requests.map((r) => [r.body.message, r.body.tempGuid])).toEqual(parts.map((p, i) => [p, `hook-intake-d-1-${i + 1}`]));
    });

    it('lowers the limit with textChunkLimit', () => {
      expectSplit(channel({ textChunkLimit: 200 }).render!('word '.repeat(400)), { limit: 200, atLeast: 10, pieces: [] });
    });
  });

  describe('config and recipients', () => {
    const issuesOf = (slice: Record<string, unknown>) =>
      configIssues(() => testGeneration({ channels: { imsg: { type: 'imessage', ...slice } } }));

    it.each([
      [{ url: 'http://mac.local:1234' }, 'channels.imsg: missing required key "password"'],
      [
        { url: 'http://mac.local:1234', password: PASSWORD, method: 'imsg' },
        'channels.imsg.method: must be one of "apple-script", "private-api"',
      ],
      [{ url: 'http://mac.local:1234', password: PASSWORD, textChunkLimit: 4001 }, 'channels.imsg.textChunkLimit: must be <= 4000'],
      [
        { url: `http://mac.local:1234/?password=${PASSWORD}`, password: PASSWORD },
        'channels.imsg.url: must be a plain base URL, without credentials, query or fragment',
      ],
    ])('refuses %j naming the key', (slice, issue) => {
      expect(issuesOf(slice)).toContain(issue);
    });

    it('takes phone numbers, e-mail handles and chat guids, and names the form for anything else', () => {
      const ch = channel();
      for (const to of [
        '+15552223333',
        'someone@example.com',
        'chat:iMessage;+;chat493787264915',
        'chat:SMS;-;+15552223333',
        'chat:any;-;+15552223333',
      ]) {
        expect(ch.checkTo!(to)).toBeUndefined();
      }
      for (const to of ['5552223333', 'someone@', 'chat:', 'chat:iMessage;x;foo', 'iMessage;-;+15552223333', '']) {
        expect(ch.checkTo!(to)).toBe('a phone number (+15551234567), an e-mail address, or chat:<chat guid>');
      }
      expect(ch.limits).toEqual({ requiresTo: true, maxTextLength: 4000 });
    });
  });

  it('never lets the password or the text reach an error or the log, even when the server echoes the URL', async () => {
    const log = captureLogger('trace');
    const url = `${q.stub.url}/api/v1/message/text?password=${encodeURIComponent(PASSWORD)}`;
    const seen: string[] = [];
    for (const answer of [
      badRequest(`bad ${url} ${PASSWORD} the reply`),
      { status: 401, text: `no ${PASSWORD}` },
      { status: 500, json: { status: 500, message: url, error: { message: PASSWORD } } },
      { hang: true },
      { destroy: true },
    ] as Answer[]) {
      q.answers = [answer];
      seen.push(shownOf(await failure(channel({ timeoutMs: 200 }, { logger: log.logger }))));
    }
    const out = seen.join('\n') + log.text();
    expect(out).toContain('[redacted]');
    expectNoneOf(out, [PASSWORD, encodeURIComponent(PASSWORD), 'the reply']);
  });
});
