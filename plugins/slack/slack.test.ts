/**
 * The `slack` channel against a stand-in for Slack's Web API on 127.0.0.1:
 * every request is checked against the method's parameters in Slack's
 * published OpenAPI description, and the stand-in's answers script Slack's
 * behaviours (429 with Retry-After, `ok: false` errors, 5xx, a hang).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from 'hook-intake/plugin';
import { slackSpec } from '../../test/helpers/provider-specs.ts';
import { always, startProviderStub, type Answer, type ProviderStub, type StubRequest } from '../../test/helpers/provider-stub.ts';
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

const TOKEN = 'xoxb-1111111111-2222222222-slacktokenfortestsonly';
const CHANNEL = 'C0123ABCDEF';
const USER = 'U0123ABCDEF';
const DM = 'D0999ZYXWVU';
const NOW = Date.parse('2030-01-01T00:00:00Z');

/** Slack's answer to chat.postMessage. */
const posted = (channel = CHANNEL): Answer => ({
  status: 200,
  json: { ok: true, channel, ts: '1893456000.000100', message: { type: 'message', text: 'x', ts: '1893456000.000100' } },
});
const slackError = (error: string, more: Record<string, unknown> = {}): Answer => ({ status: 200, json: { ok: false, error, ...more } });

describe('slack channel', () => {
  let stub: ProviderStub;
  beforeAll(async () => {
    stub = await startProviderStub({ validate: slackSpec() });
  });
  afterAll(() => stub.close());
  afterEach(() => {
    // every request any test made is one Slack's published spec accepts
    stub.expectClean();
    for (const req of stub.requests) {
      expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(req.contentType).toBe('application/x-www-form-urlencoded');
    }
    stub.requests.length = 0;
  });

  const channel = (slice: Record<string, unknown> = {}, logger = captureLogger().logger): Channel =>
    testGeneration(
      { channels: { sl: { type: 'slack', botToken: TOKEN, apiBaseUrl: `${stub.url}/api`, ...slice } } },
      { logger, clock: () => NOW },
    ).channels.get('sl')!.channel;
  const message = (over: Parameters<typeof channelMessage>[0] = {}) => channelMessage({ to: CHANNEL, ...over });
  const failure = async (ch: Channel, over: Parameters<typeof channelMessage>[0] = {}) =>
    (await ch.send(message(over)).catch((e: unknown) => e)) as ChannelError;

  describe('send()', () => {
    it('posts the part with chat.postMessage, without link or media previews', async () => {
      stub.setScript(always(posted()));
      await channel().send(message({ text: 'the *reply*' }));
      const [req] = stub.requests;
      expect(req!.path).toBe('/api/chat.postMessage');
      expect(req!.body).toEqual({ channel: CHANNEL, text: 'the *reply*', unfurl_links: 'false', unfurl_media: 'false' });
    });

    it('opens the direct message of a user id once, and posts there', async () => {
      stub.setScript((req) =>
        req.path === '/api/conversations.open' ? { status: 200, json: { ok: true, channel: { id: DM } } } : posted(DM),
      );
      const ch = channel();
      await ch.send(message({ to: USER }));
      await ch.send(message({ to: USER, deliveryId: 'd-2' }));
      expect(stub.requests.map((r) => `${r.path} ${JSON.stringify(r.body)}`)).toEqual([
        `/api/conversations.open {"users":"${USER}"}`,
        `/api/chat.postMessage {"channel":"${DM}","text":"the reply","unfurl_links":"false","unfurl_media":"false"}`,
        `/api/chat.postMessage {"channel":"${DM}","text":"the reply","unfurl_links":"false","unfurl_media":"false"}`,
      ]);
    });

    it.each([
      ['delta seconds', '30', 30_000],
      ['an HTTP date', new Date(NOW + 45_000).toUTCString(), 45_000],
    ])('is rate limited with Retry-After on 429 (%s)', async (_name, retryAfter, ms) => {
      stub.setScript([{ status: 429, json: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': retryAfter } }]);
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({
        retryable: true,
        ambiguous: false,
        retryAfterMs: ms,
        message: `rate limited by Slack: retry after ${ms} ms`,
      });
    });

    it('is rate limited without a hint on a 429 that gives none', async () => {
      stub.setScript([{ status: 429, json: { ok: false, error: 'ratelimited' } }]);
      const err = await failure(channel());
      expect(err).toMatchObject({ retryable: true, ambiguous: false, retryAfterMs: undefined, message: 'rate limited by Slack' });
    });

    it.each(['channel_not_found', 'not_in_channel', 'is_archived', 'invalid_auth', 'account_inactive', 'not_authed', 'msg_too_long'])(
      'fails at once on %s, with Slack’s code as the reason',
      async (code) => {
        stub.setScript([slackError(code)]);
        const err = await failure(channel());
        expect(err).toBeInstanceOf(ChannelError);
        expect(err).toMatchObject({ retryable: false, message: `Slack chat.postMessage: ${code}` });
      },
    );

    it('names the scope Slack says is missing', async () => {
      stub.setScript([slackError('missing_scope', { needed: 'chat:write', provided: 'channels:read' })]);
      expect(await failure(channel())).toMatchObject({
        retryable: false,
        message: 'Slack chat.postMessage: missing_scope (needs chat:write)',
      });
    });

    it.each([
      ['internal_error', true],
      ['fatal_error', true],
      ['service_unavailable', false],
      ['request_timeout', false],
    ])('retries %s (ambiguous: %s, as Slack says whether part of it may have happened)', async (code, ambiguous) => {
      stub.setScript([slackError(code)]);
      expect(await failure(channel())).toMatchObject({ retryable: true, ambiguous, message: `Slack chat.postMessage: ${code}` });
    });

    it.each([500, 503])('retries HTTP %i as transient', async (status) => {
      stub.setScript([{ status, json: { ok: false } }]);
      expect(await failure(channel())).toMatchObject({ retryable: true, ambiguous: false });
    });

    it('fails at once when the user of a direct message does not exist', async () => {
      stub.setScript([slackError('user_not_found')]);
      expect(await failure(channel(), { to: USER })).toMatchObject({
        retryable: false,
        message: 'Slack conversations.open: user_not_found',
      });
      expect(stub.requests).toHaveLength(1);
    });

    it('treats a post with no answer as ambiguous, but opening a direct message with none as safe to retry', async () => {
      stub.setScript(always({ hang: true }));
      const ch = channel({ timeoutMs: 200 });
      expect(await failure(ch)).toMatchObject({ retryable: true, ambiguous: true });
      expect(await failure(ch, { to: USER })).toMatchObject({ retryable: true, ambiguous: false });
    });

    it('retries a refused connection as transient: nothing was sent', async () => {
      await expectRefusedRetried(
        (url) => channel({ apiBaseUrl: `${url}/api/` }).send(message()),
        /^POST http:\/\/127\.0\.0\.1:\d+\/api\/chat\.postMessage failed: .*ECONNREFUSED/,
      );
    });

    it('ends with the shutdown signal’s reason when the service stops', async () => {
      stub.setScript([{ hang: true }]);
      await expectShutdownReason(
        (signal) => channel().send(message({ signal })),
        () => stub.requests.length === 1,
      );
    });

    it('refuses a recipient that is not a channel or user id before sending', async () => {
      const err = await failure(channel(), { to: '#general' });
      expect(err).toMatchObject({
        retryable: false,
        message: 'to must be a Slack channel id (C…, G…, D…) or user id (U…, W…; the reply goes to a direct message)',
      });
      expect(stub.requests).toHaveLength(0);
    });

    it('never lets the token or the reply reach an error or the log, even when Slack echoes them', async () => {
      const log = captureLogger('trace');
      const ch = channel({}, log.logger);
      // only the request that gets no answer needs a short deadline
      const quick = channel({ timeoutMs: 200 }, log.logger);
      const reply = 'SECRET-REPLY-TEXT';
      const answers: ((req: StubRequest) => Answer)[] = [
        (req) => slackError(`invalid_auth ${String(req.headers.authorization)} ${req.body.text}`),
        (req) => ({ status: 500, json: { ok: false, error: String(req.headers.authorization) } }),
        (req) => ({ status: 200, json: `not json ${String(req.headers.authorization)}` }),
        () => ({ hang: true }),
      ];
      const said = await failuresSaid(stub, answers, (last) => failure(last ? quick : ch, { text: reply }));
      expectNoneOf(said + log.text(), [TOKEN, reply]);
    });
  });

  describe('render()', () => {
    it('renders mrkdwn and escapes what Slack would read as a mention or a link', () => {
      expect(channel().render!('**Done** <!channel> <!here> <@U0123ABCD> & [docs](https://example.com/a?b=1&c=2)')).toEqual([
        '*Done* &lt;!channel&gt; &lt;!here&gt; &lt;@U0123ABCD&gt; &amp; <https://example.com/a?b=1&amp;c=2|docs>',
      ]);
    });

    it('splits a 9,000-character reply into parts of at most 4000 characters, code blocks closed and reopened', () => {
      expectSplit(channel().render!(longReply()), { limit: 4000, fences: true, atLeast: 3 });
    });

    it('splits at textChunkLimit when it is lower', () => {
      expectSplit(channel({ textChunkLimit: 1000 }).render!(longReply()), { limit: 1000 });
    });

    it('delivers a long reply part by part, in order, each request as the spec describes', async () => {
      stub.setScript(always(posted()));
      const parts = await deliverParts(channel(), longReply(), (over) => message({ deliveryId: 'd-long', ...over }));
      expect(stub.requests.map((r) => r.body.text)).toEqual(parts);
    });
  });

  describe('through the outbox', () => {
    it('fails a delivery Slack refuses after one attempt, with Slack’s reason, and keeps the token out of the log and the record', async () => {
      stub.setScript(always(slackError('not_in_channel')));
      const config = { channels: { sl: { type: 'slack', botToken: TOKEN, apiBaseUrl: `${stub.url}/api` } } };
      await expectFailedOnceThroughOutbox(stub, config, { channel: 'sl', to: CHANNEL }, 'Slack chat.postMessage: not_in_channel', [TOKEN]);
    });
  });

  describe('checkTo()', () => {
    const why = 'a Slack channel id (C…, G…, D…) or user id (U…, W…; the reply goes to a direct message)';
    it.each([
      ['C0123ABCDEF', undefined],
      ['G0123ABCD', undefined],
      ['D0123ABCD', undefined],
      ['U0123ABCD', undefined],
      ['W0123ABCD', undefined],
      ['#general', why],
      ['c0123abcdef', why],
      ['X0123ABCD', why],
      ['<@U0123ABCD>', why],
    ])('%s → %s', (to, expected) => {
      expect(channel().checkTo!(to)).toBe(expected);
    });
  });

  describe('config', () => {
    it.each([
      [{ botToken: undefined }, 'channels.sl: missing required key "botToken"'],
      [{ apiBaseUrl: 'slack.com/api' }, 'channels.sl.apiBaseUrl: "slack.com/api" is not a URL'],
      [{ textChunkLimit: 4001 }, 'channels.sl.textChunkLimit: must be <= 4000'],
      [{ token: 'x' }, 'channels.sl.token: unknown key'],
    ])('refuses %j naming the key', (slice, issue) => {
      const issues = configIssues(() => channel(slice));
      expect(issues.some((i) => i.startsWith(issue))).toBe(true);
    });

    it('declares the Slack limit, or the lower textChunkLimit, and that it needs a recipient', () => {
      expect(channel().limits).toEqual({ maxTextLength: 4000, requiresTo: true });
      expect(channel({ textChunkLimit: 3000 }).limits).toEqual({ maxTextLength: 3000, requiresTo: true });
    });
  });
});
