/**
 * The `msteams` channel against a stand-in for Entra's token endpoint and the
 * Bot Framework Connector: every activity is checked against the Connector's
 * published Swagger (ConnectorAPI.json), every token request against the
 * OAuth 2.0 client-credentials grant, and each class of answer maps to its
 * retry rule.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChannelError, type Channel } from 'hook-intake/plugin';
import { startProviderStub, type Answer, type ProviderStub } from '../../test/helpers/provider-stub.ts';
import { clientCredentialsCheck } from '../../test/helpers/provider-checks.ts';
import { expectNoneOf, expectRefusedRetried, expectShutdownReason, expectSplit, shownOf } from '../../test/helpers/channel-cases.ts';
import { msteamsSpec } from '../../test/helpers/provider-specs.ts';
import { configIssues } from '../../test/helpers/plugin-tests.ts';
import { captureLogger, channelMessage, testGeneration } from '../../test/helpers/runtime.ts';
import { RENEW_BEFORE_MS } from './token.ts';

const APP_ID = '00000000-1111-2222-3333-444444444444';
const APP_PASSWORD = 'teams~app~password~Qz81.x';
const NOW = Date.parse('2030-01-01T00:00:00Z');
const CONVERSATION = '19:abc123@thread.tacv2';
const TOKEN_PATH = '/tenant/oauth2/v2.0/token';
const token = (n: number) => `eyJ0eXAiOiJKV1Qi.token-${n}.sig`;

/** The client-credentials grant as RFC 6749 §4.4 and Entra's v2 endpoint take it. */
const checkTokenRequest = clientCredentialsCheck(APP_ID, APP_PASSWORD);

const connector = msteamsSpec({ prefix: '/teams' });

describe('msteams channel', () => {
  let stub: ProviderStub;
  let tokens: Answer[];
  let activities: Answer[];
  let issued: number;
  let now: number;

  beforeAll(async () => {
    stub = await startProviderStub({
      validate: (req) => (req.path === TOKEN_PATH ? checkTokenRequest(req) : connector(req)),
      script: (req) => {
        if (req.path === TOKEN_PATH)
          return tokens.shift() ?? { status: 200, json: { token_type: 'Bearer', expires_in: 3599, access_token: token(++issued) } };
        return activities.shift() ?? { status: 201, json: { id: '1731234567890' } };
      },
    });
  });
  afterAll(() => stub.close());
  afterEach(() => {
    stub.expectClean();
    stub.requests.length = 0;
  });
  beforeEach(() => {
    tokens = [];
    activities = [];
    issued = 0;
    now = NOW;
  });

  const config = (slice: Record<string, unknown> = {}) => ({
    type: 'msteams',
    appId: APP_ID,
    appPassword: APP_PASSWORD,
    serviceUrl: `${stub.url}/teams/`,
    tokenUrl: `${stub.url}${TOKEN_PATH}`,
    ...slice,
  });
  const channel = (slice: Record<string, unknown> = {}, opts: Parameters<typeof testGeneration>[1] = {}): Channel =>
    testGeneration({ channels: { teams: config(slice) } }, { clock: () => now, ...opts }).channels.get('teams')!.channel;
  const message = (over: Parameters<typeof channelMessage>[0] = {}) => channelMessage({ to: CONVERSATION, text: 'the **reply**', ...over });
  const failure = async (ch: Channel, over: Parameters<typeof channelMessage>[0] = {}) =>
    (await ch.send(message(over)).catch((e: unknown) => e)) as ChannelError;
  const activityRequests = () => stub.requests.filter((r) => r.path !== TOKEN_PATH);
  const tokenRequests = () => stub.requests.filter((r) => r.path === TOKEN_PATH);

  describe('send()', () => {
    it('gets a token by client credentials and posts a markdown message activity to the conversation', async () => {
      await channel().send(message());
      expect(tokenRequests()).toHaveLength(1);
      const [req] = activityRequests();
      expect(req!.method).toBe('POST');
      expect(req!.path).toBe(`/teams/v3/conversations/${encodeURIComponent(CONVERSATION)}/activities`);
      expect(req!.headers.authorization).toBe(`Bearer ${token(1)}`);
      expect(req!.body).toEqual({ type: 'message', text: 'the **reply**', textFormat: 'markdown' });
      expect(connector(req!)).toEqual([]);
    });

    it('keeps the token until shortly before it expires, by the injected clock', async () => {
      const ch = channel();
      await ch.send(message());
      now = NOW + 3599_000 - RENEW_BEFORE_MS - 1;
      await ch.send(message());
      expect(tokenRequests()).toHaveLength(1);
      now += 1;
      await ch.send(message());
      expect(tokenRequests()).toHaveLength(2);
      expect(activityRequests().map((r) => r.headers.authorization)).toEqual([
        `Bearer ${token(1)}`,
        `Bearer ${token(1)}`,
        `Bearer ${token(2)}`,
      ]);
    });

    it('asks for one token when several parts are sent at once', async () => {
      const ch = channel();
      await Promise.all([1, 2, 3].map((part) => ch.send(message({ part, parts: 3 }))));
      expect(tokenRequests()).toHaveLength(1);
      expect(activityRequests()).toHaveLength(3);
    });

    it('fetches a fresh token once when the Connector answers 401, and sends again with it', async () => {
      activities = [{ status: 401, json: { error: { code: 'Unauthorized', message: 'token expired' } } }];
      await channel().send(message());
      expect(tokenRequests()).toHaveLength(2);
      expect(activityRequests().map((r) => r.headers.authorization)).toEqual([`Bearer ${token(1)}`, `Bearer ${token(2)}`]);
    });

    it('fails at once when the fresh token is refused too, with the Connector code and message', async () => {
      const refused: Answer = { status: 401, json: { error: { code: 'BotNotRegistered', message: 'The bot is not registered' } } };
      activities = [refused, refused];
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err.retryable).toBe(false);
      expect(err.message).toBe('HTTP 401 BotNotRegistered: The bot is not registered');
      expect(activityRequests()).toHaveLength(2);
    });

    it.each([
      [429, { 'retry-after': '7' }, { code: 'Throttled', message: 'slow down' }, true, 7000],
      [403, {}, { code: 'BotDisabledByAdmin', message: 'The bot is not installed in this team' }, false, undefined],
      [404, {}, { code: 'ConversationNotFound', message: 'Conversation not found.' }, false, undefined],
      [413, {}, { code: 'MessageSizeTooBig', message: 'Message size too big' }, false, undefined],
      [400, {}, { code: 'BadArgument', message: 'Unknown activity type' }, false, undefined],
      [408, {}, { code: 'Timeout', message: 'timed out' }, true, undefined],
      [412, {}, { code: 'PreconditionFailed', message: 'conflict' }, true, undefined],
      [500, {}, { code: 'ServiceError', message: 'internal' }, true, undefined],
      [502, { 'retry-after': '3' }, { code: 'BadGateway', message: 'bad gateway' }, true, 3000],
    ])('classifies HTTP %i %j %j as retryable=%s, retryAfterMs=%s', async (status, headers, error, retryable, retryAfterMs) => {
      activities = [{ status, json: { error }, headers: headers as Record<string, string> }];
      const err = await failure(channel());
      expect(err).toBeInstanceOf(ChannelError);
      expect(err.message).toBe(`HTTP ${status} ${error.code}: ${error.message}`);
      expect(err.retryable).toBe(retryable);
      expect(err.retryAfterMs).toBe(retryAfterMs);
      expect(err.ambiguous).toBe(false);
    });

    it('treats a connection that breaks after the request left as ambiguous', async () => {
      activities = [{ destroy: true }];
      const err = await failure(channel());
      expect(err).toMatchObject({ retryable: true, ambiguous: true });
      expect(err.message).toMatch(/failed after sending: .*; the message may have been posted$/);
    });

    it('ends with the shutdown signal’s reason when the service stops, waiting for a token or for the Connector', async () => {
      tokens = [{ hang: true }];
      await expectShutdownReason(
        (signal) => channel().send(message({ signal })),
        () => tokenRequests().length === 1,
      );
      activities = [{ hang: true }];
      await expectShutdownReason(
        (signal) => channel().send(message({ signal })),
        () => activityRequests().length === 1,
      );
    });

    it('treats a Connector that does not answer within timeoutMs as ambiguous', async () => {
      activities = [{ hang: true }];
      const err = await failure(channel({ timeoutMs: 200 }));
      expect(err).toMatchObject({ retryable: true, ambiguous: true });
      expect(err.message).toBe(
        `no answer from ${stub.url}/teams/v3/conversations/${encodeURIComponent(CONVERSATION)}/activities within 200 ms; the message may have been posted`,
      );
    });

    it('treats a refused connection as an ordinary retry: nothing can have been posted', async () => {
      await expectRefusedRetried((url) => channel({ serviceUrl: `${url}/teams` }).send(message()), /ECONNREFUSED/);
    });

    it.each([
      [
        { status: 401, json: { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' } },
        false,
        'HTTP 401 invalid_client: AADSTS7000215: Invalid client secret provided.',
      ],
      [
        { status: 400, json: { error: 'unauthorized_client', error_description: 'AADSTS700016: Application not found in the directory.' } },
        false,
        'HTTP 400 unauthorized_client: AADSTS700016: Application not found in the directory.',
      ],
      [
        { status: 503, json: { error: 'temporarily_unavailable', error_description: 'try later' } },
        true,
        'HTTP 503 temporarily_unavailable: try later',
      ],
    ] as const)('classifies a token endpoint answer %j (retryable=%s) and sends nothing', async (answer, retryable, reason) => {
      tokens = [answer as Answer];
      const err = await failure(channel());
      expect(err).toMatchObject({ retryable, ambiguous: false });
      expect(err.message).toBe(`token request to ${stub.url}${TOKEN_PATH}: ${reason}`);
      expect(activityRequests()).toHaveLength(0);
    });

    it('never treats a broken token request as ambiguous: it posts nothing', async () => {
      tokens = [{ destroy: true }];
      expect(await failure(channel())).toMatchObject({ retryable: true, ambiguous: false });
    });

    it('asks login.microsoftonline.com for the tenant by default, and posts to the configured serviceUrl', async () => {
      const urls: string[] = [];
      const fakeFetch = (async (url: string | URL) => {
        urls.push(String(url));
        return String(url).includes('/oauth2/')
          ? Response.json({ access_token: 'abc', expires_in: 3600 })
          : Response.json({ id: '1' }, { status: 201 });
      }) as typeof fetch;
      const ch = testGeneration(
        { channels: { teams: { type: 'msteams', appId: APP_ID, appPassword: APP_PASSWORD, tenantId: 'contoso.onmicrosoft.com' } } },
        { fetch: fakeFetch },
      ).channels.get('teams')!.channel;
      await ch.send(message({ to: 'a:1xYz' }));
      expect(urls).toEqual([
        'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token',
        'https://smba.trafficmanager.net/teams/v3/conversations/a%3A1xYz/activities',
      ]);
    });
  });

  describe('render()', () => {
    it('keeps the Markdown and writes & and < outside code as entities, so no markup or mention gets through', () => {
      const reply = 'Hi <at>Everyone</at> & <b>all</b>: **done**, `a < b`\n\n> quoted <i>\n\n```html\n<div>kept</div>\n```';
      expect(channel().render!(reply)).toEqual([
        'Hi &lt;at>Everyone&lt;/at> &amp; &lt;b>all&lt;/b>: **done**, `a < b`\n\n> quoted &lt;i>\n\n```html\n<div>kept</div>\n```',
      ]);
    });

    it('keeps code blocks nested in list items and quotes as written', () => {
      const reply = '1. run:\n   ```sh\n   echo `a < b` && c\n   ```\n2. then <b>x</b>\n\n> quoted:\n> ~~~\n> x < y\n> ~~~\n> after <i>';
      expect(channel().render!(reply)).toEqual([
        '1. run:\n   ```sh\n   echo `a < b` && c\n   ```\n2. then &lt;b>x&lt;/b>\n\n> quoted:\n> ~~~\n> x < y\n> ~~~\n> after &lt;i>',
      ]);
    });

    it('splits a 9,000-character reply into parts of at most 4,000 characters, each sent in order as an activity the spec accepts', async () => {
      const reply = Array.from({ length: 100 }, (_, i) => `Paragraph ${i} says ${'something & more '.repeat(5)}`.trim()).join('\n\n');
      expect(reply.length).toBeGreaterThanOrEqual(9000);
      const ch = channel();
      const parts = ch.render!(reply);
      // the limit applies to the rendered text, which &amp; makes 12,388 characters long
      expect(parts.length).toBe(4);
      expectSplit(parts, { limit: 4000, pieces: [] });
      expect(parts.join('\n\n')).toBe(reply.replaceAll('&', '&amp;'));
      for (const [i, text] of parts.entries()) await ch.send(message({ text, part: i + 1, parts: parts.length }));
      expect(activityRequests().map((r) => r.body.text)).toEqual(parts);
    });

    it('closes a code block cut between parts and reopens it in the next', () => {
      const code = Array.from({ length: 400 }, (_, i) => `if (a < ${i}) b();`).join('\n');
      const parts = channel().render!(`Here:\n\n\`\`\`ts\n${code}\n\`\`\``);
      expect(parts[0]).toBe('Here:');
      expect(parts.length).toBe(3);
      for (const part of parts.slice(1)) {
        expect(part.startsWith('```ts\n')).toBe(true);
        expect(part.endsWith('\n```')).toBe(true);
        expect(part.length).toBeLessThanOrEqual(4000);
      }
      expect(parts.join('\n')).toContain('if (a < 399) b();');
    });

    it('lowers the limit with textChunkLimit', () => {
      expectSplit(channel({ textChunkLimit: 500 }).render!('word '.repeat(1000)), { limit: 500, atLeast: 10, pieces: [] });
    });
  });

  describe('config and recipients', () => {
    const issuesOf = (slice: Record<string, unknown>) => configIssues(() => testGeneration({ channels: { teams: slice } }));

    it.each([
      [
        { type: 'msteams', appId: APP_ID, appPassword: APP_PASSWORD },
        'channels.teams.tenantId: is required (the Entra tenant of the app registration) unless tokenUrl is given',
      ],
      [
        { type: 'msteams', appId: APP_ID, appPassword: APP_PASSWORD, tenantId: 't', serviceUrl: 'nope' },
        'channels.teams.serviceUrl: "nope" is not a URL',
      ],
      [{ type: 'msteams', appId: APP_ID, tenantId: 't' }, 'channels.teams: missing required key "appPassword"'],
      [
        { type: 'msteams', appId: APP_ID, appPassword: APP_PASSWORD, tenantId: 't', textChunkLimit: 5000 },
        'channels.teams.textChunkLimit: must be <= 4000',
      ],
      [
        { type: 'msteams', appId: APP_ID, appPassword: APP_PASSWORD, tenantId: 'a/b' },
        'channels.teams.tenantId: must match ^[A-Za-z0-9.-]+$',
      ],
    ])('refuses %j naming the key', (slice, issue) => {
      expect(issuesOf(slice)).toContain(issue);
    });

    it('takes conversation ids and names the expected form for anything else', () => {
      const ch = channel();
      for (const to of [
        CONVERSATION,
        'a:1Hxyz-AbC_9',
        '19:meeting_M2Iz@thread.v2',
        '29:1abc',
        '19:abc@thread.skype;messageid=1731234567890',
      ])
        expect(ch.checkTo!(to)).toBeUndefined();
      for (const to of ['general', '', 'a: b', ':abc']) expect(ch.checkTo!(to)).toBe('a Teams conversation id (19:…@thread.tacv2, a:…)');
      expect(ch.limits).toEqual({ requiresTo: true, maxTextLength: 4000 });
      expect(channel({ textChunkLimit: 1000 }).limits?.maxTextLength).toBe(1000);
    });
  });

  it('never lets the app password or a token reach an error or the log, even when the service echoes them', async () => {
    const log = captureLogger('trace');
    const echo = `secret ${APP_PASSWORD} / ${encodeURIComponent(APP_PASSWORD)}`;
    const ch = channel({ timeoutMs: 200 }, { logger: log.logger });
    const seen: string[] = [];
    const collect = async () => {
      seen.push(shownOf(await failure(ch)));
    };
    tokens = [{ status: 401, json: { error: 'invalid_client', error_description: echo } }];
    await collect();
    tokens = [{ status: 500, text: echo }];
    await collect();
    // from here on the token endpoint grants token(1), which the Connector echoes back with the reply
    activities = [{ status: 403, json: { error: { code: 'Forbidden', message: `${echo} ${token(1)}` } } }];
    await collect();
    activities = [{ status: 400, text: `${echo} ${token(1)} the **reply**` }];
    await collect();
    activities = [{ hang: true }];
    await collect();
    const out = seen.join('\n') + log.text();
    expect(out).toContain('[redacted]');
    expectNoneOf(out, [APP_PASSWORD, encodeURIComponent(APP_PASSWORD), token(1), 'the **reply**']);
  });
});
