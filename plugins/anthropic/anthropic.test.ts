/**
 * The `anthropic` provider against a stand-in for the Messages API over real HTTP, which refuses any
 * request that breaks the API's published shape (test/helpers/anthropic-stand-in.ts): what is sent, the
 * usage read from the answer, and what the run sees when the API rate-limits, is overloaded, refuses the
 * request, stalls or cannot be reached (docs/providers/anthropic.md).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messagesRequestProblems, startAnthropicStandIn, type AnthropicStandIn } from '../../test/helpers/anthropic-stand-in.ts';
import { startStub, type Recorded } from '../../test/helpers/http-stub.ts';
import { callAsRun, configIssues, type Generation } from '../../test/helpers/plugin-tests.ts';
import { agentRequest, captureLogger, testGeneration } from '../../test/helpers/runtime.ts';

const KEY = 'sk-ant-api03-test0123456789abcdefghijklmnopqrstuvwxyz';

describe('the Messages API stand-in', () => {
  const good = {
    model: 'claude-sonnet-5-5',
    max_tokens: 1024,
    system: 'Be brief.',
    messages: [{ role: 'user', content: 'Hello, Claude' }],
  };
  const headers = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
  const request = (json: unknown, over: Partial<Recorded> = {}): Recorded =>
    ({ method: 'POST', url: '/v1/messages', headers, raw: Buffer.from(''), json, aborted: new Promise(() => {}), ...over }) as Recorded;
  const problems = (json: unknown, over: Partial<Recorded> = {}) => messagesRequestProblems(request(json, over), KEY).join('; ');

  it('accepts a request the API takes, with text blocks as well as strings', () => {
    expect(problems(good)).toBe('');
    const blocks = {
      ...good,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    };
    expect(problems(blocks)).toBe('');
  });

  it.each([
    ['a misspelt field', { ...good, max_token: 5 }, /max_token: Extra inputs/],
    ['no max_tokens', { model: 'm', messages: good.messages }, /max_tokens: a positive integer/],
    ['no model', { max_tokens: 5, messages: good.messages }, /model: a model name/],
    ['a system role', { ...good, messages: [{ role: 'system', content: 'x' }] }, /messages.0.role: must be user or assistant/],
    ['empty text', { ...good, messages: [{ role: 'user', content: ' ' }] }, /messages.0.content: text content must be non-empty/],
    ['no messages', { ...good, messages: [] }, /messages: a non-empty list/],
    ['an extra message field', { ...good, messages: [{ role: 'user', content: 'x', name: 'bob' }] }, /messages.0: unexpected name/],
  ])('refuses %s', (_name, body, pattern) => {
    expect(problems(body)).toMatch(pattern);
  });

  it('refuses a wrong path, a missing key or API version, and never quotes the key', () => {
    expect(problems(good, { url: '/v1/v1/messages' })).toMatch(/no such operation: POST \/v1\/v1\/messages/);
    expect(problems(good, { headers: { ...headers, 'x-api-key': 'other' } })).toMatch(/x-api-key: missing or not the key/);
    expect(problems(good, { headers: { ...headers, authorization: `Bearer ${KEY}`, 'x-api-key': undefined } })).not.toContain(KEY);
    expect(problems(good, { headers: { ...headers, 'anthropic-version': undefined } })).toMatch(/anthropic-version: must be 2023-06-01/);
  });
});

describe('anthropic provider', () => {
  let api: AnthropicStandIn;
  beforeAll(async () => {
    api = await startAnthropicStandIn(KEY);
  });
  afterAll(() => api.close());
  afterEach(() => {
    // every request the provider made matched the API's shape
    expect(api.problems.flat()).toEqual([]);
    api.requests.length = 0;
    api.problems.length = 0;
    api.script();
  });

  const gen = (slice: Record<string, unknown> = {}, opts: Parameters<typeof testGeneration>[1] = {}): Generation =>
    testGeneration(
      {
        agents: {
          defaults: { model: 'claude/default' },
          providers: { claude: { type: 'anthropic', apiKey: KEY, baseUrl: api.url, ...slice } },
        },
      },
      opts,
    );
  const provider = (g: Generation) => g.providers.get('claude')!;
  const call = (g: Generation, over: Partial<Parameters<typeof callAsRun>[1]> = {}) =>
    callAsRun(g, {
      runId: 'r1',
      sessionKey: 'hook:s',
      model: 'claude/claude-sonnet-5-5',
      thinking: null,
      messages: [{ role: 'user', content: 'hi' }],
      timeoutMs: 10_000,
      ...over,
    });

  describe('what is sent and what comes back', () => {
    it('posts the transcript to /v1/messages with the key, the API version, max_tokens and system, and returns the reply with its usage', async () => {
      api.script({
        reply: 'the answer',
        usage: { input_tokens: 1200, output_tokens: 85, cache_creation_input_tokens: 300, cache_read_input_tokens: 4000 },
      });
      const g = gen({ systemPrompt: 'Be brief.', models: { default: 'claude-sonnet-5-5' } });
      const messages = [
        { role: 'user' as const, content: 'first' },
        { role: 'assistant' as const, content: 'reply' },
        { role: 'user' as const, content: 'second' },
      ];
      const reply = await provider(g).run(agentRequest({ model: 'default', messages }));
      // every input token billed counts: uncached, written to the cache, read from it
      expect(reply).toEqual({ text: 'the answer', usage: { inputTokens: 5500, outputTokens: 85 } });
      const [req] = api.requests;
      expect(req!.url).toBe('/v1/messages');
      expect(req!.headers['x-api-key']).toBe(KEY);
      expect(req!.headers['anthropic-version']).toBe('2023-06-01');
      expect(req!.json).toEqual({ model: 'claude-sonnet-5-5', max_tokens: 4096, system: 'Be brief.', messages });
    });

    it("sends the agent's instructions as system, in place of systemPrompt", async () => {
      await provider(gen({ systemPrompt: 'Be brief.' })).run(agentRequest({ instructions: 'You are the on-call engineer.' }));
      expect(api.requests[0]!.json.system).toBe('You are the on-call engineer.');
    });

    it('passes a model without an alias as it is, sends maxTokens, and leaves system out when there is none', async () => {
      await provider(gen({ maxTokens: 512 })).run(agentRequest({ model: 'claude-haiku-5-5' }));
      expect(api.requests[0]!.json).toEqual({ model: 'claude-haiku-5-5', max_tokens: 512, messages: [{ role: 'user', content: 'hello' }] });
    });

    it('sends alternating turns that start with the user: system lines to system, empty ones dropped, a run of one role merged', async () => {
      const messages = [
        { role: 'assistant' as const, content: 'a reply whose prompt fell out of the window' },
        { role: 'system' as const, content: 'Answer in French.' },
        { role: 'user' as const, content: 'one' },
        { role: 'user' as const, content: 'two' },
        { role: 'assistant' as const, content: '   ' },
        { role: 'assistant' as const, content: 'un, deux' },
        { role: 'assistant' as const, content: 'trois' },
        { role: 'user' as const, content: 'four' },
      ];
      await provider(gen({ systemPrompt: 'Be brief.' })).run(agentRequest({ messages }));
      expect(api.requests[0]!.json).toMatchObject({
        system: 'Be brief.\n\nAnswer in French.',
        messages: [
          { role: 'user', content: 'one\n\ntwo' },
          { role: 'assistant', content: 'un, deux\n\ntrois' },
          { role: 'user', content: 'four' },
        ],
      });
    });

    it('joins the text blocks of the answer and skips the others', async () => {
      const content = [
        { type: 'thinking', thinking: 'hmm', signature: 'c2ln' },
        { type: 'text', text: 'Hello, ' },
        { type: 'text', text: 'world.' },
      ];
      api.script({ reply: '', content });
      expect((await provider(gen()).run(agentRequest())).text).toBe('Hello, world.');
    });

    it('reports no usage when the answer has none to read', async () => {
      api.script({ reply: 'ok', usage: { input_tokens: undefined as unknown as number } });
      expect(await provider(gen()).run(agentRequest())).toEqual({ text: 'ok' });
    });

    it('ends the run ok through the runtime, with the usage for the run to store', async () => {
      api.script({ reply: 'done', usage: { input_tokens: 40, output_tokens: 2 } });
      expect(await call(gen())).toEqual({ status: 'ok', text: 'done', usage: { inputTokens: 40, outputTokens: 2 } });
    });

    it('goes through the injected fetch', async () => {
      const seen: string[] = [];
      const fakeFetch = (async (url: string | URL | Request) => {
        seen.push(String(url));
        const body = {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'm',
          content: [{ type: 'text', text: 'injected' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 3, output_tokens: 1 },
        };
        return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
      }) as typeof fetch;
      const g = testGeneration(
        {
          agents: {
            defaults: { model: 'claude/m' },
            providers: { claude: { type: 'anthropic', apiKey: KEY, baseUrl: 'http://model.invalid/' } },
          },
        },
        { fetch: fakeFetch },
      );
      expect(await provider(g).run(agentRequest({ model: 'm' }))).toEqual({ text: 'injected', usage: { inputTokens: 3, outputTokens: 1 } });
      expect(seen).toEqual(['http://model.invalid/v1/messages']);
    });
  });

  describe('retries, as the SDK makes them', () => {
    it('retries a rate limit after its retry-after, and the run ends ok', async () => {
      api.script(
        { error: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit', retryAfter: '1' },
        { reply: 'later' },
      );
      expect(await call(gen())).toMatchObject({ status: 'ok', text: 'later' });
      expect(api.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1']);
    });

    it('waits as long as retry-after says: one longer than the run has left ends the run as a timeout, with no retry sent', async () => {
      api.script({ error: 'rate_limit_error', message: 'rate limited', retryAfter: '30' });
      expect(await call(gen(), { timeoutMs: 1_500 })).toEqual({ status: 'timeout', error: 'timed out after 1.5s' });
      expect(api.requests).toHaveLength(1);
    });

    it('retries an overload (529) and the run ends ok', async () => {
      api.script({ error: 'overloaded_error', message: 'Overloaded' }, { reply: 'recovered' });
      expect(await call(gen())).toMatchObject({ status: 'ok', text: 'recovered' });
      expect(api.requests).toHaveLength(2);
    });

    it('gives up after maxRetries and ends the run as error with the status and the reason', async () => {
      api.script(...Array.from({ length: 3 }, () => ({ error: 'overloaded_error' as const, message: 'Overloaded' })));
      const r = await call(gen({ maxRetries: 1 }));
      expect(r).toEqual({ status: 'error', error: `HTTP 529 from ${api.url}/v1/messages: overloaded_error: Overloaded` });
      expect(api.requests).toHaveLength(2);
    });

    it('does not retry a refused request (400): the run ends error with the API message', async () => {
      api.script({
        error: 'invalid_request_error',
        message: 'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-5-5',
      });
      const r = await call(gen({ maxTokens: 100_000 }));
      expect(r).toEqual({
        status: 'error',
        error: `HTTP 400 from ${api.url}/v1/messages: invalid_request_error: max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-5-5`,
      });
      expect(api.requests).toHaveLength(1);
    });

    it('does not retry a wrong key (401), and never shows the key an answer echoes', async () => {
      api.script({ error: 'authentication_error', message: `invalid x-api-key: ${KEY}` });
      const r = (await call(gen())) as { status: string; error: string };
      expect(r.error).toBe(`HTTP 401 from ${api.url}/v1/messages: authentication_error: invalid x-api-key: [redacted]`);
      expect(api.requests).toHaveLength(1);
    });
  });

  describe('failures', () => {
    it('times out at the run deadline: the request is cancelled and the run is a timeout', async () => {
      api.script({ hang: true });
      expect(await call(gen(), { timeoutMs: 300 })).toEqual({ status: 'timeout', error: 'timed out after 0.3s' });
      await api.requests[0]!.aborted;
    });

    it('reports a network error with its cause, once the retries are spent', async () => {
      const closed = await startStub();
      const url = closed.url;
      await closed.close();
      const g = testGeneration({
        agents: { defaults: { model: 'c/m' }, providers: { c: { type: 'anthropic', apiKey: KEY, baseUrl: url, maxRetries: 0 } } },
      });
      const r = (await call(g, { model: 'c/m' })) as { status: string; error: string };
      expect(r.status).toBe('error');
      expect(r.error).toMatch(new RegExp(`^request to ${url}/v1/messages failed: .*ECONNREFUSED`));
    });

    it('ends the run as error when the model refuses and writes no text', async () => {
      api.script({ reply: '', content: [], stopReason: 'refusal' });
      expect(await call(gen())).toEqual({ status: 'error', error: 'the model refused to answer' });
    });

    it('logs statuses and timings, never the key, the prompt or the reply', async () => {
      const { logger, text } = captureLogger('trace');
      api.script({ error: 'overloaded_error', message: `Overloaded ${KEY}` }, { reply: 'secret reply' });
      await provider(gen({}, { logger })).run(agentRequest({ messages: [{ role: 'user', content: 'secret prompt' }] }));
      expect(text()).toContain('"status":529');
      expect(text()).toContain('"status":200');
      for (const s of [KEY, 'secret prompt', 'secret reply']) expect(text()).not.toContain(s);
    });
  });

  describe('config', () => {
    const issuesOf = (slice: Record<string, unknown>) =>
      configIssues(() => testGeneration({ agents: { defaults: { model: 'c/m' }, providers: { c: { type: 'anthropic', ...slice } } } }));

    it('defaults baseUrl to the API, maxTokens to 4096 and maxRetries to 2', () => {
      const g = testGeneration({ agents: { defaults: { model: 'c/m' }, providers: { c: { type: 'anthropic', apiKey: KEY } } } });
      expect(g.config.agents.providers.c).toMatchObject({ baseUrl: 'https://api.anthropic.com', maxTokens: 4096, maxRetries: 2 });
    });

    it.each([
      ['no apiKey', {}, 'agents.providers.c: missing required key "apiKey"'],
      [
        '/v1 in baseUrl',
        { apiKey: KEY, baseUrl: 'https://api.anthropic.com/v1' },
        'agents.providers.c.baseUrl: leave out /v1: the SDK adds /v1/messages',
      ],
      [
        'a baseUrl without a scheme',
        { apiKey: KEY, baseUrl: 'localhost:8080' },
        'agents.providers.c.baseUrl: must be an http:// or https:// URL',
      ],
      ['a baseUrl that is no URL', { apiKey: KEY, baseUrl: 'not a url' }, 'agents.providers.c.baseUrl: "not a url" is not a URL'],
      ['too many retries', { apiKey: KEY, maxRetries: 11 }, 'agents.providers.c.maxRetries: must be <= 10'],
      ['maxTokens 0', { apiKey: KEY, maxTokens: 0 }, 'agents.providers.c.maxTokens: must be >= 1'],
      ['an unknown key', { apiKey: KEY, max_tokens: 10 }, 'agents.providers.c.max_tokens: unknown key'],
    ])('refuses %s, naming the key', (_name, slice, message) => {
      const issues = issuesOf(slice);
      expect(
        issues.some((m) => m.startsWith(message)),
        issues.join('\n'),
      ).toBe(true);
      expect(issues.join()).not.toContain(KEY);
    });
  });
});
