/**
 * The `mattermost` channel against a stand-in for a Mattermost server on
 * 127.0.0.1: every request is checked against Mattermost's published API
 * description (CreatePost), and the stand-in's answers script the server's
 * behaviours (429 with Retry-After or X-Ratelimit-Reset, permission and
 * channel errors, 5xx, a hang, the pending_post_id dedupe).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from 'hook-intake/plugin';
import { mattermostSpec } from '../../test/helpers/provider-specs.ts';
import {
  always,
  startProviderStub,
  type Answer,
  type ProviderStub,
  type StubRequest,
  type Validate,
} from '../../test/helpers/provider-stub.ts';
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
import { pendingPostId, rateLimitWait } from './channel.ts';

const TOKEN = 'mmtokenfortestsonly0123456789';
const CHANNEL = 'nhze199c4j87ped4wannrjdt9c';
const NOW = Date.parse('2030-01-01T00:00:00Z');

/**
 * CreatePost as Mattermost publishes it, except one field: its request schema
 * omits `pending_post_id`, which the server reads when creating a post (it is
 * a field of `Post`, which the request body is decoded into, and the key of
 * the server's 30-second dedupe). That field is checked to be a string, as
 * `Post.pending_post_id` is; everything else is checked as published.
 */
const validate: Validate = (req) => {
  const problems = mattermostSpec()(req).filter((p) => p !== 'body/pending_post_id is not a field in the spec');
  if (typeof req.body?.pending_post_id !== 'string') problems.push('body/pending_post_id must be a string (Post.pending_post_id)');
  return problems;
};

/** The server's answer to CreatePost: the post. */
const created = (req: StubRequest): Answer => ({
  status: 201,
  json: {
    id: 'a1b2c3d4e5f6g7h8i9j0k1l2m3',
    channel_id: req.body.channel_id,
    message: req.body.message,
    pending_post_id: req.body.pending_post_id,
  },
});

describe('mattermost channel', () => {
  let stub: ProviderStub;
  beforeAll(async () => {
    stub = await startProviderStub({ validate });
  });
  afterAll(() => stub.close());
  afterEach(() => {
    // every request any test made is one Mattermost's published API description accepts
    stub.expectClean();
    for (const req of stub.requests) expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
    stub.requests.length = 0;
  });

  const channel = (slice: Record<string, unknown> = {}, logger = captureLogger().logger): Channel =>
    testGeneration(
      { channels: { mm: { type: 'mattermost', url: stub.url, token: TOKEN, ...slice } } },
      { logger, clock: () => NOW },
    ).channels.get('mm')!.channel;
  const message = (over: Parameters<typeof channelMessage>[0] = {}) => channelMessage({ to: CHANNEL, ...over });
  const failure = async (ch: Channel, over: Parameters<typeof channelMessage>[0] = {}) =>
    (await ch.send(message(over)).catch((e: unknown) => e)) as ChannelError;

  describe('send()', () => {
    it('POSTs {channel_id, message, pending_post_id} to /api/v4/posts with the Bearer token', async () => {
      stub.setScript((req) => created(req));
      await channel({ url: `${stub.url}/` }).send(message({ text: 'the **reply**', deliveryId: 'd-3', part: 2, parts: 2 }));
      const [req] = stub.requests;
      expect(req!.path).toBe('/api/v4/posts');
      expect(req!.body).toEqual({ channel_id: CHANNEL, message: 'the **reply**', pending_post_id: pendingPostId('d-3', 2) });
    });

    it('derives a pending_post_id the same for every attempt at a part and different per part', () => {
      expect(pendingPostId('d-1', 1)).toMatch(/^[a-z0-9]{26}$/);
      expect(pendingPostId('d-1', 1)).toBe(pendingPostId('d-1', 1));
      expect(pendingPostId('d-1', 2)).not.toBe(pendingPostId('d-1', 1));
    });

    it('posts a part once when the answer is lost and the part is retried within the server’s 30 seconds', async () => {
      // the server returns the post a pending_post_id it has seen made; the first answer is lost
      const byPending = new Map<string, Answer>();
      stub.setScript((req) => {
        const seen = byPending.get(req.body.pending_post_id);
        if (seen) return seen;
        byPending.set(req.body.pending_post_id, created(req));
        return { hang: true };
      });
      const ch = channel({ timeoutMs: 300 });
      expect(await failure(ch, { deliveryId: 'd-5' })).toMatchObject({ retryable: true, ambiguous: true });
      // the retry may come from a restarted service: the key depends only on the delivery and part
      await channel().send(message({ deliveryId: 'd-5', attempt: 2 }));
      expect(stub.requests).toHaveLength(2);
      expect(byPending.size).toBe(1);
    });

    it.each([
      ['Retry-After', { 'retry-after': '7' }, 7000],
      ['X-Ratelimit-Reset in seconds', { 'x-ratelimit-reset': '3' }, 3000],
      ['X-Ratelimit-Reset as a Unix time', { 'x-ratelimit-reset': String(NOW / 1000 + 12) }, 12_000],
    ])('is rate limited on 429 with the server’s hint (%s)', async (_name, headers, ms) => {
      stub.setScript([
        { status: 429, text: 'limit exceeded\n', headers: { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', ...headers } },
      ]);
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: true, ambiguous: false, retryAfterMs: ms, message: 'Mattermost HTTP 429 limit exceeded' });
    });

    it('reads no hint from a header that is neither', () => {
      expect(rateLimitWait(new Headers({ 'x-ratelimit-reset': 'soon' }), NOW)).toBeUndefined();
      expect(rateLimitWait(new Headers(), NOW)).toBeUndefined();
    });

    it.each([
      [400, 'api.post.create_post.channel_id.app_error', 'Invalid channel id.'],
      [401, 'api.context.session_expired.app_error', 'Invalid or expired session, please login again.'],
      [403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.'],
      [404, 'app.channel.get.existing.app_error', 'Unable to find the existing channel.'],
    ])('fails at once on HTTP %i with the server’s id and message', async (status, id, text) => {
      stub.setScript([{ status, json: { id, message: text, request_id: 'r1', status_code: status, is_oauth: false } }]);
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: false, ambiguous: false, message: `Mattermost HTTP ${status} ${id}: ${text}` });
    });

    it.each([500, 502, 503])('retries HTTP %i as transient', async (status) => {
      stub.setScript([{ status, json: { id: 'api.post.deduplicate_create_post.pending', message: 'try again' } }]);
      expect(await failure(channel())).toMatchObject({ retryable: true, ambiguous: false });
    });

    it('treats a connection the server drops after receiving the post as ambiguous', async () => {
      stub.setScript([{ destroy: true }]);
      const err = await failure(channel());
      expect(err).toMatchObject({ retryable: true, ambiguous: true });
      expect(err.message).toMatch(
        /^POST http:\/\/127\.0\.0\.1:\d+\/api\/v4\/posts failed after sending: .*; the message may have been posted$/,
      );
    });

    it('retries a refused connection as transient: nothing was sent', async () => {
      await expectRefusedRetried(
        (url) => channel({ url }).send(message()),
        /^POST http:\/\/127\.0\.0\.1:\d+\/api\/v4\/posts failed: .*ECONNREFUSED/,
      );
    });

    it('ends with the shutdown signal’s reason when the service stops', async () => {
      stub.setScript([{ hang: true }]);
      await expectShutdownReason(
        (signal) => channel().send(message({ signal })),
        () => stub.requests.length === 1,
      );
    });

    it('refuses a recipient that is not a channel id before sending', async () => {
      const err = await failure(channel(), { to: 'town-square' });
      expect(err).toMatchObject({ retryable: false, message: 'to must be a Mattermost channel id (26 lower-case letters and digits)' });
      expect(stub.requests).toHaveLength(0);
    });

    it('never lets the token or the reply reach an error or the log, even when the server echoes them', async () => {
      const log = captureLogger('trace');
      const ch = channel({}, log.logger);
      // only the request that gets no answer needs a short deadline
      const quick = channel({ timeoutMs: 200 }, log.logger);
      const reply = 'SECRET-REPLY-TEXT';
      const answers: ((req: StubRequest) => Answer)[] = [
        (req) => ({ status: 401, json: { id: String(req.headers.authorization), message: `bad token for ${req.body.message}` } }),
        (req) => ({ status: 429, json: { message: String(req.headers.authorization) } }),
        (req) => ({ status: 500, json: { message: String(req.headers.authorization) } }),
        () => ({ hang: true }),
      ];
      const said = await failuresSaid(stub, answers, (last) => failure(last ? quick : ch, { text: reply }));
      expectNoneOf(said + log.text(), [TOKEN, reply]);
    });
  });

  describe('render()', () => {
    it('keeps the Markdown, which Mattermost shows itself, and makes mass mentions inert', () => {
      expect(channel().render!('**Done** @channel @all @here, ask @alice')).toEqual([
        '**Done** @\u200dchannel @\u200dall @\u200dhere, ask @alice',
      ]);
    });

    it('splits a 9,000-character reply into posts of at most 4000 characters, code blocks closed and reopened', () => {
      expectSplit(channel().render!(longReply()), { limit: 4000, fences: true, atLeast: 3 });
    });

    it('splits at textChunkLimit when it is lower', () => {
      expectSplit(channel({ textChunkLimit: 1000 }).render!(longReply()), { limit: 1000 });
    });

    it('delivers a long reply post by post, in order, each request as the API description says', async () => {
      stub.setScript(always({ status: 201, json: { id: 'a1b2c3d4e5f6g7h8i9j0k1l2m3' } }));
      const parts = await deliverParts(channel(), longReply(), (over) => message({ deliveryId: 'd-long', ...over }));
      expect(stub.requests.map((r) => r.body.message)).toEqual(parts);
      expect(new Set(stub.requests.map((r) => r.body.pending_post_id)).size).toBe(parts.length);
    });
  });

  describe('through the outbox', () => {
    it('fails a delivery Mattermost refuses after one attempt, with Mattermost’s reason, and keeps the token out of the log and the record', async () => {
      stub.setScript((req) => ({
        status: 403,
        json: { id: 'api.context.permissions.app_error', message: `no permission for ${String(req.headers.authorization)}` },
      }));
      const config = { channels: { mm: { type: 'mattermost', url: stub.url, token: TOKEN } } };
      const reason = 'Mattermost HTTP 403 api.context.permissions.app_error: no permission for Bearer [redacted]';
      await expectFailedOnceThroughOutbox(stub, config, { channel: 'mm', to: CHANNEL }, reason, [TOKEN]);
    });
  });

  describe('checkTo()', () => {
    const why = 'a Mattermost channel id (26 lower-case letters and digits)';
    it.each([
      [CHANNEL, undefined],
      ['town-square', why],
      ['NHZE199C4J87PED4WANNRJDT9C', why],
      [`${CHANNEL}x`, why],
    ])('%s → %s', (to, expected) => {
      expect(channel().checkTo!(to)).toBe(expected);
    });
  });

  describe('config', () => {
    it.each([
      [{ token: undefined }, 'channels.mm: missing required key "token"'],
      [{ url: 'chat.example.com' }, 'channels.mm.url: "chat.example.com" is not a URL'],
      [{ url: 'https://chat.example.com/?x=1' }, 'channels.mm.url: must be a plain base URL, without credentials, query or fragment'],
      [{ textChunkLimit: 4001 }, 'channels.mm.textChunkLimit: must be <= 4000'],
    ])('refuses %j naming the key', (slice, issue) => {
      const issues = configIssues(() => channel(slice));
      expect(issues).toContain(issue);
    });

    it('declares the Mattermost limit, or the lower textChunkLimit, and that it needs a recipient', () => {
      expect(channel().limits).toEqual({ maxTextLength: 4000, requiresTo: true });
      expect(channel({ textChunkLimit: 1000 }).limits).toEqual({ maxTextLength: 1000, requiresTo: true });
    });
  });
});
