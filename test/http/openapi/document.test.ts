/**
 * The OpenAPI document: valid OpenAPI 3.1 (checked by @seriousme/openapi-schema-validator), and true:
 * a running service's real answers from every endpoint it lists, successes and errors, pass the
 * document's response schemas (ajv, JSON Schema 2020-12), and every listed operation is exercised.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinPlugins } from '../../../plugins/index.ts';
import { signatureHeaders } from '../../../src/auth/signing.ts';
import { createLogger } from '../../../src/log.ts';
import { operations } from '../../../src/http/openapi/paths.ts';
import { ChannelError, definePlugin } from '../../../src/plugins/define.ts';
import { startService, type Service } from '../../../src/service.ts';
import { cleanup, tempDir, until } from '../../helpers/cli.ts';
import { testConfig } from '../../helpers/runtime.ts';

const HOOK = 'hook-token-0123456789abcdef0123';
const GW = 'gateway-token-0123456789abcdef01';
const SIGNING = 'github-secret-0123456789abcdef';

let failing = true;
const flaky = definePlugin({
  name: 'flaky-openapi',
  channels: {
    flaky: {
      create: () => ({
        async send() {
          if (failing) throw new ChannelError('refused', { retryable: false });
        },
      }),
    },
  },
});

const dir = tempDir('hook-intake-openapi-');
const config = {
  gateway: { auth: { token: GW } },
  hooks: {
    enabled: true,
    token: HOOK,
    mappings: [
      {
        id: 'github',
        match: { path: 'github' },
        action: 'wake',
        textTemplate: 'push to {{repo}}',
        wakeMode: 'next-heartbeat',
        verify: { type: 'github', secret: SIGNING },
      },
      { id: 'list', match: { path: 'list' }, action: 'agent', forEach: 'items', messageTemplate: 'item {{item}}', deliver: false },
    ],
  },
  agents: { defaults: { heartbeat: { every: '0' } } },
  channels: { flaky: {} },
  session: { defaultRoute: { channel: 'flaky' } },
  // refused at once (a loopback address): the run's events show in its answer without a receiver
  callbacks: [
    {
      id: 'ci',
      url: 'http://127.0.0.1:9/events',
      secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
      types: ['run.completed', 'delivery.failed'],
    },
  ],
};

/** A JSON pointer into the document, as a URI fragment. */
const pointer = (...tokens: string[]) => `#/${tokens.map((t) => encodeURIComponent(t.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;

describe('GET /api/openapi.json', () => {
  let svc: Service;
  let doc: any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  /** Operations (method and path template) with an answer checked, and the statuses seen. */
  const checked = new Map<string, Set<string>>();

  /** Calls `url`, then checks the answer against the document's schema for `method template` and the status. */
  async function check(
    method: 'get' | 'post' | 'delete',
    template: string,
    url: string,
    init: { token?: string | null; body?: string; headers?: Record<string, string> } = {},
  ) {
    const token = init.token === undefined ? GW : init.token;
    const res = await fetch(`${svc.url}${url}`, {
      method: method.toUpperCase(),
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const text = await res.text();
    const status = String(res.status);
    const op = doc.paths[template]?.[method];
    expect(op, `${method} ${template} is in the document`).toBeDefined();
    const answer = op.responses[status];
    expect(answer, `${method} ${template} lists ${status} (${text})`).toBeDefined();
    const key = `${method} ${template}`;
    if (!checked.has(key)) checked.set(key, new Set());
    checked.get(key)!.add(status);
    if (!answer.content) {
      expect(text).toBe('');
      return undefined;
    }
    const type = Object.keys(answer.content).find((t) => res.headers.get('content-type')?.startsWith(t));
    expect(type, `${method} ${url}: ${res.headers.get('content-type')} is one of ${Object.keys(answer.content)}`).toBeDefined();
    if (type !== 'application/json') return text;
    const body = JSON.parse(text);
    const validate = ajv.getSchema(
      `openapi.json${pointer('paths', template, method, 'responses', status, 'content', 'application/json', 'schema')}`,
    )!;
    expect(validate(body), `${method} ${url} ${status}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`).toBe(true);
    return body;
  }

  beforeAll(async () => {
    svc = await startService({
      load: () => testConfig(config, dir),
      logger: createLogger('silent'),
      port: 0,
      bind: '127.0.0.1',
      watch: false,
      builtins: [...builtinPlugins, flaky],
    });
    doc = await (await fetch(`${svc.url}/api/openapi.json`)).json();
    ajv.addSchema(doc, 'openapi.json');
  });
  afterAll(async () => {
    await svc?.stop();
    cleanup(dir);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('describes every real answer of every endpoint it lists', async () => {
    await check('get', '/api/openapi.json', '/api/openapi.json', { token: null });
    await check('get', '/healthz', '/healthz', { token: null });
    await check('get', '/readyz', '/readyz', { token: null });
    await check('get', '/metrics', '/metrics');
    await check('get', '/metrics', '/metrics', { token: 'wrong' });

    // hooks: successes of every kind and the usual errors
    await check('post', '/hooks/wake', '/hooks/wake', { token: HOOK, body: JSON.stringify({ text: 'hi', mode: 'next-heartbeat' }) });
    await check('post', '/hooks/wake', '/hooks/wake', { token: HOOK, body: JSON.stringify({ text: 1 }) });
    await check('post', '/hooks/wake', '/hooks/wake', { token: 'wrong', body: '{}' });
    const agent = await check('post', '/hooks/agent', '/hooks/agent', { token: HOOK, body: JSON.stringify({ message: 'hello' }) });
    await check('post', '/hooks/agent', '/hooks/agent', { token: HOOK, body: 'not json' });
    await check('post', '/hooks/{name}', '/hooks/list', { token: HOOK, body: JSON.stringify({ items: [1, 2] }) });
    await check('post', '/hooks/{name}', '/hooks/list', { token: HOOK, body: JSON.stringify({ items: [] }) });
    await check('post', '/hooks/{name}', '/hooks/nothing-here', { token: HOOK, body: '{}' });
    const body = JSON.stringify({ repo: 'api' });
    await check('post', '/hooks/{name}', '/hooks/github', {
      token: null,
      body,
      headers: signatureHeaders({ type: 'github', secret: SIGNING }, Buffer.from(body), Date.now()),
    });
    await check('post', '/hooks/{name}', '/hooks/github', { token: null, body, headers: { 'x-hub-signature-256': 'sha256=00' } });

    // the read API
    const run = await until(async () =>
      (await svc.store.records.getRun(agent.runId))?.delivery.status === 'failed' ? svc.store.records.getRun(agent.runId) : undefined,
    );
    await until(async () => (await svc.store.records.runCallbacks(agent.runId)).filter((c) => c.status === 'failed').length === 2);
    await check('get', '/api/status', '/api/status');
    await check('get', '/api/runs', '/api/runs?limit=5');
    await check('get', '/api/runs', '/api/runs?status=nope');
    await check('get', '/api/runs/{id}', `/api/runs/${run!.id}`);
    await check('get', '/api/runs/{id}', '/api/runs/nope');
    await check('get', '/api/sessions/{key}/messages', `/api/sessions/${encodeURIComponent(run!.sessionKey)}/messages`);
    await check('get', '/api/sessions/{key}/messages', '/api/sessions/x/messages?limit=0');
    await check('get', '/api/main/events', '/api/main/events?status=pending');
    await check('get', '/api/main/events', '/api/main/events', { token: null });
    const requests = await check('get', '/api/requests', '/api/requests?limit=50');
    await check('get', '/api/requests', '/api/requests?status=abc');
    const kept = requests.requests.find((r: { hook: string }) => r.hook === 'github');
    const skipped = requests.requests.find((r: { status: number }) => r.status === 204);
    await check('get', '/api/requests/{id}', `/api/requests/${kept.id}`);
    await check('get', '/api/requests/{id}', '/api/requests/nope');

    // admin actions
    await check('post', '/api/requests/{id}/replay', `/api/requests/${kept.id}/replay`);
    await check('post', '/api/requests/{id}/replay', `/api/requests/${skipped.id}/replay`);
    await check(
      'post',
      '/api/requests/{id}/replay',
      `/api/requests/${requests.requests.find((r: { hook: string; status: number }) => r.hook === 'list' && r.status === 202).id}/replay`,
    );
    await check('post', '/api/requests/{id}/replay', '/api/requests/nope/replay');
    await check('post', '/api/runs/{id}/retry', `/api/runs/${run!.id}/retry`);
    await check('post', '/api/runs/{id}/retry', '/api/runs/nope/retry');
    failing = false;
    await check('post', '/api/runs/{id}/redeliver', `/api/runs/${run!.id}/redeliver`);
    await until(async () => (await svc.store.records.getRun(run!.id))?.delivery.status === 'sent');
    await check('post', '/api/runs/{id}/redeliver', `/api/runs/${run!.id}/redeliver`);
    await check('post', '/api/runs/{id}/redeliver', '/api/runs/nope/redeliver', { token: 'wrong' });

    // the console: its files, sign-in with a session cookie, and the endpoints its pages use
    await check('get', '/ui', '/ui', { token: null });
    await check('get', '/ui/{file}', '/ui/js/app.js', { token: null });
    await check('get', '/ui/{file}', '/ui/console.css', { token: null });
    await check('get', '/ui/{file}', '/ui/nothing.js', { token: null });
    await check('post', '/ui/session', '/ui/session', { token: 'wrong' });
    const signIn = await fetch(`${svc.url}/ui/session`, { method: 'POST', headers: { authorization: `Bearer ${GW}` } });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const session = { token: null, headers: { cookie } };
    await check('post', '/ui/session', '/ui/session');
    await check('get', '/ui/session', '/ui/session', session);
    await check('get', '/ui/session', '/ui/session');
    await check('get', '/api/stats', '/api/stats', session);
    await check('get', '/api/stats', '/api/stats', { token: 'wrong' });
    await check('get', '/api/mappings', '/api/mappings');
    await check('post', '/api/try', '/api/try', {
      ...session,
      body: JSON.stringify({ hook: 'list', body: '{"items":[1]}' }),
      headers: { cookie, 'x-csrf-token': csrfToken },
    });
    await check('post', '/api/try', '/api/try', { body: JSON.stringify({ hook: 'wake', body: '{"txt":1}' }) });
    await check('post', '/api/try', '/api/try', { body: JSON.stringify({ hook: '' }) });
    await check('post', '/api/try', '/api/try', { ...session, body: JSON.stringify({ hook: 'wake' }) });
    // a stream does not end: its status and media type are checked, then it is closed
    const stream = await fetch(`${svc.url}/api/stream`, { headers: { cookie } });
    expect(stream.status).toBe(200);
    expect(Object.keys(doc.paths['/api/stream'].get.responses['200'].content)).toEqual(['text/event-stream']);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await stream.body!.cancel();
    checked.set('get /api/stream', new Set(['200']));
    await check('delete', '/ui/session', '/ui/session', session);
    await check('delete', '/ui/session', '/ui/session', { ...session, headers: { cookie, 'x-csrf-token': csrfToken } });
    await check('delete', '/ui/session', '/ui/session', { ...session, headers: { cookie, 'x-csrf-token': csrfToken } });

    const listed = operations.map((op) => `${op.method} ${op.path.replace('{hooks}', '/hooks')}`);
    expect([...checked.keys()].sort()).toEqual([...new Set(listed)].sort());
  });
});
