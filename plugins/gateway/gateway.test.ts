/**
 * The `gateway` provider against a stand-in for a gateway's hooks (test/helpers/gateway-standin.ts)
 * over real HTTP: what reaches the other gateway, the run's outcome when it accepts, refuses, fails,
 * stalls or redirects, the retries and their idempotency key, and that the token is never repeated.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { json, startStub } from '../../test/helpers/http-stub.ts';
import { startGatewayStandIn, type GatewayStandIn } from '../../test/helpers/gateway-standin.ts';
import { callAsRun, configIssues, type Generation } from '../../test/helpers/plugin-tests.ts';
import { captureLogger, testGeneration } from '../../test/helpers/runtime.ts';

const TOKEN = 'gw-hook-token-0123456789abcdefghij';
const HOOK = { name: 'GitHub', wakeMode: 'now' as const, deliver: true };

const status =
  (code: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    json(res, code, body, headers);

describe('gateway provider', () => {
  let gw: GatewayStandIn;
  beforeAll(async () => {
    gw = await startGatewayStandIn({ token: TOKEN });
  });
  afterAll(() => gw.close());
  afterEach(() => gw.reset());

  const gen = (slice: Record<string, unknown> = {}, opts: Parameters<typeof testGeneration>[1] = {}): Generation =>
    testGeneration(
      { agents: { defaults: { model: 'gw/default' }, providers: { gw: { type: 'gateway', url: gw.url, token: TOKEN, ...slice } } } },
      opts,
    );
  const call = (g: Generation, over: Partial<Parameters<typeof callAsRun>[1]> = {}) =>
    callAsRun(g, {
      runId: 'run-1',
      sessionKey: 'hook:abc',
      model: 'gw/default',
      thinking: null,
      messages: [{ role: 'user', content: 'Push to main' }],
      timeoutMs: 10_000,
      hook: HOOK,
      ...over,
    });

  describe('success', () => {
    it('posts the new message and the action to <url>/agent with the token and the run id as idempotency key', async () => {
      const r = await call(gen(), {
        model: 'gw/opus',
        thinking: 'high',
        timeoutMs: 90_500,
        messages: [
          { role: 'user', content: 'earlier' },
          { role: 'assistant', content: 'earlier reply' },
          { role: 'user', content: 'Push to main' },
        ],
      });
      expect(r).toEqual({ status: 'ok', text: '', forwarded: { runId: gw.runs[0]!.runId } });
      const [req] = gw.stub.requests;
      expect(req!.url).toBe('/hooks/agent');
      expect(req!.headers).toMatchObject({
        authorization: `Bearer ${TOKEN}`,
        'idempotency-key': 'run-1',
        'content-type': 'application/json',
      });
      // only the new message: the other gateway keeps its own transcript under the session key
      expect(req!.json).toEqual({
        message: 'Push to main',
        name: 'GitHub',
        sessionKey: 'hook:abc',
        wakeMode: 'now',
        deliver: true,
        model: 'opus',
        thinking: 'high',
        timeoutSeconds: 91,
      });
    });

    it('leaves the model to the other gateway for <id>/default, and sends its channel and recipient from the config', async () => {
      await call(gen({ channel: 'telegram', to: '-100123' }), { hook: { name: 'Hook', wakeMode: 'next-heartbeat', deliver: false } });
      expect(gw.stub.requests[0]!.json).toEqual({
        message: 'Push to main',
        name: 'Hook',
        sessionKey: 'hook:abc',
        wakeMode: 'next-heartbeat',
        deliver: false,
        channel: 'telegram',
        to: '-100123',
        timeoutSeconds: 10,
      });
    });

    it('leaves the session key out with sessionKey: false', async () => {
      await call(gen({ sessionKey: false }));
      expect(gw.stub.requests[0]!.json).not.toHaveProperty('sessionKey');
      expect(gw.runs).toHaveLength(1);
    });

    it("hands a heartbeat's prompt to <url>/wake, to be acted on now", async () => {
      const r = await call(gen(), {
        hook: undefined,
        sessionKey: 'main',
        messages: [{ role: 'user', content: 'Heartbeat. [ts] disk full' }],
      });
      expect(r).toEqual({ status: 'ok', text: '', forwarded: { runId: null } });
      expect(gw.stub.requests[0]!.url).toBe('/hooks/wake');
      expect(gw.wakes).toEqual([{ text: 'Heartbeat. [ts] disk full', mode: 'now' }]);
    });

    it('ends ok with no run id when the answer names none', async () => {
      gw.script((res) => {
        res.writeHead(202);
        res.end();
      });
      expect(await call(gen())).toEqual({ status: 'ok', text: '', forwarded: { runId: null } });
    });

    it('starts one run there however often the same run is forwarded (a run started again after a restart)', async () => {
      const g = gen();
      const first = await call(g);
      const again = await call(g);
      expect(again).toEqual(first);
      expect(gw.runs).toHaveLength(1);
    });
  });

  describe('failures', () => {
    it("ends the run error on a 4xx with the gateway's message, without trying again", async () => {
      const r = await call(gen(), { messages: [{ role: 'user', content: '   ' }] });
      expect(r).toEqual({ status: 'error', error: `HTTP 400 from ${gw.url}/agent: message required` });
      expect(gw.stub.requests).toHaveLength(1);
    });

    it('never repeats the token, even when the gateway echoes it', async () => {
      gw.script(status(401, { ok: false, error: `token ${TOKEN} is not the hooks token` }));
      const r = (await call(gen())) as { status: string; error: string };
      expect(r).toEqual({ status: 'error', error: `HTTP 401 from ${gw.url}/agent: token [redacted] is not the hooks token` });
    });

    it('tries a 5xx again after Retry-After with the same idempotency key, and ends ok once it is taken', async () => {
      gw.script(
        status(503, { ok: false, error: 'busy' }, { 'retry-after': '0' }),
        status(429, { ok: false, error: 'slow down' }, { 'retry-after': '0' }),
      );
      const r = await call(gen());
      expect(r).toMatchObject({ status: 'ok', forwarded: { runId: gw.runs[0]!.runId } });
      expect(gw.stub.requests.map((q) => q.headers['idempotency-key'])).toEqual(['run-1', 'run-1', 'run-1']);
    });

    it('ends the run error with the last failure once maxRetries are spent', async () => {
      gw.script(...Array.from({ length: 3 }, () => status(502, { ok: false, error: 'bad gateway' }, { 'retry-after': '0' })));
      const r = await call(gen({ maxRetries: 2 }));
      expect(r).toEqual({ status: 'error', error: `HTTP 502 from ${gw.url}/agent: bad gateway` });
      expect(gw.stub.requests).toHaveLength(3);
    });

    it('gives up at once when the gateway asks to wait past the run deadline', async () => {
      gw.script(status(503, { ok: false, error: 'maintenance' }, { 'retry-after': '3600' }));
      const r = await call(gen(), { timeoutMs: 5_000 });
      expect(r).toEqual({ status: 'error', error: `HTTP 503 from ${gw.url}/agent: maintenance` });
      expect(gw.stub.requests).toHaveLength(1);
    });

    it('tries a network failure again, after a backoff, and reports it when it lasts', async () => {
      const closed = await startStub();
      const url = `${closed.url}/hooks`;
      await closed.close();
      const g = testGeneration({
        agents: { defaults: { model: 'gw/default' }, providers: { gw: { type: 'gateway', url, token: TOKEN, maxRetries: 1 } } },
      });
      const r = (await call(g)) as { status: string; error: string };
      expect(r.status).toBe('error');
      expect(r.error).toMatch(new RegExp(`^request to ${url}/agent failed: .*ECONNREFUSED`));
    });

    it('counts an attempt unanswered within requestTimeoutMs as a network failure and tries again', async () => {
      gw.script(() => undefined); // never answers
      const r = await call(gen({ requestTimeoutMs: 200 }));
      expect(r).toMatchObject({ status: 'ok', forwarded: { runId: gw.runs[0]!.runId } });
      await gw.stub.requests[0]!.aborted;
      expect(gw.stub.requests).toHaveLength(2);
    });

    it('ends the run timeout at its deadline', async () => {
      gw.script(() => undefined);
      const r = await call(gen(), { timeoutMs: 300 });
      expect(r).toEqual({ status: 'timeout', error: 'timed out after 0.3s' });
    });

    it('does not follow a redirect, which would hand the token on', async () => {
      gw.script((res) => {
        res.writeHead(307, { location: 'https://elsewhere.example/hooks/agent' });
        res.end();
      });
      const r = (await call(gen())) as { status: string; error: string };
      expect(r).toEqual({ status: 'error', error: `HTTP 307 from ${gw.url}/agent (a redirect, not followed: check url)` });
      expect(gw.stub.requests).toHaveLength(1);
    });

    it('logs status and timing, never the token or the message', async () => {
      const { logger, text } = captureLogger('trace');
      const g = gen({}, { logger });
      await call(g, { messages: [{ role: 'user', content: 'SECRET-PROMPT' }] });
      gw.script(status(400, { ok: false, error: `refused ${TOKEN}` }));
      await call(g, { runId: 'run-2', messages: [{ role: 'user', content: 'SECRET-PROMPT' }] });
      expect(text()).toContain('"status":202');
      expect(text()).toContain('"status":400');
      for (const s of [TOKEN, 'SECRET-PROMPT']) expect(text()).not.toContain(s);
    });
  });

  describe('config', () => {
    const issuesOf = (slice: Record<string, unknown>) =>
      configIssues(() =>
        testGeneration({ agents: { defaults: { model: 'gw/default' }, providers: { gw: { type: 'gateway', ...slice } } } }),
      );

    it('fills in the defaults', () => {
      expect(gen().config.agents.providers.gw).toMatchObject({ sessionKey: true, maxRetries: 2, requestTimeoutMs: 30_000 });
    });

    it.each([
      [{ token: TOKEN }, 'agents.providers.gw: missing required key "url"'],
      [{ url: 'https://gw.example/hooks' }, 'agents.providers.gw: missing required key "token"'],
      [{ url: 'gw.example/hooks', token: TOKEN }, 'agents.providers.gw.url: "gw.example/hooks" is not a URL'],
      [{ url: 'ftp://gw.example/hooks', token: TOKEN }, 'agents.providers.gw.url: must be an http:// or https:// URL'],
      [{ url: 'https://u:p@gw.example/hooks', token: TOKEN }, 'agents.providers.gw.url: must not hold credentials'],
      [{ url: `https://gw.example/hooks?token=${TOKEN}`, token: TOKEN }, 'agents.providers.gw.url: must not hold the token'],
      [{ url: 'https://gw.example/hooks', token: TOKEN, maxRetries: 11 }, 'agents.providers.gw.maxRetries: must be <= 10'],
      [{ url: 'https://gw.example/hooks', token: TOKEN, deliver: false }, 'agents.providers.gw.deliver: unknown key'],
    ])('refuses %j naming the key', (slice, message) => {
      const issues = issuesOf(slice);
      expect(
        issues.some((m) => m.startsWith(message)),
        issues.join('\n'),
      ).toBe(true);
      expect(issues.join('\n')).not.toContain(TOKEN);
    });
  });
});
