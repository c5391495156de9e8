/**
 * The `openai` provider against a local OpenAI-compatible stand-in over real
 * HTTP: what reaches the endpoint, and what the run sees when the endpoint
 * answers, fails, stalls or talks nonsense.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { completion, json, startStub, type HttpStub } from '../../test/helpers/http-stub.ts';
import { callAsRun, configIssues, type Generation } from '../../test/helpers/plugin-tests.ts';
import { agentRequest, captureLogger, testGeneration } from '../../test/helpers/runtime.ts';

const KEY = 'sk-test-0123456789abcdefghijklmnop';

describe('openai provider', () => {
  let stub: HttpStub;
  beforeAll(async () => {
    stub = await startStub();
  });
  afterAll(() => stub.close());
  afterEach(() => {
    stub.requests.length = 0;
  });

  const gen = (slice: Record<string, unknown>, opts: Parameters<typeof testGeneration>[1] = {}): Generation =>
    testGeneration(
      { agents: { defaults: { model: 'llm/default' }, providers: { llm: { type: 'openai', baseUrl: `${stub.url}/v1`, ...slice } } } },
      { env: { OPENAI_API_KEY: KEY }, ...opts },
    );
  const provider = (g: Generation) => g.providers.get('llm')!;
  const call = (g: Generation, over: Partial<Parameters<typeof callAsRun>[1]> = {}) =>
    callAsRun(g, {
      runId: 'r1',
      sessionKey: 'hook:s',
      model: 'llm/default',
      thinking: null,
      messages: [{ role: 'user', content: 'hi' }],
      timeoutMs: 5_000,
      ...over,
    });

  describe('success', () => {
    it('posts the transcript to /chat/completions with the key, extra headers and params, and returns the first choice', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('the answer'));
      const g = gen({
        apiKeyEnv: 'OPENAI_API_KEY',
        headers: { 'X-Title': 'hook-intake' },
        params: { temperature: 0.2 },
        systemPrompt: 'Be brief.',
      });
      const messages = [
        { role: 'user' as const, content: 'first' },
        { role: 'assistant' as const, content: 'reply' },
        { role: 'user' as const, content: 'second' },
      ];
      const reply = await provider(g).run(agentRequest({ model: 'gpt-x', messages }));
      expect(reply).toEqual({ text: 'the answer' });
      const [req] = stub.requests;
      expect(req!.method).toBe('POST');
      expect(req!.url).toBe('/v1/chat/completions');
      expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req!.headers['x-title']).toBe('hook-intake');
      expect(req!.headers['content-type']).toBe('application/json');
      expect(req!.json).toEqual({
        model: 'gpt-x',
        messages: [{ role: 'system', content: 'Be brief.' }, ...messages],
        temperature: 0.2,
        stream: false,
      });
    });

    it('maps a model alias to the real model name, and passes unknown names through', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('ok'));
      const g = gen({ models: { fast: 'llama3.2:3b-instruct-q4' } });
      await provider(g).run(agentRequest({ model: 'fast' }));
      await provider(g).run(agentRequest({ model: 'qwen3:8b' }));
      expect(stub.requests.map((r) => r.json.model)).toEqual(['llama3.2:3b-instruct-q4', 'qwen3:8b']);
    });

    it('takes the model from the part after provider/ in the run', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('ok'));
      const r = await call(gen({ models: { default: 'gpt-4.1-mini' } }));
      expect(r).toEqual({ status: 'ok', text: 'ok' });
      expect(stub.requests[0]!.json.model).toBe('gpt-4.1-mini');
    });

    it('sends thinking as reasoning_effort when reasoningEffort is on, mapped by reasoningEffortMap', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('ok'));
      const g = gen({ reasoningEffort: true, reasoningEffortMap: { xhigh: 'high', off: null } });
      for (const thinking of ['low', 'high', 'xhigh', 'off', 'minimal']) await provider(g).run(agentRequest({ thinking }));
      expect(stub.requests.map((r) => r.json.reasoning_effort)).toEqual(['low', 'high', 'high', undefined, 'minimal']);
    });

    it('maps off to "none" by default', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('ok'));
      await provider(gen({ reasoningEffort: true })).run(agentRequest({ thinking: 'off' }));
      expect(stub.requests[0]!.json.reasoning_effort).toBe('none');
    });

    it('leaves reasoning_effort out when reasoningEffort is off (the default) or no thinking is asked', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('ok'));
      await provider(gen({})).run(agentRequest({ thinking: 'high' }));
      await provider(gen({ reasoningEffort: true })).run(agentRequest({ thinking: null }));
      expect(stub.requests.map((r) => 'reasoning_effort' in r.json)).toEqual([false, false]);
    });

    it('keeps a query in baseUrl (Azure api-version) and sends header overrides such as api-key', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('ok'));
      const g = gen({ baseUrl: `${stub.url}/openai/deployments/d1/?api-version=2024-10-21`, headers: { 'api-key': 'azure-key-123456' } });
      await provider(g).run(agentRequest());
      expect(stub.requests[0]!.url).toBe('/openai/deployments/d1/chat/completions?api-version=2024-10-21');
      expect(stub.requests[0]!.headers['api-key']).toBe('azure-key-123456');
    });

    it('sends no Authorization header without a key (local servers)', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('ok'));
      await provider(gen({})).run(agentRequest());
      expect(stub.requests[0]!.headers.authorization).toBeUndefined();
    });

    it('goes through the injected fetch', async () => {
      const seen: { url: string; body: unknown }[] = [];
      const fakeFetch = (async (url: string | URL | Request, init?: RequestInit) => {
        seen.push({ url: String(url), body: JSON.parse(String(init?.body)) });
        return new Response(JSON.stringify(completion('from the injected fetch')), { status: 200 });
      }) as typeof fetch;
      const g = testGeneration(
        { agents: { defaults: { model: 'llm/m' }, providers: { llm: { type: 'openai', baseUrl: 'http://model.invalid/v1/' } } } },
        { fetch: fakeFetch },
      );
      expect(await provider(g).run(agentRequest({ model: 'm' }))).toEqual({ text: 'from the injected fetch' });
      expect(seen).toMatchObject([{ url: 'http://model.invalid/v1/chat/completions', body: { model: 'm' } }]);
    });

    it('reports the usage the endpoint gives: prompt_tokens as input, completion_tokens as output', async () => {
      stub.handler = (_req, res) =>
        json(res, 200, {
          ...(completion('ok') as object),
          usage: {
            prompt_tokens: 1250,
            completion_tokens: 310,
            total_tokens: 1560,
            prompt_tokens_details: { cached_tokens: 1024 },
            completion_tokens_details: { reasoning_tokens: 256 },
          },
        });
      expect(await provider(gen({})).run(agentRequest())).toEqual({ text: 'ok', usage: { inputTokens: 1250, outputTokens: 310 } });
    });

    it.each([
      ['no usage', undefined],
      ['usage: null', null],
      ['a count missing', { prompt_tokens: 12 }],
      ['a count not a number', { prompt_tokens: '12', completion_tokens: 3 }],
    ])('reports no usage when the answer has %s', async (_name, usage) => {
      stub.handler = (_req, res) => json(res, 200, { ...(completion('ok') as object), ...(usage === undefined ? {} : { usage }) });
      expect(await provider(gen({})).run(agentRequest())).toEqual({ text: 'ok' });
    });

    it('joins the text parts of a content array', async () => {
      stub.handler = (_req, res) =>
        json(res, 200, {
          choices: [
            {
              message: {
                role: 'assistant',
                content: [
                  { type: 'text', text: 'a' },
                  { type: 'text', text: 'b' },
                ],
              },
            },
          ],
        });
      expect(await provider(gen({})).run(agentRequest())).toEqual({ text: 'ab' });
    });
  });

  describe('failures', () => {
    it('times out at the run deadline: the request is cancelled and the run is a timeout', async () => {
      stub.handler = () => undefined; // never answers
      const r = await call(gen({}), { timeoutMs: 300 });
      expect(r).toEqual({ status: 'timeout', error: 'timed out after 0.3s' });
      await stub.requests[0]!.aborted; // the stand-in saw the connection go away
    });

    it('rejects with the abort reason when the signal fires while the answer is being read', async () => {
      stub.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"choices":[');
      };
      const ac = new AbortController();
      const p = provider(gen({})).run(agentRequest({ signal: ac.signal }));
      await new Promise((r) => setTimeout(r, 100));
      const reason = new Error('deadline');
      ac.abort(reason);
      await expect(p).rejects.toBe(reason);
    });

    it('reports a 4xx with the status and the endpoint message, never the key', async () => {
      stub.handler = (_req, res) =>
        json(res, 401, {
          error: { message: `Incorrect API key provided: ${KEY}. You can find your API key at …`, type: 'invalid_request_error' },
        });
      const r = await call(gen({ apiKeyEnv: 'OPENAI_API_KEY' }));
      expect(r.status).toBe('error');
      const error = (r as { error: string }).error;
      expect(error).toContain(`HTTP 401 from ${stub.url}/v1/chat/completions: Incorrect API key provided: [redacted]`);
      expect(error).not.toContain(KEY);
    });

    it('reports a 5xx with the body text shortened', async () => {
      stub.handler = (_req, res) => {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end(`upstream overloaded ${'x'.repeat(5000)}`);
      };
      const r = (await call(gen({}))) as { status: string; error: string };
      expect(r.status).toBe('error');
      expect(r.error).toMatch(/^HTTP 503 from .*: upstream overloaded x+…$/);
      expect(r.error.length).toBeLessThan(500);
    });

    it.each([
      ['not JSON', (res: Parameters<typeof json>[0]) => res.end('<html>gateway</html>'), /malformed reply from .*: not JSON/],
      [
        'no choices',
        (res: Parameters<typeof json>[0]) => json(res, 200, { object: 'chat.completion' }),
        /malformed reply: no choices\[0\]\.message/,
      ],
      [
        'null content',
        (res: Parameters<typeof json>[0]) => json(res, 200, { choices: [{ message: { content: null } }] }),
        /content is not text/,
      ],
      [
        'a refusal',
        (res: Parameters<typeof json>[0]) => json(res, 200, { choices: [{ message: { content: null, refusal: 'I cannot help' } }] }),
        /the model refused: I cannot help/,
      ],
    ])('reports a malformed reply (%s)', async (_name, answer, pattern) => {
      stub.handler = (_req, res) => answer(res);
      const r = (await call(gen({}))) as { status: string; error: string };
      expect(r.status).toBe('error');
      expect(r.error).toMatch(pattern);
    });

    it('refuses a reply larger than maxResponseBytes', async () => {
      stub.handler = (_req, res) => json(res, 200, completion('y'.repeat(4096)));
      const r = (await call(gen({ maxResponseBytes: 1024 }))) as { error: string };
      expect(r.error).toMatch(/larger than maxResponseBytes \(1024\)/);
    });

    it('reports a network error with its cause', async () => {
      const closed = await startStub();
      const url = closed.url;
      await closed.close();
      const g = testGeneration({ agents: { defaults: { model: 'llm/m' }, providers: { llm: { type: 'openai', baseUrl: url } } } });
      const r = (await call(g, { model: 'llm/m' })) as { status: string; error: string };
      expect(r.status).toBe('error');
      expect(r.error).toMatch(new RegExp(`request to ${url}/chat/completions failed: .*ECONNREFUSED`));
    });

    it('logs status and timing but neither the key, the prompt nor the reply', async () => {
      const { logger, text } = captureLogger('trace');
      stub.handler = (req, res) =>
        req.json.messages[0].content === 'secret prompt'
          ? json(res, 200, completion('secret reply'))
          : json(res, 500, { error: { message: `bad ${KEY}` } });
      const g = gen({ apiKeyEnv: 'OPENAI_API_KEY' }, { logger });
      await provider(g).run(agentRequest({ messages: [{ role: 'user', content: 'secret prompt' }] }));
      await expect(provider(g).run(agentRequest({ messages: [{ role: 'user', content: 'other' }] }))).rejects.toThrow(/HTTP 500/);
      expect(text()).toContain('"status":200');
      expect(text()).toContain('"status":500');
      for (const s of [KEY, 'secret prompt', 'secret reply']) expect(text()).not.toContain(s);
    });
  });

  describe('config', () => {
    const issuesOf = (slice: Record<string, unknown>, env: Record<string, string> = {}) =>
      configIssues(() =>
        testGeneration({ agents: { defaults: { model: 'llm/m' }, providers: { llm: { type: 'openai', ...slice } } } }, { env }),
      );

    it('defaults baseUrl to the OpenAI API', () => {
      const g = testGeneration({ agents: { defaults: { model: 'llm/m' }, providers: { llm: { type: 'openai' } } } });
      expect(g.config.agents.providers.llm).toMatchObject({ baseUrl: 'https://api.openai.com/v1', reasoningEffort: false });
    });

    it.each([
      [{ apiKeyEnv: 'MISSING_KEY' }, 'agents.providers.llm.apiKeyEnv: environment variable MISSING_KEY is not set'],
      [{ apiKey: 'k', apiKeyEnv: 'X' }, 'agents.providers.llm.apiKey: set either apiKey or apiKeyEnv, not both'],
      [{ baseUrl: 'localhost:11434' }, 'agents.providers.llm.baseUrl: must be an http:// or https:// URL'],
      [{ baseUrl: 'not a url' }, 'agents.providers.llm.baseUrl: "not a url" is not a URL'],
      [{ params: { model: 'x' } }, 'agents.providers.llm.params.model: is set by the provider and cannot be overridden'],
      [{ modle: 'x' }, 'agents.providers.llm.modle: unknown key'],
      [{ reasoningEffort: 'yes' }, 'agents.providers.llm.reasoningEffort: must be boolean'],
      [{ headers: { 'bad header': 'v' } }, 'agents.providers.llm.headers: has an invalid key "bad header"'],
    ])('refuses %j naming the key', (slice, message) => {
      expect(issuesOf(slice as Record<string, unknown>).some((m) => m.startsWith(message))).toBe(true);
    });
  });
});
