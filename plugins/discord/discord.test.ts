/**
 * The `discord` channel against a stand-in for Discord's HTTP API on
 * 127.0.0.1: every request it makes is checked against Discord's published
 * OpenAPI description, and the stand-in's answers script Discord's
 * behaviours (rate limits with their hint, unknown channel, missing access,
 * 5xx, a hang, the nonce dedupe).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from 'hook-intake/plugin';
import { discordSpec } from '../../test/helpers/provider-specs.ts';
import { startProviderStub, type Answer, type ProviderStub, type StubRequest } from '../../test/helpers/provider-stub.ts';
import { configIssues } from '../../test/helpers/plugin-tests.ts';
import { captureLogger, channelMessage, testGeneration } from '../../test/helpers/runtime.ts';
import {
  deliverParts,
  expectFailedOnceThroughOutbox,
  expectNoneOf,
  expectRefusedRetried,
  expectShutdownReason,
  expectSplit,
  failuresSaid,
  longReply,
} from '../../test/helpers/channel-cases.ts';
import { DISCORD_MAX_LINES, discordNonce } from './channel.ts';

const TOKEN = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.bot-token-for-tests-only';

const CHANNEL = '1234567890123456789';

/** Discord's answer to Create Message: the message, echoing what was posted. */
const created = (req: StubRequest): Answer => ({
  status: 200,
  json: { id: '1111111111111111111', channel_id: CHANNEL, content: req.body.content, nonce: req.body.nonce },
});

describe('discord channel', () => {
  let stub: ProviderStub;
  beforeAll(async () => {
    stub = await startProviderStub({ validate: discordSpec() });
  });
  afterAll(() => stub.close());
  afterEach(() => {
    // every request any test made is one Discord's published spec accepts
    stub.expectClean();
    stub.requests.length = 0;
  });

  const channel = (slice: Record<string, unknown> = {}, logger = captureLogger().logger): Channel =>
    testGeneration(
      { channels: { dc: { type: 'discord', botToken: TOKEN, apiBaseUrl: `${stub.url}/api/v10`, ...slice } } },
      { logger },
    ).channels.get('dc')!.channel;
  const message = (over: Parameters<typeof channelMessage>[0] = {}) => channelMessage({ to: CHANNEL, ...over });
  const failure = async (ch: Channel, over: Parameters<typeof channelMessage>[0] = {}) =>
    (await ch.send(message(over)).catch((e: unknown) => e)) as ChannelError;

  describe('send()', () => {
    it('POSTs the part to /channels/<id>/messages as the bot, pinging no one, without link previews, with a nonce Discord enforces', async () => {
      stub.setScript((req) => created(req));
      await channel().send(message({ text: 'hello @everyone', deliveryId: 'd-7', part: 2, parts: 3 }));
      const [req] = stub.requests;
      expect(req!.path).toBe(`/api/v10/channels/${CHANNEL}/messages`);
      expect(req!.headers.authorization).toBe(`Bot ${TOKEN}`);
      // flags 4 is SUPPRESS_EMBEDS: links in the reply get no preview
      expect(req!.body).toEqual({
        content: 'hello @everyone',
        allowed_mentions: { parse: [] },
        flags: 4,
        nonce: discordNonce('d-7', 2),
        enforce_nonce: true,
      });
    });

    it('derives a nonce of at most 25 characters, the same for every attempt at a part and different per part', () => {
      const long = 'delivery-0192f3a4-5b6c-7d8e-9f00-112233445566';
      expect(discordNonce(long, 1)).toHaveLength(25);
      expect(discordNonce(long, 1)).toBe(discordNonce(long, 1));
      expect(discordNonce(long, 2)).not.toBe(discordNonce(long, 1));
      expect(discordNonce('other', 1)).not.toBe(discordNonce(long, 1));
    });

    it('posts a part once when the answer is lost and the part is retried: Discord returns the message its nonce made', async () => {
      // Discord with enforce_nonce: a nonce it has seen returns the message it made; the first answer is lost
      const byNonce = new Map<string, Answer>();
      stub.setScript((req) => {
        const seen = byNonce.get(req.body.nonce);
        if (seen) return seen;
        byNonce.set(req.body.nonce, created(req));
        return { hang: true };
      });
      const ch = channel({ timeoutMs: 300 });
      const err = await failure(ch, { deliveryId: 'd-9' });
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: true, ambiguous: true });
      // the retry may come from a restarted service: the key depends only on the delivery and part
      await channel().send(message({ deliveryId: 'd-9', attempt: 2 }));
      expect(stub.requests).toHaveLength(2);
      expect(stub.requests[1]!.body.nonce).toBe(stub.requests[0]!.body.nonce);
      expect(byNonce.size).toBe(1);
    });

    it.each([
      ['JSON retry_after with decimals', { retry_after: 1.5, global: false }, { 'retry-after': '2' }, 1500],
      ['the Retry-After header alone', { message: 'You are being rate limited.' }, { 'retry-after': '3' }, 3000],
    ])('is rate limited with Discord’s hint on 429 (%s)', async (_name, body, headers, ms) => {
      stub.setScript([{ status: 429, json: { message: 'You are being rate limited.', ...body }, headers }]);
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: true, ambiguous: false, retryAfterMs: ms });
      expect(err.message).toBe(`rate limited by Discord: retry after ${ms} ms`);
    });

    it('refuses to send into a bucket Discord said is empty, without a request, until it resets', async () => {
      const bucket = {
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset-after': '60',
        'x-ratelimit-bucket': 'b1',
      };
      stub.setScript((req) => ({ ...created(req), headers: bucket }));
      const ch = channel();
      // the first answer names the bucket, the second one is the bucket's own
      await ch.send(message({ part: 1, parts: 3 }));
      await ch.send(message({ part: 2, parts: 3 }));
      const err = await failure(ch, { part: 3, parts: 3 });
      expect(err).toMatchObject({ retryable: true, ambiguous: false });
      expect(err.retryAfterMs).toBeGreaterThan(50_000);
      expect(stub.requests).toHaveLength(2);
    });

    it.each([
      [401, { message: '401: Unauthorized', code: 0 }, 'Discord error 0 (HTTP 401): 401: Unauthorized'],
      [403, { message: 'Missing Access', code: 50001 }, 'Discord error 50001 (HTTP 403): Missing Access'],
      [404, { message: 'Unknown Channel', code: 10003 }, 'Discord error 10003 (HTTP 404): Unknown Channel'],
      [
        400,
        {
          message: 'Invalid Form Body',
          code: 50035,
          errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } },
        },
        'Discord error 50035 (HTTP 400): Invalid Form Body content[BASE_TYPE_MAX_LENGTH]: Must be 2000 or fewer in length.',
      ],
    ])('fails at once on HTTP %i with Discord’s code and text', async (status, body, reason) => {
      stub.setScript([{ status, json: body }]);
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: false, ambiguous: false, message: reason });
    });

    it('keeps its token after a 401, so the next message is sent as the bot again', async () => {
      stub.setScript((req, i) => (i === 0 ? { status: 401, json: { message: '401: Unauthorized', code: 0 } } : created(req)));
      const ch = channel();
      expect(await failure(ch)).toMatchObject({ retryable: false });
      await ch.send(message({ attempt: 2 }));
      expect(stub.requests.map((r) => r.headers.authorization)).toEqual([`Bot ${TOKEN}`, `Bot ${TOKEN}`]);
    });

    it.each([500, 502, 503])('retries HTTP %i as transient', async (status) => {
      stub.setScript([{ status, json: { message: 'upstream trouble' } }]);
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: true, ambiguous: false });
      expect(err.message).toMatch(new RegExp(`^Discord answered HTTP ${status}`));
    });

    it('fails at once on a redirect instead of taking it for a posted message, and does not follow it', async () => {
      stub.setScript([{ status: 301, headers: { location: 'https://elsewhere.invalid/api/v10/channels/1/messages' } }]);
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: false });
      expect(err.message).toMatch(/answered HTTP 301 \(a redirect, not followed\)/);
      expect(stub.requests).toHaveLength(1);
    });

    it('retries a refused connection as transient: nothing was sent', async () => {
      await expectRefusedRetried(
        (url) => channel({ apiBaseUrl: `${url}/api/v10` }).send(message()),
        /^POST http:\/\/127\.0\.0\.1:\d+\/api\/v10\/channels\/\d+\/messages failed: .*ECONNREFUSED/,
      );
    });

    it('ends with the shutdown signal’s reason, not a delivery error, when the service stops', async () => {
      stub.setScript([{ hang: true }]);
      await expectShutdownReason(
        (signal) => channel().send(message({ signal })),
        () => stub.requests.length === 1,
      );
    });

    it('refuses a recipient that is not a channel id before sending', async () => {
      const err = await failure(channel(), { to: '#general' });
      expect(err).toMatchObject({ retryable: false, message: 'to must be a Discord channel id (a snowflake: 17 to 20 digits)' });
      expect(stub.requests).toHaveLength(0);
    });

    it('never lets the token or the reply reach an error or the log, even when Discord echoes them', async () => {
      const log = captureLogger('trace');
      const ch = channel({}, log.logger);
      // only the request that gets no answer needs a short deadline
      const quick = channel({ timeoutMs: 300 }, log.logger);
      const reply = 'SECRET-REPLY-TEXT';
      const answers: ((req: StubRequest) => Answer)[] = [
        (req) => ({
          status: 403,
          json: { message: `Missing Access for ${String(req.headers.authorization)} posting ${req.body.content}`, code: 50001 },
        }),
        (req) => ({
          status: 400,
          json: {
            message: `bad ${req.body.content}`,
            code: 50035,
            errors: { content: { _errors: [{ code: 'X', message: String(req.headers.authorization) }] } },
          },
        }),
        () => ({ status: 429, json: { message: TOKEN, retry_after: 0.1 } }),
        () => ({ status: 500, json: { message: TOKEN } }),
        () => ({ hang: true }),
      ];
      const said = await failuresSaid(stub, answers, (last) => failure(last ? quick : ch, { text: reply }));
      expectNoneOf(said + log.text(), [TOKEN, TOKEN.slice(0, 24), reply]);
    });
  });

  describe('render()', () => {
    it('keeps Discord markdown and disarms mass mentions', () => {
      expect(channel().render!('**Done**, @everyone: see `x`')).toEqual(['**Done**, @\u200deveryone: see `x`']);
    });

    it('keeps code as written: no joiner inside a code span or a code block', () => {
      const md = 'Ping @here.\n\n```sh\necho "@everyone"\n```\n\nand `@here` inline';
      expect(channel().render!(md)).toEqual(['Ping @\u200dhere.\n\n```sh\necho "@everyone"\n```\n\nand `@here` inline']);
    });

    it(`splits a 9,000-character reply into parts of at most 2000 characters and ${DISCORD_MAX_LINES} lines, code blocks closed and reopened`, () => {
      expectSplit(channel().render!(longReply()), { limit: 2000, maxLines: DISCORD_MAX_LINES, fences: true, atLeast: 5 });
    });

    it('splits at textChunkLimit when it is lower', () => {
      expectSplit(channel({ textChunkLimit: 500 }).render!(longReply()), { limit: 500 });
    });

    it('delivers a long reply part by part, in order, each request as the spec describes', async () => {
      stub.setScript((req) => created(req));
      const parts = await deliverParts(channel(), longReply(), (over) => message({ deliveryId: 'd-long', ...over }));
      expect(stub.requests.map((r) => r.body.content)).toEqual(parts);
      expect(new Set(stub.requests.map((r) => r.body.nonce)).size).toBe(parts.length);
    });
  });

  describe('through the outbox', () => {
    it('fails a delivery Discord refuses after one attempt, with Discord’s reason, and keeps the token out of the log and the record', async () => {
      stub.setScript((req) => ({ status: 403, json: { message: `Missing Access (${String(req.headers.authorization)})`, code: 50001 } }));
      const config = { channels: { dc: { type: 'discord', botToken: TOKEN, apiBaseUrl: `${stub.url}/api/v10` } } };
      await expectFailedOnceThroughOutbox(
        stub,
        config,
        { channel: 'dc', to: CHANNEL },
        'Discord error 50001 (HTTP 403): Missing Access (Bot [redacted])',
        [TOKEN],
      );
    });
  });

  describe('checkTo()', () => {
    it.each([
      ['1234567890123456789', undefined],
      ['12345678901234567', undefined],
      ['1234', 'a Discord channel id (a snowflake: 17 to 20 digits)'],
      ['<#1234567890123456789>', 'a Discord channel id (a snowflake: 17 to 20 digits)'],
      ['general', 'a Discord channel id (a snowflake: 17 to 20 digits)'],
    ])('%s → %s', (to, why) => {
      expect(channel().checkTo!(to)).toBe(why);
    });
  });

  describe('config', () => {
    it.each([
      [{ botToken: undefined }, 'channels.dc: missing required key "botToken"'],
      [{ botToken: '' }, 'channels.dc.botToken: must NOT have fewer than 1 characters'],
      [{ apiBaseUrl: 'discord.com/api' }, 'channels.dc.apiBaseUrl: "discord.com/api" is not a URL'],
      [{ apiBaseUrl: 'ftp://discord.com/api' }, 'channels.dc.apiBaseUrl: must be an http:// or https:// URL'],
      [{ textChunkLimit: 2001 }, 'channels.dc.textChunkLimit: must be <= 2000'],
      [{ bot_token: 'x' }, 'channels.dc.bot_token: unknown key (did you mean "botToken"?)'],
    ])('refuses %j naming the key', (slice, issue) => {
      const issues = configIssues(() => channel(slice));
      expect(issues).toContain(issue);
    });

    it('declares the Discord limit, or the lower textChunkLimit, and that it needs a recipient', () => {
      expect(channel().limits).toEqual({ maxTextLength: 2000, requiresTo: true });
      expect(channel({ textChunkLimit: 1500 }).limits).toEqual({ maxTextLength: 1500, requiresTo: true });
    });
  });
});
