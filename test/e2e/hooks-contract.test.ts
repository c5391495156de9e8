/**
 * The /hooks contract (docs/http.md) over real HTTP against the real CLI: every status code and
 * stable code, the order of checks (docs/http.md, "Order of checks"), and the promise that the hook
 * token never shows up in the server's output or in any response.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, until, type Running } from '../helpers/cli.ts';
import { rawRequest, requestHead } from '../helpers/raw.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;

const config = {
  gateway: { auth: { token: GW } },
  hooks: { enabled: true, token: HOOK, maxBodyBytes: 32768, bodyTimeoutMs: 400 },
  agents: {
    defaults: { models: ['echo/echo'], heartbeat: { every: '0' } },
    providers: { echo: { type: 'echo' }, spare: { type: 'echo' } },
  },
  channels: { console: {} },
  session: { defaultRoute: { channel: 'console' } },
};

/** The hook runs whose message holds `text` (a heartbeat's prompt may quote a run's summary, which holds it too). */
const hookRuns = (runs: { kind: string; message: string }[], text: string) =>
  runs.filter((r) => r.kind === 'hook' && r.message.includes(text));

describe('POST /hooks/* over real HTTP', () => {
  let srv: Running;
  const bodies: string[] = [];
  const auth = { authorization: `Bearer ${HOOK}` };
  const call = async (path: string, body: unknown, headers: Record<string, string> = auth) => {
    const r = await post(`${srv.url}${path}`, body, headers);
    bodies.push(r.text);
    return r;
  };

  beforeAll(async () => {
    srv = await startCli({ config });
  });
  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    cleanup(srv.dir);
  });

  describe('success', () => {
    it('answers a wake with 200, mode and eventId, and stores the event', async () => {
      const r = await call('/hooks/wake', { text: '  disk almost full  ', mode: 'next-heartbeat' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ ok: true, mode: 'next-heartbeat' });
      expect(r.body.eventId).toMatch(/^[0-9a-f-]{36}$/);
      const events = await get(`${srv.url}/api/main/events?status=pending`, GW);
      const ev = events.body.events.find((e: { id: string }) => e.id === r.body.eventId);
      expect(ev.text).toContain('\ndisk almost full\n'); // trimmed, inside the boundary
      expect(ev.text).toContain('<<<EXTERNAL_UNTRUSTED_CONTENT id="');
    });

    it('defaults wake mode to now', async () => {
      const r = await call('/hooks/wake', { text: 'ping' });
      expect(r.body.mode).toBe('now');
    });

    it('answers an agent request with 202, runId and a hook:<uuid> session key, and runs it with echo', async () => {
      const r = await call('/hooks/agent', { message: 'Summarise the build log', name: 'CI' });
      expect(r.status).toBe(202);
      expect(r.body.sessionKey).toMatch(/^hook:[0-9a-f-]{36}$/);
      const run = await until(async () => {
        const res = await get(`${srv.url}/api/runs/${r.body.runId}`, GW);
        return res.body.run.status === 'ok' ? res.body.run : undefined;
      });
      expect(run.reply).toContain('Summarise the build log');
      expect(run.reply).toMatch(/^SECURITY NOTICE/);
      expect(run.summary).toBe('Summarise the build log');
      await until(async () => (await get(`${srv.url}/api/runs/${r.body.runId}`, GW)).body.run.delivery.status === 'sent');
      expect(srv.output()).toContain(`[console] delivery for run ${r.body.runId}`);
    });

    it('accepts the token in x-gateway-token', async () => {
      const r = await call('/hooks/wake', { text: 'header token' }, { 'x-gateway-token': HOOK });
      expect(r.status).toBe(200);
    });

    it('accepts the deprecated ?token= with a Deprecation header and a warning that omits the token', async () => {
      const r = await call(`/hooks/wake?token=${encodeURIComponent(HOOK)}`, { text: 'query token' }, {});
      expect(r.status).toBe(200);
      expect(r.headers.get('deprecation')).toBe('true');
      await srv.waitFor('deprecated');
    });

    it('accepts a form post on /hooks/wake', async () => {
      const r = await call('/hooks/wake', 'text=from+a+form&mode=now', { ...auth, 'content-type': 'application/x-www-form-urlencoded' });
      expect(r.status).toBe(200);
    });

    it('returns the first answer for a repeated Idempotency-Key and starts nothing', async () => {
      const key = `delivery-${randomBytes(6).toString('hex')}`;
      const first = await call('/hooks/agent', { message: 'once' }, { ...auth, 'idempotency-key': key });
      const again = await call('/hooks/agent', { message: 'once' }, { ...auth, 'idempotency-key': key });
      expect(first.status).toBe(202);
      expect(again.status).toBe(202);
      expect(again.body).toEqual({ ...first.body, duplicate: true });
      const runs = await get(`${srv.url}/api/runs?limit=1000`, GW);
      expect(hookRuns(runs.body.runs, '\nonce\n')).toHaveLength(1);
    });

    it('scopes an Idempotency-Key to its hook: the same key on another hook runs that one too', async () => {
      const key = `shared-${randomBytes(6).toString('hex')}`;
      const wake = await call('/hooks/wake', { text: 'keyed wake' }, { ...auth, 'idempotency-key': key });
      const agent = await call('/hooks/agent', { message: 'keyed agent' }, { ...auth, 'idempotency-key': key });
      expect(wake).toMatchObject({ status: 200, body: { ok: true } });
      expect(agent).toMatchObject({ status: 202, body: { ok: true } });
      expect(wake.body.duplicate).toBeUndefined();
      expect(agent.body.duplicate).toBeUndefined();
      expect(agent.body.runId).toMatch(/^[0-9a-f-]{36}$/);
      // on the same hook the key still is a repeat
      const again = await call('/hooks/agent', { message: 'keyed agent' }, { ...auth, 'idempotency-key': key });
      expect(again.body).toEqual({ ...agent.body, duplicate: true });
      const runs = await get(`${srv.url}/api/runs?limit=1000`, GW);
      expect(hookRuns(runs.body.runs, '\nkeyed agent\n')).toHaveLength(1);
      const events = await get(`${srv.url}/api/main/events?limit=1000`, GW);
      expect(events.body.events.filter((e: { id: string }) => e.id === wake.body.eventId)).toHaveLength(1);
    });

    it('treats concurrent repeats of one webhook-id as one request', async () => {
      const key = `msg_${randomBytes(6).toString('hex')}`;
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => call('/hooks/wake', { text: 'concurrent' }, { ...auth, 'webhook-id': key })),
      );
      const ids = new Set(answers.map((a) => a.body.eventId));
      expect(ids.size).toBe(1);
      expect(answers.filter((a) => a.body.duplicate).length).toBe(4);
    });
  });

  describe('errors, in the order of the checks', () => {
    it.each([
      ['GET', 405, 'METHOD_NOT_ALLOWED'],
      ['PUT', 405, 'METHOD_NOT_ALLOWED'],
    ])('%s before auth → %i %s with Allow: POST', async (method, status, code) => {
      const res = await fetch(`${srv.url}/hooks/wake`, { method });
      const body = (await res.json()) as { code: string; ok: boolean };
      expect(res.status).toBe(status);
      expect(body).toMatchObject({ ok: false, code });
      expect(res.headers.get('allow')).toBe('POST');
    });

    it('401 UNAUTHORIZED without a token, with a wrong one, and with a non-Bearer scheme', async () => {
      for (const headers of [
        {},
        { authorization: 'Bearer nope' },
        { authorization: `Basic ${HOOK}` },
        { 'x-gateway-token': `${HOOK}x` },
      ] as Record<string, string>[]) {
        const r = await call('/hooks/wake', { text: 'x' }, headers);
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ ok: false, error: expect.any(String), code: 'UNAUTHORIZED' });
      }
    });

    it('checks auth before the body: a wrong token with an invalid body is 401', async () => {
      const r = await call('/hooks/wake', '{not json', { authorization: 'Bearer wrong' });
      expect(r.status).toBe(401);
    });

    it('404 NOT_FOUND for an empty hook name, after auth', async () => {
      expect((await call('/hooks', { text: 'x' })).body.code).toBe('NOT_FOUND');
      expect((await call('/hooks/', { text: 'x' })).status).toBe(404);
      expect((await call('/hooks/', { text: 'x' }, {})).status).toBe(401);
    });

    it('404 HOOK_NOT_FOUND for an unknown hook name', async () => {
      const r = await call('/hooks/github', { action: 'opened' });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('HOOK_NOT_FOUND');
    });

    it('413 PAYLOAD_TOO_LARGE from Content-Length, before reading the body', async () => {
      const res = await rawRequest(srv.url, [
        requestHead('POST', '/hooks/wake', {
          authorization: `Bearer ${HOOK}`,
          'content-type': 'application/json',
          'content-length': 10_000_000,
        }),
      ]);
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body).code).toBe('PAYLOAD_TOO_LARGE');
      expect(res.headers.connection).toBe('close');
    });

    it('413 PAYLOAD_TOO_LARGE for a chunked body that grows past the limit', async () => {
      const head = requestHead('POST', '/hooks/wake', {
        authorization: `Bearer ${HOOK}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      });
      const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
      // parts 20 ms apart: the client stops writing once answered, so the server's close cannot race a write into an RST that loses the answer
      const res = await rawRequest(
        srv.url,
        [head, chunk(`{"text":"${'a'.repeat(20_000)}`), chunk('b'.repeat(20_000)), chunk('"}'), '0\r\n\r\n'],
        20,
      );
      expect(res.status).toBe(413);
    });

    it('accepts a body just under the limit', async () => {
      const shell = JSON.stringify({ text: 'a'.repeat(19_000), mode: 'next-heartbeat', pad: '' });
      const body = shell.replace('"pad":""', `"pad":"${'b'.repeat(32_768 - Buffer.byteLength(shell))}"`);
      expect(Buffer.byteLength(body)).toBe(32_768);
      const r = await call('/hooks/wake', body);
      expect(r.status).toBe(400); // read in full (not 413): the unknown field is what fails
      expect(r.body.field).toBe('pad');
    });

    it('408 REQUEST_TIMEOUT when the body does not arrive in time', async () => {
      const head = requestHead('POST', '/hooks/wake', {
        authorization: `Bearer ${HOOK}`,
        'content-type': 'application/json',
        'content-length': 20,
      });
      const res = await rawRequest(srv.url, [head, '{"text":'], 0);
      expect(res.status).toBe(408);
      expect(JSON.parse(res.body).code).toBe('REQUEST_TIMEOUT');
    });

    it.each([
      [undefined, 'missing'],
      ['text/plain', 'text/plain'],
      ['application/xml', 'xml'],
      ['application/json; charset=latin1', 'non-UTF-8 charset'],
    ])('415 UNSUPPORTED_MEDIA_TYPE for Content-Type %s (%s)', async (type: string | undefined, _label: string) => {
      const headers: Record<string, string> = { ...auth };
      const res = await fetch(`${srv.url}/hooks/wake`, {
        method: 'POST',
        headers: type ? { ...headers, 'content-type': type } : headers,
        body: type ? '{"text":"x"}' : new Blob(['{"text":"x"}']),
      });
      const text = await res.text();
      bodies.push(text);
      expect(res.status).toBe(415);
      expect(JSON.parse(text).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('takes a form post to a named hook as a body, then routes it (404 here: no mapping)', async () => {
      const r = await call('/hooks/github', 'a=b', { ...auth, 'content-type': 'application/x-www-form-urlencoded' });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('HOOK_NOT_FOUND');
    });

    it('415 for a text/plain post to a named hook', async () => {
      const r = await call('/hooks/github', 'a=b', { ...auth, 'content-type': 'text/plain' });
      expect(r.status).toBe(415);
    });

    it.each([
      ['{"text": "x",}', 'syntax error'],
      ['', 'empty body'],
      ['{"text":"x","__proto__":{"polluted":true}}', '__proto__'],
      ['{"text":"x","constructor":{"prototype":{"polluted":true}}}', 'constructor.prototype'],
      ['{"a":{"b":{"__proto__":{"x":1}}}}', 'nested __proto__'],
    ])('400 INVALID_JSON for %s (%s)', async (body) => {
      const r = await call('/hooks/wake', body);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('INVALID_JSON');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('400 INVALID_JSON for invalid UTF-8', async () => {
      const res = await fetch(`${srv.url}/hooks/wake`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('INVALID_JSON');
    });

    it.each([
      { path: '/hooks/wake', body: {}, field: 'text' },
      { path: '/hooks/wake', body: { text: '   ' }, field: 'text' },
      { path: '/hooks/wake', body: { text: 5 }, field: 'text' },
      { path: '/hooks/wake', body: { text: 'x'.repeat(20_001) }, field: 'text' },
      { path: '/hooks/wake', body: { text: 'x', mode: 'later' }, field: 'mode' },
      { path: '/hooks/wake', body: { text: 'x', txt: 'y' }, field: 'txt' },
      { path: '/hooks/wake', body: [1, 2], field: '' },
      { path: '/hooks/wake', body: 'null', field: '' },
      { path: '/hooks/agent', body: {}, field: 'message' },
      { path: '/hooks/agent', body: { message: 'x', deliver: 'yes' }, field: 'deliver' },
      { path: '/hooks/agent', body: { message: 'x', wakeMode: 'soon' }, field: 'wakeMode' },
      { path: '/hooks/agent', body: { message: 'x', channel: 'telegram' }, field: 'channel' },
      { path: '/hooks/agent', body: { message: 'x', timeoutSeconds: 0 }, field: 'timeoutSeconds' },
      { path: '/hooks/agent', body: { message: 'x', timeoutSeconds: 86_401 }, field: 'timeoutSeconds' },
      { path: '/hooks/agent', body: { message: 'x', timeoutSeconds: '30' }, field: 'timeoutSeconds' },
      { path: '/hooks/agent', body: { message: 'x', thinking: 'extreme' }, field: 'thinking' },
      { path: '/hooks/agent', body: { message: 'x', sessionKey: 'has space' }, field: 'sessionKey' },
      { path: '/hooks/agent', body: { message: 'x', sessionKey: 'main' }, field: 'sessionKey' },
      { path: '/hooks/agent', body: { message: 'x', sessionKey: 'MAIN' }, field: 'sessionKey' },
      { path: '/hooks/agent', body: { message: 'x', sessionKey: 'k'.repeat(201) }, field: 'sessionKey' },
      { path: '/hooks/agent', body: { message: 'x', sessionkey: 'a' }, field: 'sessionkey' },
    ])('400 INVALID_PAYLOAD on $path names field "$field" (case %#)', async ({ path, body, field }) => {
      const r = await call(path, typeof body === 'string' ? body : JSON.stringify(body));
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('INVALID_PAYLOAD');
      if (field) expect(r.body.field).toBe(field);
      expect(r.body.error).toMatch(field ? new RegExp(`^${field}: `) : /object/);
    });

    it('400 MODEL_NOT_ALLOWED for a model outside agents.defaults.models', async () => {
      const r = await call('/hooks/agent', { message: 'x', model: 'spare/echo' });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'MODEL_NOT_ALLOWED', field: 'model' });
    });

    it('404 with the one JSON error shape for unknown paths', async () => {
      const r = await get(`${srv.url}/nothing-here`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ ok: false, error: 'not found', code: 'NOT_FOUND' });
    });
  });

  describe('secrets stay secret', () => {
    it('never shows the hook token in output or response bodies', async () => {
      // one more failing and one more successful request with the token in the query string
      await call(`/hooks/wake?token=${HOOK}`, { text: 'last' }, {});
      await call(`/hooks/wake?token=${HOOK}x`, { text: 'last' }, {});
      expect(bodies.length).toBeGreaterThan(50);
      for (const b of bodies) expect(b).not.toContain(HOOK);
      expect(srv.output()).not.toContain(HOOK);
      expect(srv.output()).not.toContain(GW);
    });
  });
});

describe('the auth-failure throttle', () => {
  // each test is its own client (X-Forwarded-For, with trustProxy on); the window's end is
  // tested on an injected clock in test/auth/throttle.test.ts
  let srv: Running;
  beforeAll(async () => {
    srv = await startCli({
      config: {
        ...config,
        gateway: { ...config.gateway, trustProxy: true },
        hooks: { ...config.hooks, authFailures: { max: 20, windowSeconds: 30 } },
      },
    });
  });
  afterAll(async () => {
    await srv.stop();
    cleanup(srv.dir);
  });
  const wake = (from: string, token: string) =>
    post(`${srv.url}/hooks/wake`, { text: 'x' }, { authorization: `Bearer ${token}`, 'x-forwarded-for': from });

  it('answers 429 RATE_LIMITED with Retry-After within the window after 20 failures, even for the right token', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await wake('192.0.2.1', `wrong-${i}`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses[20]).toBe(429);
    const blocked = await wake('192.0.2.1', HOOK);
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('RATE_LIMITED');
    const retry = Number(blocked.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(30);
    // another client is not held back
    expect((await wake('192.0.2.2', HOOK)).status).toBe(200);
  });

  it('a success resets the count', async () => {
    for (let i = 0; i < 15; i++) await wake('192.0.2.3', 'wrong');
    expect((await wake('192.0.2.3', HOOK)).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await wake('192.0.2.3', 'wrong')).status);
    expect(statuses.every((s) => s === 401)).toBe(true);
  });
});

describe('settings that change answers', () => {
  it('hooks.enabled false: /hooks/* is 404 as if it did not exist', async () => {
    const srv = await startCli({ config: { ...config, hooks: { enabled: false } } });
    try {
      const r = await post(`${srv.url}/hooks/wake`, { text: 'x' }, { authorization: `Bearer ${HOOK}` });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('NOT_FOUND');
    } finally {
      await srv.stop();
      cleanup(srv.dir);
    }
  });

  it('hooks.agentStatus 200, allowQueryToken false, a custom path and the session-key policy', async () => {
    const srv = await startCli({
      config: {
        ...config,
        hooks: { ...config.hooks, path: 'intake/', agentStatus: 200, allowQueryToken: false, allowedSessionKeyPrefixes: ['hook:ci:'] },
      },
    });
    try {
      const auth = { authorization: `Bearer ${HOOK}` };
      const ok = await post(`${srv.url}/intake/agent`, { message: 'x', sessionKey: 'hook:ci:42' }, auth);
      expect(ok.status).toBe(200);
      expect(ok.body.sessionKey).toBe('hook:ci:42');
      const bad = await post(`${srv.url}/intake/agent`, { message: 'x', sessionKey: 'other:1' }, auth);
      expect(bad.body).toMatchObject({ code: 'INVALID_PAYLOAD', field: 'sessionKey' });
      const q = await post(`${srv.url}/intake/wake?token=${HOOK}`, { text: 'x' });
      expect(q.status).toBe(401);
      expect((await post(`${srv.url}/hooks/wake`, { text: 'x' }, auth)).status).toBe(404);
    } finally {
      await srv.stop();
      cleanup(srv.dir);
    }
  });
});
