/**
 * Secrets stay secret, end to end: a server with a hook token, a gateway
 * token, a provider signing secret, API keys for an OpenAI-compatible
 * stand-in and an Anthropic Messages API stand-in, and another gateway's hooks
 * token (the `gateway` provider) takes successful and failing requests of every
 * kind (wrong tokens, query tokens, bad signatures, invalid JSON, a failing
 * transform, invalid fields, providers that answer 401, 500 and 529 echoing the
 * key, another gateway that refuses echoing its token). Payloads carry
 * a unique marker in a field no template renders. Then everything the service
 * said (its whole output, every answer, every read-API answer) is searched for
 * the secrets and the marker.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../src/auth/signing.ts';
import type { VerifySpec } from '../../src/auth/signatures.ts';
import { cleanup, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { exchange, head } from '../helpers/hostile.ts';
import { completion, json, startStub, type HttpStub, type Recorded } from '../helpers/http-stub.ts';
import { startAnthropicStandIn, type AnthropicStandIn, type Answer } from '../helpers/anthropic-stand-in.ts';

// base64url, not hex: no piece of a secret can turn up by chance in the hex ids of answers and logs
const random = (n: number) => randomBytes(n).toString('base64url');
const HOOK = `hk_${random(30)}`;
const GW = `gw_${random(30)}`;
const SIGNING = `gh_${random(30)}`;
const API_KEY = `sk-${random(30)}`;
const GW_HOOKS = `gwh_${random(30)}`;
const ANTHROPIC_KEY = `sk-ant-api03-${random(30)}`;
const MARKER = `mk${random(18)}`;
const CALLBACK = `whsec_${randomBytes(32).toString('base64')}`;
const SECRETS = {
  'hook token': HOOK,
  'gateway token': GW,
  'signing secret': SIGNING,
  'API key': API_KEY,
  'other gateway token': GW_HOOKS,
  'Anthropic API key': ANTHROPIC_KEY,
  'callback secret': CALLBACK,
  marker: MARKER,
};

const GITHUB: VerifySpec = { type: 'github', secret: SIGNING };

const TRANSFORMS = {
  // sees the whole payload, marker included, and uses only `kind`; fails on request without saying why in terms of the payload
  'deploy.ts': `export default (ctx: { payload: { kind?: string; fail?: boolean } }) => {
    if (ctx.payload.fail) throw new Error('this event is refused by the transform');
    return { message: 'deploy event ' + String(ctx.payload.kind), wakeMode: 'next-heartbeat' };
  };`,
};

const CLAUDE = 'claude/claude-sonnet-5-5';

function config(stubUrl: string, gatewayUrl: string, anthropicUrl: string) {
  return {
    gateway: { auth: { token: GW } },
    hooks: {
      enabled: true,
      token: HOOK,
      maxBodyBytes: 65_536,
      mappings: [
        {
          id: 'github',
          match: { path: 'github' },
          messageTemplate: 'Push to {{repository.name}} by {{sender.login}}',
          wakeMode: 'next-heartbeat',
          verify: GITHUB,
        },
        { id: 'deploy', match: { path: 'deploy' }, transform: { module: 'deploy.ts' } },
        { id: 'ping', match: { path: 'ping' }, action: 'wake', textTemplate: 'ping {{kind}}', wakeMode: 'next-heartbeat' },
        { id: 'refused', match: { path: 'refused' }, messageTemplate: 'PLEASE-FAIL-401 for {{kind}}', wakeMode: 'next-heartbeat' },
        { id: 'broken', match: { path: 'broken' }, messageTemplate: 'PLEASE-FAIL-500 for {{kind}}', wakeMode: 'next-heartbeat' },
        // forwarded to another gateway, which takes one and refuses the other echoing the token
        { id: 'forward', match: { path: 'forward' }, messageTemplate: 'forward {{kind}}', model: 'gw/default', wakeMode: 'next-heartbeat' },
        {
          id: 'forward-refused',
          match: { path: 'forward-refused' },
          messageTemplate: 'PLEASE-FAIL-401 forward {{kind}}',
          model: 'gw/default',
          wakeMode: 'next-heartbeat',
        },
        ...['claude', 'claude-refused', 'claude-overloaded'].map((id) => ({
          id,
          match: { path: id },
          messageTemplate: `${{ claude: 'Hello', 'claude-refused': 'PLEASE-FAIL-401', 'claude-overloaded': 'PLEASE-FAIL-529' }[id]} for {{kind}}`,
          model: CLAUDE,
          wakeMode: 'next-heartbeat',
        })),
      ],
    },
    agents: {
      defaults: { model: 'llm/gpt', models: ['llm/gpt', 'gw/default', CLAUDE], heartbeat: { every: '0' }, timeoutSeconds: 30 },
      providers: {
        llm: { type: 'openai', baseUrl: `${stubUrl}/v1`, apiKey: '${HOOK_INTAKE_TEST_API_KEY}' },
        gw: { type: 'gateway', url: `${gatewayUrl}/hooks`, token: '${HOOK_INTAKE_TEST_GATEWAY_TOKEN}' },
        // no retries: the SDK's retries are the provider's own tests' business
        claude: { type: 'anthropic', baseUrl: anthropicUrl, apiKey: '${HOOK_INTAKE_TEST_ANTHROPIC_KEY}', maxRetries: 0 },
      },
    },
    channels: { console: {} },
    session: { defaultRoute: { channel: 'console' } },
    // every lifecycle event, signed with a secret of its own (docs/callbacks.md)
    callbacks: [
      {
        id: 'events',
        url: `${stubUrl}/events`,
        secret: CALLBACK,
        types: ['run.completed', 'run.failed', 'delivery.failed', 'request.rejected'],
        allowPrivateNetwork: true,
      },
    ],
  };
}

/**
 * The first piece of `secret` (8 characters) that appears in `text`: a parser
 * or a shortened error message may repeat part of a secret, not all of it.
 */
function leaked(text: string, secret: string): string | undefined {
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) return secret.slice(i, i + 8);
  return undefined;
}

/** A careless Messages API: its errors repeat the key it was sent and the whole request. */
function claudeAnswer(req: Recorded): Answer {
  const last = JSON.stringify(req.json?.messages?.at(-1)?.content ?? '');
  const echo = `key ${String(req.headers['x-api-key'])}, request ${req.raw.toString('utf8')}`;
  if (last.includes('PLEASE-FAIL-401')) return { error: 'authentication_error', message: `invalid x-api-key: ${echo}` };
  if (last.includes('PLEASE-FAIL-529')) return { error: 'overloaded_error', message: `Overloaded while serving ${echo}` };
  return { reply: 'All good from Claude.' };
}

describe('secrets and payload content stay out of everything the service says', () => {
  let stub: HttpStub;
  let gateway: HttpStub;
  let claude: AnthropicStandIn;
  let srv: Running;
  /** Every response body, and the headers of every response. */
  const said: string[] = [];

  const record = async (res: Response): Promise<{ status: number; body: any }> => {
    const text = await res.text();
    said.push(text, JSON.stringify([...res.headers]));
    // everything but /metrics (Prometheus text) answers JSON
    return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${srv.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(record);
  const hook = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    post(path, typeof body === 'string' ? body : JSON.stringify(body), { authorization: `Bearer ${HOOK}`, ...headers });
  const api = (path: string, token = GW) => fetch(`${srv.url}${path}`, { headers: { authorization: `Bearer ${token}` } }).then(record);

  beforeAll(async () => {
    stub = await startStub((req, res) => {
      const last = String(req.json?.messages?.at(-1)?.content ?? '');
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      // a careless endpoint: its errors repeat the key and the whole request
      if (last.includes('PLEASE-FAIL-401'))
        return json(res, 401, { error: { message: `Incorrect API key provided: ${key}. Request was ${req.raw.toString('utf8')}` } });
      if (last.includes('PLEASE-FAIL-500')) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`upstream exploded while serving ${JSON.stringify(req.headers)}`);
        return;
      }
      json(res, 200, completion('All good.'));
    });
    // another gateway's hooks: a careless one, whose refusal repeats the token and the request
    gateway = await startStub((req, res) => {
      if (String(req.json?.message ?? '').includes('PLEASE-FAIL-401'))
        return json(res, 401, { ok: false, error: `bad token ${req.headers.authorization} for ${req.raw.toString('utf8')}` });
      json(res, 202, { ok: true, runId: 'downstream-run' });
    });
    claude = await startAnthropicStandIn(ANTHROPIC_KEY, claudeAnswer);
    const dir = tempDir();
    mkdirSync(join(dir, 'transforms'));
    for (const [f, src] of Object.entries(TRANSFORMS)) writeFileSync(join(dir, 'transforms', f), src);
    srv = await startCli({
      config: config(stub.url, gateway.url, claude.url),
      dir,
      env: { HOOK_INTAKE_TEST_API_KEY: API_KEY, HOOK_INTAKE_TEST_GATEWAY_TOKEN: GW_HOOKS, HOOK_INTAKE_TEST_ANTHROPIC_KEY: ANTHROPIC_KEY },
    });
  });
  afterAll(async () => {
    await srv?.stop();
    await stub?.close();
    await gateway?.close();
    await claude?.close();
    if (srv) cleanup(srv.dir);
  });

  it('takes successes and every kind of failure, then says nothing secret anywhere', async () => {
    const marked = (extra: Record<string, unknown>) => ({ ...extra, secretNote: `do not repeat ${MARKER}` });
    const runIds: string[] = [];
    const accepted = (r: { status: number; body: any }, status: number) => {
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      if (r.body?.runId) runIds.push(r.body.runId);
    };

    // successes, with every credential
    accepted(await hook('/hooks/agent', { message: 'Summarise the day', wakeMode: 'next-heartbeat' }), 202);
    accepted(await hook('/hooks/wake', { text: 'hello', mode: 'next-heartbeat' }, { authorization: '', 'x-gateway-token': HOOK }), 200);
    accepted(await post(`/hooks/wake?token=${HOOK}`, JSON.stringify({ text: 'by query token', mode: 'next-heartbeat' })), 200);
    const push = JSON.stringify(marked({ repository: { name: 'repo' }, sender: { login: 'octo' } }));
    const signed = signatureHeaders(GITHUB, Buffer.from(push), Date.now());
    accepted(await post('/hooks/github', push, signed), 202);
    accepted(await hook('/hooks/deploy', marked({ kind: 'release' })), 202);
    accepted(await hook('/hooks/ping', marked({ kind: 'pong' })), 200);
    accepted(await hook('/hooks/agent', { message: 'idempotent', wakeMode: 'next-heartbeat' }, { 'idempotency-key': 'k-1' }), 202);
    accepted(await hook('/hooks/agent', { message: 'idempotent', wakeMode: 'next-heartbeat' }, { 'idempotency-key': 'k-1' }), 202);
    // accepted, but the provider refuses and echoes the key and the request
    accepted(await hook('/hooks/refused', marked({ kind: 'a' })), 202);
    accepted(await hook('/hooks/broken', marked({ kind: 'b' })), 202);
    accepted(await hook('/hooks/forward', marked({ kind: 'c' })), 202);
    accepted(await hook('/hooks/forward-refused', marked({ kind: 'd' })), 202);
    accepted(await hook('/hooks/claude', marked({ kind: 'e' })), 202);
    accepted(await hook('/hooks/claude-refused', marked({ kind: 'f' })), 202);
    accepted(await hook('/hooks/claude-overloaded', marked({ kind: 'g' })), 202);

    // wrong credentials, including ones that contain the right ones
    for (const headers of [
      { authorization: `Bearer ${HOOK}x` },
      { authorization: `Bearer ${GW}` },
      { 'x-gateway-token': GW },
      { authorization: `Basic ${HOOK}` },
      {},
    ] as Record<string, string>[])
      expect((await post('/hooks/wake', JSON.stringify(marked({ text: 'x' })), headers)).status).toBe(401);
    expect((await post(`/hooks/wake?token=${HOOK}x`, JSON.stringify(marked({ text: 'x' })))).status).toBe(401);
    expect((await post(`/hooks/wake?token=${GW}`, JSON.stringify(marked({ text: 'x' })))).status).toBe(401);
    expect((await api('/api/runs', HOOK)).status).toBe(401);
    expect((await api(`/api/runs?token=${GW}`, `${GW}x`)).status).toBe(401);

    // bad signatures: wrong secret, the secret itself as the signature, a tampered body, none, and the hook token instead
    const wrongSecret = signatureHeaders({ type: 'github', secret: `${SIGNING}x` }, Buffer.from(push), Date.now());
    for (const headers of [
      wrongSecret,
      { 'x-hub-signature-256': `sha256=${SIGNING}` },
      { 'x-hub-signature-256': SIGNING },
      {},
      { authorization: `Bearer ${HOOK}` },
    ] as Record<string, string>[])
      expect((await post('/hooks/github', push, headers)).body.code).toBe('INVALID_SIGNATURE');
    expect((await post('/hooks/github', push.replace('octo', 'mallory'), signed)).body.code).toBe('INVALID_SIGNATURE');

    // invalid JSON whose bytes are the secrets and the marker, where a parser would quote them
    for (const s of Object.values(SECRETS)) {
      for (const body of [s, `{"a": ${s}}`, `{"a": "x" ${s}}`, `[${s}]`]) {
        expect((await hook('/hooks/wake', body)).body.code).toBe('INVALID_JSON');
        expect((await post('/hooks/github', body, signatureHeaders(GITHUB, Buffer.from(body), Date.now()))).body.code).toBe('INVALID_JSON');
      }
    }
    expect((await hook('/hooks/wake', `{"text":"x","__proto__":{"${MARKER}":1}}`)).body.code).toBe('INVALID_JSON');

    // a transform that throws
    expect((await hook('/hooks/deploy', marked({ kind: 'release', fail: true }))).body.code).toBe('TRANSFORM_FAILED');

    // invalid fields holding the marker
    const invalid: [string, Record<string, unknown>][] = [
      ['/hooks/agent', { message: 'x', model: MARKER }],
      ['/hooks/agent', { message: 'x', model: `${MARKER}/gpt` }],
      ['/hooks/agent', { message: 'x', sessionKey: `hook:${MARKER} x` }],
      ['/hooks/agent', { message: 'x', channel: MARKER }],
      ['/hooks/agent', { message: 'x', to: MARKER.repeat(20) }],
      ['/hooks/agent', { message: 'x', thinking: MARKER }],
      ['/hooks/agent', { message: 'x', timeoutSeconds: MARKER }],
      ['/hooks/agent', { message: 'x', deliver: MARKER }],
      ['/hooks/agent', { message: 'x', wakeMode: MARKER }],
      ['/hooks/agent', { message: 'x', name: `${'n'.repeat(200)}${MARKER}` }],
      ['/hooks/agent', { message: 'x', note: MARKER }],
      ['/hooks/agent', { message: { text: MARKER } }],
      ['/hooks/wake', { text: 'x', mode: MARKER }],
      ['/hooks/wake', { text: MARKER.repeat(1000) }],
      ['/hooks/wake', { text: [MARKER] }],
    ];
    for (const [path, body] of invalid) expect((await hook(path, body)).status, JSON.stringify(body).slice(0, 80)).toBe(400);
    expect((await hook('/hooks/wake', `text=x&mode=${MARKER}`, { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(400);
    expect(
      (await hook('/hooks/wake', `text=x&mode=${MARKER}&mode=now`, { 'content-type': 'application/x-www-form-urlencoded' })).status,
    ).toBe(400);
    expect((await hook('/hooks/nowhere', marked({ kind: 'x' }))).status).toBe(404);
    expect((await hook('/hooks/wake', JSON.stringify(marked({ text: 'x', pad: 'p'.repeat(70_000) })))).status).toBe(413);
    const chunked = await exchange(srv.url, [
      head('POST', '/hooks/wake', { authorization: `Bearer ${HOOK}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' }),
      `5\r\n${MARKER.slice(0, 5)}\r\nzz\r\n`,
    ]);
    said.push(...chunked.answers.map((a) => a.body));
    expect(chunked.answers[0]?.status).toBe(400);

    // every run finishes (the refused ones as errors), and the wake that starts a heartbeat runs it
    await until(async () => {
      const runs = (await api('/api/runs?limit=10000')).body.runs as { status: string }[];
      return runs.length >= new Set(runIds).size && runs.every((r) => r.status !== 'queued' && r.status !== 'running');
    });
    accepted(await hook('/hooks/wake', { text: 'time for a heartbeat', mode: 'now' }), 200);
    await until(async () =>
      ((await api('/api/runs?limit=10000')).body.runs as { kind: string; status: string }[]).some(
        (r) => r.kind === 'heartbeat' && r.status !== 'running' && r.status !== 'queued',
      ),
    );
    await until(async () => ((await api('/api/status')).body.counts.outbox.pending as number) === 0).catch(async (err: Error) => {
      // what was still pending, for whoever meets this
      const status = (await api('/api/status')).body;
      const deliveries = ((await api('/api/runs?limit=10000')).body.runs as { id: string; kind: string; delivery: unknown }[]).map((r) => ({
        id: r.id,
        kind: r.kind,
        delivery: r.delivery,
      }));
      throw new Error(
        `${err.message}: the outbox kept pending entries; counts ${JSON.stringify(status.counts)}, deliveries ${JSON.stringify(deliveries)}`,
      );
    });

    // the provider really got the key, failed, and echoed it: the redaction is what kept it out
    expect(stub.requests.some((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
    expect(gateway.requests.some((r) => r.headers.authorization === `Bearer ${GW_HOOKS}`)).toBe(true);
    // the callback was told of the failures and the refusals too
    const sent = stub.requests.filter((r) => r.url === '/events').map((r) => r.json.type);
    expect(sent).toEqual(expect.arrayContaining(['run.completed', 'run.failed', 'request.rejected']));
    const runs = (await api('/api/runs?limit=10000')).body.runs as {
      id: string;
      sessionKey: string;
      status: string;
      error: string | null;
    }[];
    expect(runs.filter((r) => r.status === 'error').map((r) => r.error)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('HTTP 401'),
        expect.stringContaining('HTTP 500'),
        expect.stringMatching(/^HTTP 401 from .*\/hooks\/agent: bad token Bearer \[redacted\]/),
      ]),
    );
    expect(runs.some((r) => r.error?.includes('[redacted]'))).toBe(true);
    // the same of the Messages API stand-in, whose every request had the API's shape
    expect(claude.requests.map((r) => r.headers['x-api-key'])).toEqual([ANTHROPIC_KEY, ANTHROPIC_KEY, ANTHROPIC_KEY]);
    expect(claude.problems.flat()).toEqual([]);
    expect(runs.filter((r) => r.status === 'error').map((r) => r.error)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^HTTP 401 from .*\/v1\/messages: authentication_error: invalid x-api-key: key \[redacted\]/),
        expect.stringMatching(/^HTTP 529 from .*\/v1\/messages: overloaded_error: Overloaded while serving key \[redacted\]/),
      ]),
    );

    // everything the read API shows
    for (const r of runs) {
      await api(`/api/runs/${r.id}`);
      await api(`/api/sessions/${encodeURIComponent(r.sessionKey)}/messages?limit=10000`);
    }
    await api('/api/sessions/main/messages');
    await api('/api/main/events?limit=10000');
    await api('/api/main/events?status=pending');
    await api('/api/runs?status=error');
    await api('/api/status');
    await api('/metrics');

    const stopped = await srv.stop();
    expect(stopped).toBe(0);
    const output = srv.output();
    // the log saw the failures, without their contents
    for (const expected of [
      'signature rejected',
      'transform failed',
      'deprecated',
      'chat completion refused',
      'gateway refused',
      'messages request refused',
      'request refused by the HTTP parser',
    ])
      expect(output).toContain(expected);
    for (const [what, secret] of Object.entries(SECRETS)) {
      expect(leaked(output, secret), `a piece of the ${what} is in the output`).toBeUndefined();
      const leaks = said.filter((s) => leaked(s, secret));
      expect(leaks, `a piece of the ${what} is in answers`).toEqual([]);
    }
    // nor are the signatures that were sent
    expect(output).not.toContain(signed['x-hub-signature-256']!.slice('sha256='.length));
  });
});
