/**
 * The `mattermost` channel against a stand-in for a Mattermost server on
 * 127.0.0.1: every request is checked against Mattermost's published API
 * description (CreatePost), and the stand-in's answers script the server's
 * behaviours (429 with Retry-After or X-Ratelimit-Reset, permission and
 * channel errors, 5xx, a hang, the pending_post_id dedupe).
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from '../../src/plugins/define.ts';
import { ConfigError } from '../../src/errors.ts';
import { json, startStub, type HttpStub, type Recorded } from '../../test/helpers/http-stub.ts';
import { captureLogger, channelMessage, testGeneration } from '../../test/helpers/runtime.ts';
import { pendingPostId, rateLimitWait } from './channel.ts';

const TOKEN = 'mmtokenfortestsonly0123456789';
const CHANNEL = 'nhze199c4j87ped4wannrjdt9c';
const NOW = Date.parse('2030-01-01T00:00:00Z');

const read = (name: string) => parse(readFileSync(new URL(`../../test/fixtures/specs/mattermost/${name}`, import.meta.url), 'utf8'));
const ajv = new Ajv({ strict: false, logger: false, allErrors: true });
ajv.addSchema({ openapi: '3.0.0', info: { title: 'Mattermost', version: '4' }, paths: read('posts.yaml'), ...read('definitions.yaml'), $id: 'mm' });
const createPost = ajv.getSchema('mm#/paths/~1api~1v4~1posts/post/requestBody/content/application~1json/schema')!;

/** Fails the test unless `req` is a CreatePost request as Mattermost's API description has it. */
function checkAgainstSpec(req: Recorded): void {
  expect(req.method).toBe('POST');
  expect(req.url).toBe('/api/v4/posts');
  expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
  expect(req.headers['content-type']).toMatch(/^application\/json/);
  expect(createPost(req.json), JSON.stringify(createPost.errors)).toBe(true);
}

const created = (req: Recorded) => ({ id: 'a1b2c3d4e5f6g7h8i9j0k1l2m3', channel_id: req.json.channel_id, message: req.json.message, pending_post_id: req.json.pending_post_id });

describe('mattermost channel', () => {
  let stub: HttpStub;
  beforeAll(async () => {
    stub = await startStub();
  });
  afterAll(() => stub.close());
  afterEach(() => {
    for (const req of stub.requests) checkAgainstSpec(req);
    stub.requests.length = 0;
  });

  const channel = (slice: Record<string, unknown> = {}, logger = captureLogger().logger): Channel =>
    testGeneration({ channels: { mm: { type: 'mattermost', url: stub.url, token: TOKEN, ...slice } } }, { logger, clock: () => NOW }).channels.get('mm')!.channel;
  const message = (over: Parameters<typeof channelMessage>[0] = {}) => channelMessage({ to: CHANNEL, ...over });
  const failure = async (ch: Channel, over: Parameters<typeof channelMessage>[0] = {}) => (await ch.send(message(over)).catch((e: unknown) => e)) as ChannelError;

  describe('send()', () => {
    it('POSTs {channel_id, message, pending_post_id} to /api/v4/posts with the Bearer token', async () => {
      stub.handler = (req, res) => json(res, 201, created(req));
      await channel({ url: `${stub.url}/` }).send(message({ text: 'the **reply**', deliveryId: 'd-3', part: 2, parts: 2 }));
      const [req] = stub.requests;
      expect(req!.json).toEqual({ channel_id: CHANNEL, message: 'the **reply**', pending_post_id: pendingPostId('d-3', 2) });
    });

    it('derives a pending_post_id the same for every attempt at a part and different per part', () => {
      expect(pendingPostId('d-1', 1)).toMatch(/^[a-z0-9]{26}$/);
      expect(pendingPostId('d-1', 1)).toBe(pendingPostId('d-1', 1));
      expect(pendingPostId('d-1', 2)).not.toBe(pendingPostId('d-1', 1));
    });

    it('posts a part once when the answer is lost and the part is retried within the server’s 30 seconds', async () => {
      const byPending = new Map<string, unknown>();
      stub.handler = (req, res) => {
        const first = !byPending.has(req.json.pending_post_id);
        if (first) byPending.set(req.json.pending_post_id, created(req));
        if (first) return;
        json(res, 201, byPending.get(req.json.pending_post_id));
      };
      const ch = channel({ timeoutMs: 300 });
      expect(await failure(ch, { deliveryId: 'd-5' })).toMatchObject({ retryable: true, ambiguous: true });
      await ch.send(message({ deliveryId: 'd-5', attempt: 2 }));
      expect(stub.requests).toHaveLength(2);
      expect(byPending.size).toBe(1);
    });

    it.each([
      ['Retry-After', { 'retry-after': '7' }, 7000],
      ['X-Ratelimit-Reset in seconds', { 'x-ratelimit-reset': '3' }, 3000],
      ['X-Ratelimit-Reset as a Unix time', { 'x-ratelimit-reset': String(NOW / 1000 + 12) }, 12_000],
    ])('is rate limited on 429 with the server’s hint (%s)', async (_name, headers, ms) => {
      stub.handler = (_req, res) => {
        res.writeHead(429, { 'content-type': 'text/plain', 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', ...headers });
        res.end('limit exceeded\n');
      };
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
      stub.handler = (_req, res) => json(res, status, { id, message: text, request_id: 'r1', status_code: status, is_oauth: false });
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: false, ambiguous: false, message: `Mattermost HTTP ${status} ${id}: ${text}` });
    });

    it.each([500, 502, 503])('retries HTTP %i as transient', async (status) => {
      stub.handler = (_req, res) => json(res, status, { id: 'api.post.deduplicate_create_post.pending', message: 'try again' });
      expect(await failure(channel())).toMatchObject({ retryable: true, ambiguous: false });
    });

    it('retries a refused connection as transient: nothing was sent', async () => {
      const gone = await startStub();
      await gone.close();
      const g = testGeneration({ channels: { mm: { type: 'mattermost', url: gone.url, token: TOKEN } } });
      const err = (await g.channels.get('mm')!.channel.send(message()).catch((e: unknown) => e)) as ChannelError;
      expect(err).toMatchObject({ retryable: true, ambiguous: false });
      expect(err.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/api\/v4\/posts failed: .*ECONNREFUSED/);
    });

    it('ends with the shutdown signal’s reason when the service stops', async () => {
      stub.handler = () => undefined;
      const stop = new AbortController();
      const sending = channel().send(message({ signal: stop.signal }));
      await new Promise((r) => setTimeout(r, 50));
      stop.abort(new Error('shutting down'));
      await expect(sending).rejects.toThrow('shutting down');
    });

    it('refuses a recipient that is not a channel id before sending', async () => {
      const err = await failure(channel(), { to: 'town-square' });
      expect(err).toMatchObject({ retryable: false, message: 'to must be a Mattermost channel id (26 lower-case letters and digits)' });
      expect(stub.requests).toHaveLength(0);
    });

    it('never lets the token or the reply reach an error or the log, even when the server echoes them', async () => {
      const log = captureLogger('trace');
      const ch = channel({ timeoutMs: 200 }, log.logger);
      const reply = 'SECRET-REPLY-TEXT';
      const texts: string[] = [];
      const answers: ((req: Recorded, res: ServerResponse) => void)[] = [
        (req, res) => json(res, 401, { id: String(req.headers.authorization), message: `bad token for ${req.json.message}` }),
        (req, res) => json(res, 429, { message: String(req.headers.authorization) }),
        (req, res) => json(res, 500, { message: String(req.headers.authorization) }),
        () => undefined,
      ];
      for (const answer of answers) {
        stub.handler = answer;
        const err = await failure(ch, { text: reply });
        texts.push(err.message, String(err), JSON.stringify(err));
      }
      const all = texts.join('\n') + log.text();
      for (const secret of [TOKEN, reply]) expect(all).not.toContain(secret);
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
      let issues: string[] = [];
      try {
        channel(slice);
      } catch (err) {
        issues = (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
      }
      expect(issues).toContain(issue);
    });

    it('declares the Mattermost limit, or the lower textChunkLimit, and that it needs a recipient', () => {
      expect(channel().limits).toEqual({ maxTextLength: 4000, requiresTo: true });
      expect(channel({ textChunkLimit: 1000 }).limits).toEqual({ maxTextLength: 1000, requiresTo: true });
    });
  });
});
