/**
 * The `telegram` channel against a stand-in Bot API that checks every request
 * against the published Bot API description: what it sends, how it renders
 * and splits, how each answer is classified, and that the bot token (which is
 * in the URL path) never shows up in an error or a log line.
 */
import { describe, expect, it } from 'vitest';
import type { ChannelMessage } from 'hook-intake/plugin';
import { always, type Answer, type Script } from '../../test/helpers/provider-stub.ts';
import { telegramSpec } from '../../test/helpers/provider-specs.ts';
import { configRefusal } from '../../test/helpers/plugin-tests.ts';
import { captureLogger, channelMessage, testGeneration } from '../../test/helpers/runtime.ts';
import {
  caught,
  deliverParts,
  expectNoneOf,
  expectRefusedRetried,
  expectShutdownReason,
  expectSplit,
  shownOf,
  standInPerTest,
} from '../../test/helpers/channel-cases.ts';
import { htmlToPlain, parseTelegramTo } from './channel.ts';

const TOKEN = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ';
const SECRET_PART = TOKEN.split(':')[1]!;
const NOW = Date.parse('2030-01-01T00:00:00Z');
const SENT: Answer = { status: 200, json: { ok: true, result: { message_id: 1, date: 0, chat: { id: 1, type: 'private' }, text: 'x' } } };
const fail = (status: number, description: string, parameters?: object): Answer => ({
  status,
  json: { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) },
});

const standIn = standInPerTest(telegramSpec());

async function setup(script: Script, slice: Record<string, unknown> = {}) {
  const stub = await standIn(script);
  const log = captureLogger();
  const g = testGeneration(
    { channels: { tg: { type: 'telegram', botToken: TOKEN, apiBaseUrl: stub.url, ...slice } } },
    { clock: () => NOW, logger: log.logger },
  );
  return { channel: g.channels.get('tg')!.channel, stub, log };
}

const msg = (over: Partial<ChannelMessage> = {}) => channelMessage({ to: '-1001234567890', text: 'hello', ...over });

const to = (chat: string) => (over: Partial<ChannelMessage>) => msg({ to: chat, ...over });

describe('telegram channel: requests', () => {
  it('sends sendMessage with HTML, previews off, to a chat id and a topic, as the Bot API describes', async () => {
    const { channel, stub } = await setup(always(SENT));
    await deliverParts(channel, 'Hi **there** <b>&</b> [docs](https://example.com/a?b=1&c=2)', to('-1001234567890:42'));
    const [req] = stub.requests;
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe(`/bot${TOKEN}/sendMessage`);
    expect(req!.contentType).toBe('application/json');
    expect(req!.body).toEqual({
      chat_id: -1001234567890,
      message_thread_id: 42,
      text: 'Hi <b>there</b> &lt;b&gt;&amp;&lt;/b&gt; <a href="https://example.com/a?b=1&amp;c=2">docs</a>',
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
    });
    stub.expectClean();
  });

  it('sends to @channel names as strings', async () => {
    const { channel, stub } = await setup(always(SENT));
    await channel.send(msg({ to: '@my_channel' }));
    expect(stub.requests[0]!.body.chat_id).toBe('@my_channel');
    stub.expectClean();
  });

  it('splits a 9,000-character reply into parts under 4096 UTF-16 units, sent in order', async () => {
    const { channel, stub } = await setup(always(SENT));
    const reply = Array.from({ length: 60 }, (_, i) => `Paragraph ${i}: ${'x & y '.repeat(24)}`).join('\n\n');
    expect(reply.length).toBeGreaterThan(9000);
    const parts = await deliverParts(channel, reply, to('123'));
    expect(stub.requests.map((r) => r.body.text)).toEqual(parts);
    expectSplit(parts, { limit: 4096, atLeast: 3, pieces: Array.from({ length: 60 }, (_, i) => `Paragraph ${i}:`) });
    const order = parts
      .join('\n\n')
      .match(/Paragraph \d+/g)!
      .map((s) => Number(s.slice(10)));
    expect(order).toEqual(Array.from({ length: 60 }, (_, i) => i));
    stub.expectClean();
  });

  it('textChunkLimit lowers the split limit', async () => {
    const { channel } = await setup(always(SENT), { textChunkLimit: 200 });
    expectSplit(channel.render!('word '.repeat(300)), { limit: 200, atLeast: 6, pieces: [] });
  });

  it('resends a part Telegram cannot parse as plain text, once', async () => {
    const { channel, stub, log } = await setup([fail(400, "Bad Request: can't parse entities: unexpected end tag at byte offset 3"), SENT]);
    await channel.send(msg({ text: 'a <b>bold</b> <a href="https://x.y/">link</a> &amp; more' }));
    expect(stub.requests).toHaveLength(2);
    expect(stub.requests[1]!.body).toEqual({
      chat_id: -1001234567890,
      text: 'a bold link (https://x.y/) & more',
      link_preview_options: { is_disabled: true },
    });
    expect(log.text()).toMatch(/plain text/);
    expect(log.text()).not.toContain('bold');
    stub.expectClean();
  });
});

describe('telegram channel: to', () => {
  it.each(['123', '-1001234567890', '@channel_name', '@chan:7', '-100123:45'])('accepts %s', async (to) => {
    const { channel } = await setup([]);
    expect(channel.checkTo!(to)).toBeUndefined();
  });
  it.each(['', 'abc', '@ab', '12:x', '@chan:', 'https://t.me/x', '12 34'])('rejects %j naming the form', async (to) => {
    const { channel } = await setup([]);
    expect(channel.checkTo!(to)).toMatch(/chat id .* or @channel/);
  });
  it('parses a topic and keeps ids beyond safe integers as strings', () => {
    expect(parseTelegramTo('-100123:45')).toEqual({ chatId: -100123, threadId: 45 });
    expect(parseTelegramTo('99999999999999999999')).toEqual({ chatId: '99999999999999999999' });
  });
});

describe('telegram channel: answers', () => {
  it('429 is rate limited for parameters.retry_after seconds', async () => {
    const { channel } = await setup([fail(429, 'Too Many Requests: retry after 35', { retry_after: 35 })]);
    const err = await caught(channel.send(msg()));
    expect(err).toMatchObject({ retryable: true, retryAfterMs: 35_000, ambiguous: false });
    expect(err.message).toBe('Telegram 429: Too Many Requests: retry after 35');
  });

  it('5xx, JSON or not, is transient', async () => {
    const { channel } = await setup([fail(500, 'Internal Server Error'), { status: 502, text: '<html>Bad Gateway</html>' }]);
    expect(await caught(channel.send(msg()))).toMatchObject({
      retryable: true,
      ambiguous: false,
      message: 'Telegram 500: Internal Server Error',
    });
    expect(await caught(channel.send(msg()))).toMatchObject({ retryable: true, ambiguous: false, message: 'Telegram 502: HTTP 502' });
  });

  it.each([
    [400, 'Bad Request: chat not found'],
    [403, 'Forbidden: bot was blocked by the user'],
    [403, 'Forbidden: bot was kicked from the group chat'],
    [401, 'Unauthorized'],
  ])('%i %s is permanent, with the code and text as the reason', async (status, description) => {
    const { channel, stub } = await setup([fail(status, description)]);
    const err = await caught(channel.send(msg()));
    expect(err).toMatchObject({ retryable: false, message: `Telegram ${status}: ${description}` });
    expect(stub.requests).toHaveLength(1);
  });

  it('a group that became a supergroup is permanent and names the new id', async () => {
    const { channel } = await setup([
      fail(400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: -1009876 }),
    ]);
    expect((await caught(channel.send(msg()))).message).toMatch(/supergroup -1009876: use that as to/);
  });

  it('no answer in time is ambiguous (it may have been posted)', async () => {
    const { channel } = await setup([{ hang: true }], { timeoutMs: 150 });
    const err = await caught(channel.send(msg()));
    expect(err).toMatchObject({ retryable: true, ambiguous: true });
    expect(err.message).toMatch(/no answer from .* within 150 ms/);
  });

  it('a connection reset after the request is ambiguous; a refused connection is transient', async () => {
    const { channel } = await setup([{ destroy: true }]);
    expect(await caught(channel.send(msg()))).toMatchObject({ retryable: true, ambiguous: true });
    await expectRefusedRetried(
      (url) =>
        testGeneration({ channels: { tg: { type: 'telegram', botToken: TOKEN, apiBaseUrl: url } } })
          .channels.get('tg')!
          .channel.send(msg()),
      /could not connect/,
    );
  });

  it('a 200 that is not JSON is ambiguous', async () => {
    const { channel } = await setup([{ status: 200, text: 'ok' }]);
    expect(await caught(channel.send(msg()))).toMatchObject({ retryable: true, ambiguous: true });
  });

  it('shutdown aborts the request with the shutdown reason, not a channel error', async () => {
    const { channel, stub } = await setup([{ hang: true }]);
    await expectShutdownReason(
      (signal) => channel.send(msg({ signal })),
      () => stub.requests.length === 1,
    );
  });
});

describe('telegram channel: the token stays secret', () => {
  it('appears in no error, reason, stack or log line, whatever the answer', async () => {
    const echo = (status: number): Answer => fail(status, `Bad Request: bot${TOKEN} / ${SECRET_PART}`);
    const { channel, log } = await setup(
      [
        echo(400),
        echo(429),
        echo(500),
        { status: 404, text: TOKEN },
        { destroy: true },
        { hang: true },
        fail(400, "can't parse entities"),
        echo(403),
      ],
      {
        timeoutMs: 150,
      },
    );
    const seen: string[] = [];
    for (let i = 0; i < 7; i++) seen.push(shownOf(await caught(channel.send(msg()))));
    const all = seen.join('\n') + log.text();
    expectNoneOf(all, [TOKEN, SECRET_PART]);
    expect(all).toContain('[redacted]');
  });

  it('a malformed token is a config error that does not repeat it', () => {
    const refusal = configRefusal(() =>
      testGeneration({ channels: { tg: { type: 'telegram', botToken: 'not-a-token-s3cr3t', apiBaseUrl: 'http://127.0.0.1:1' } } }),
    );
    expect(refusal).toBeDefined();
    expect(refusal!.message).toMatch(/botToken/);
    expect(refusal!.message).not.toContain('s3cr3t');
  });
});

describe('htmlToPlain()', () => {
  it('drops tags and decodes entities, keeping link targets', () => {
    expect(htmlToPlain('<b>a</b> &lt;&amp;&gt; <a href="https://x.y/?a=1&amp;b=2">go</a> <a href="https://z">https://z</a>')).toBe(
      'a <&> go (https://x.y/?a=1&b=2) https://z',
    );
  });
});
