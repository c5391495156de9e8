/**
 * The `slack` channel against a stand-in for Slack's Web API on 127.0.0.1:
 * every request is checked against the method's parameters in Slack's
 * published OpenAPI description, and the stand-in's answers script Slack's
 * behaviours (429 with Retry-After, `ok: false` errors, 5xx, a hang).
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from '../../src/plugins/define.ts';
import { ConfigError } from '../../src/errors.ts';
import { json, startStub, type HttpStub, type Recorded } from '../../test/helpers/http-stub.ts';
import { captureLogger, channelMessage, testGeneration } from '../../test/helpers/runtime.ts';

const TOKEN = 'xoxb-1111111111-2222222222-slacktokenfortestsonly';
const CHANNEL = 'C0123ABCDEF';
const USER = 'U0123ABCDEF';
const DM = 'D0999ZYXWVU';
const NOW = Date.parse('2030-01-01T00:00:00Z');

interface Param {
  name: string;
  in: string;
  type?: string;
  required?: boolean;
}
const spec = JSON.parse(readFileSync(new URL('../../test/fixtures/specs/slack/slack_web_openapi_v2_without_examples.json', import.meta.url), 'utf8'));

/** The form fields of a request, checked against the method's `formData` parameters: known names, types, required ones present. */
function checkAgainstSpec(req: Recorded): Record<string, string> {
  const method = req.url.replace(/^\/api\//, '');
  const op = spec.paths[`/${method}`]?.post as { parameters: Param[] } | undefined;
  expect(op, `method ${method}`).toBeDefined();
  expect(req.method).toBe('POST');
  expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
  expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
  const fields = Object.fromEntries(new URLSearchParams(req.raw.toString('utf8')));
  const params = new Map(op!.parameters.filter((p) => p.in === 'formData').map((p) => [p.name, p]));
  for (const [name, value] of Object.entries(fields)) {
    const p = params.get(name);
    expect(p, `${method}: unknown parameter ${name}`).toBeDefined();
    if (p!.type === 'boolean') expect(['true', 'false', '1', '0'], `${method}: ${name} is a boolean`).toContain(value);
  }
  for (const p of params.values()) if (p.required) expect(fields, `${method}: ${p.name} is required`).toHaveProperty(p.name);
  return fields;
}

const fieldsOf = (req: Recorded) => Object.fromEntries(new URLSearchParams(req.raw.toString('utf8')));
const posted = (res: ServerResponse, channel = CHANNEL) => json(res, 200, { ok: true, channel, ts: '1893456000.000100', message: { type: 'message', text: 'x', ts: '1893456000.000100' } });

describe('slack channel', () => {
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
    testGeneration({ channels: { sl: { type: 'slack', botToken: TOKEN, apiBaseUrl: `${stub.url}/api`, ...slice } } }, { logger, clock: () => NOW }).channels.get('sl')!.channel;
  const message = (over: Parameters<typeof channelMessage>[0] = {}) => channelMessage({ to: CHANNEL, ...over });
  const failure = async (ch: Channel, over: Parameters<typeof channelMessage>[0] = {}) => (await ch.send(message(over)).catch((e: unknown) => e)) as ChannelError;

  describe('send()', () => {
    it('posts the part with chat.postMessage, without link or media previews', async () => {
      stub.handler = (_req, res) => posted(res);
      await channel().send(message({ text: 'the *reply*' }));
      const [req] = stub.requests;
      expect(req!.url).toBe('/api/chat.postMessage');
      expect(fieldsOf(req!)).toEqual({ channel: CHANNEL, text: 'the *reply*', unfurl_links: 'false', unfurl_media: 'false' });
    });

    it('opens the direct message of a user id once, and posts there', async () => {
      stub.handler = (req, res) => (req.url === '/api/conversations.open' ? json(res, 200, { ok: true, channel: { id: DM } }) : posted(res, DM));
      const ch = channel();
      await ch.send(message({ to: USER }));
      await ch.send(message({ to: USER, deliveryId: 'd-2' }));
      expect(stub.requests.map((r) => `${r.url} ${JSON.stringify(fieldsOf(r))}`)).toEqual([
        `/api/conversations.open {"users":"${USER}"}`,
        `/api/chat.postMessage {"channel":"${DM}","text":"the reply","unfurl_links":"false","unfurl_media":"false"}`,
        `/api/chat.postMessage {"channel":"${DM}","text":"the reply","unfurl_links":"false","unfurl_media":"false"}`,
      ]);
    });

    it.each([
      ['delta seconds', '30', 30_000],
      ['an HTTP date', new Date(NOW + 45_000).toUTCString(), 45_000],
    ])('is rate limited with Retry-After on 429 (%s)', async (_name, retryAfter, ms) => {
      stub.handler = (_req, res) => json(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': retryAfter });
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err).toMatchObject({ retryable: true, ambiguous: false, retryAfterMs: ms, message: `rate limited by Slack: retry after ${ms} ms` });
    });

    it('is rate limited without a hint on a 429 that gives none', async () => {
      stub.handler = (_req, res) => json(res, 429, { ok: false, error: 'ratelimited' });
      const err = await failure(channel());
      expect(err).toMatchObject({ retryable: true, ambiguous: false, retryAfterMs: undefined, message: 'rate limited by Slack' });
    });

    it.each(['channel_not_found', 'not_in_channel', 'is_archived', 'invalid_auth', 'account_inactive', 'not_authed', 'msg_too_long'])(
      'fails at once on %s, with Slack’s code as the reason',
      async (code) => {
        stub.handler = (_req, res) => json(res, 200, { ok: false, error: code });
        const err = await failure(channel());
        expect(err).toBeInstanceOf(ChannelError);
        expect(err).toMatchObject({ retryable: false, message: `Slack chat.postMessage: ${code}` });
      },
    );

    it('names the scope Slack says is missing', async () => {
      stub.handler = (_req, res) => json(res, 200, { ok: false, error: 'missing_scope', needed: 'chat:write', provided: 'channels:read' });
      expect(await failure(channel())).toMatchObject({ retryable: false, message: 'Slack chat.postMessage: missing_scope (needs chat:write)' });
    });

    it.each([
      ['internal_error', true],
      ['fatal_error', true],
      ['service_unavailable', false],
      ['request_timeout', false],
    ])('retries %s (ambiguous: %s, as Slack says whether part of it may have happened)', async (code, ambiguous) => {
      stub.handler = (_req, res) => json(res, 200, { ok: false, error: code });
      expect(await failure(channel())).toMatchObject({ retryable: true, ambiguous, message: `Slack chat.postMessage: ${code}` });
    });

    it.each([500, 503])('retries HTTP %i as transient', async (status) => {
      stub.handler = (_req, res) => json(res, status, { ok: false });
      expect(await failure(channel())).toMatchObject({ retryable: true, ambiguous: false });
    });

    it('fails at once when the user of a direct message does not exist', async () => {
      stub.handler = (_req, res) => json(res, 200, { ok: false, error: 'user_not_found' });
      expect(await failure(channel(), { to: USER })).toMatchObject({ retryable: false, message: 'Slack conversations.open: user_not_found' });
      expect(stub.requests).toHaveLength(1);
    });

    it('treats a post with no answer as ambiguous, but opening a direct message with none as safe to retry', async () => {
      stub.handler = () => undefined;
      const ch = channel({ timeoutMs: 200 });
      expect(await failure(ch)).toMatchObject({ retryable: true, ambiguous: true });
      expect(await failure(ch, { to: USER })).toMatchObject({ retryable: true, ambiguous: false });
    });

    it('retries a refused connection as transient: nothing was sent', async () => {
      const gone = await startStub();
      await gone.close();
      const g = testGeneration({ channels: { sl: { type: 'slack', botToken: TOKEN, apiBaseUrl: `${gone.url}/api/` } } });
      const err = (await g.channels.get('sl')!.channel.send(message()).catch((e: unknown) => e)) as ChannelError;
      expect(err).toMatchObject({ retryable: true, ambiguous: false });
      expect(err.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/api\/chat\.postMessage failed: .*ECONNREFUSED/);
    });

    it('ends with the shutdown signal’s reason when the service stops', async () => {
      stub.handler = () => undefined;
      const stop = new AbortController();
      const sending = channel().send(message({ signal: stop.signal }));
      await new Promise((r) => setTimeout(r, 50));
      stop.abort(new Error('shutting down'));
      await expect(sending).rejects.toThrow('shutting down');
    });

    it('refuses a recipient that is not a channel or user id before sending', async () => {
      const err = await failure(channel(), { to: '#general' });
      expect(err).toMatchObject({ retryable: false, message: 'to must be a Slack channel id (C…, G…, D…) or user id (U…, W…; the reply goes to a direct message)' });
      expect(stub.requests).toHaveLength(0);
    });

    it('never lets the token or the reply reach an error or the log, even when Slack echoes them', async () => {
      const log = captureLogger('trace');
      const ch = channel({ timeoutMs: 200 }, log.logger);
      const reply = 'SECRET-REPLY-TEXT';
      const texts: string[] = [];
      const answers: ((req: Recorded, res: ServerResponse) => void)[] = [
        (req, res) => json(res, 200, { ok: false, error: `invalid_auth ${String(req.headers.authorization)} ${fieldsOf(req).text}` }),
        (req, res) => json(res, 500, { ok: false, error: String(req.headers.authorization) }),
        (req, res) => json(res, 200, `not json ${String(req.headers.authorization)}`),
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
      let issues: string[] = [];
      try {
        channel(slice);
      } catch (err) {
        issues = (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
      }
      expect(issues.some((i) => i.startsWith(issue))).toBe(true);
    });

    it('declares the Slack limit, or the lower textChunkLimit, and that it needs a recipient', () => {
      expect(channel().limits).toEqual({ maxTextLength: 4000, requiresTo: true });
      expect(channel({ textChunkLimit: 3000 }).limits).toEqual({ maxTextLength: 3000, requiresTo: true });
    });
  });
});
