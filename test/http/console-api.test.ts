/**
 * The admin API (docs/http.md, "Kept requests" and "Admin actions") on a running service: kept
 * requests (list, detail, replay) and the admin actions on runs (retry, redeliver), each logged with
 * who and what; and no credential a request carried anywhere: not in the stored rows, the database
 * file, the answers or the log.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinPlugins } from '../../plugins/index.ts';
import { signatureHeaders } from '../../src/auth/signing.ts';
import { ChannelError, definePlugin } from '../../src/plugins/define.ts';
import { startService, type Service } from '../../src/service.ts';
import { cleanup, tempDir, until } from '../helpers/cli.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';
import { tokenFingerprint } from '../../src/http/console-api.ts';

const random = (n: number) => randomBytes(n).toString('base64url');
const HOOK = `hk_${random(24)}`;
const GW = `gw_${random(24)}`;
const SIGNING = `gh_${random(24)}`;
const COOKIE = `ck_${random(24)}`;
const CUSTOM = `ct_${random(24)}`;
const TG = `tg_${random(24)}`;
/** Every signature the test sends, to look for them afterwards. */
const signatures: string[] = [];

/** A channel that fails for good while `failing` is set, and records what it sent. */
let failing = false;
const sent: string[] = [];
const flaky = definePlugin({
  name: 'flaky-test',
  channels: {
    flaky: {
      create: () => ({
        async send(msg: { text: string }) {
          if (failing) throw new ChannelError('refused', { retryable: false });
          sent.push(msg.text);
        },
      }),
    },
  },
});

const dir = tempDir('hook-intake-console-api-');
let requestsDays = 7;
const raw = () => ({
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
      // an empty list is a skip (204)
      {
        id: 'quiet',
        match: { path: 'quiet' },
        action: 'wake',
        forEach: 'items',
        textTemplate: 'item {{item}}',
        wakeMode: 'next-heartbeat',
      },
    ],
  },
  agents: { defaults: { heartbeat: { every: '0' } } },
  channels: { flaky: {} },
  session: { defaultRoute: { channel: 'flaky' } },
  retention: { requestsDays },
});

const out = captureLogger('info');
let svc: Service;
const said: string[] = [];

async function call(method: string, path: string, opts: { body?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${svc.url}${path}`, {
    method,
    headers: opts.headers ?? { authorization: `Bearer ${GW}` },
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  });
  const text = await res.text();
  said.push(text, JSON.stringify([...res.headers]));
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
const hook = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call('POST', path, {
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${HOOK}`, ...headers },
  });
const finished = (runId: string) =>
  until(async () => ((await svc.store.records.getRun(runId))?.finishedAt ? svc.store.records.getRun(runId) : undefined));

beforeAll(async () => {
  svc = await startService({
    load: () => testConfig(raw(), dir),
    logger: out.logger,
    port: 0,
    bind: '127.0.0.1',
    watch: false,
    builtins: [...builtinPlugins, flaky],
  });
});
afterAll(async () => {
  await svc?.stop();
  cleanup(dir);
});

describe('kept requests', () => {
  it('keeps an accepted request with its body and headers, never its credentials', async () => {
    const r = await hook(
      '/hooks/agent?x=1',
      { message: 'hello there' },
      {
        cookie: `sid=${COOKIE}`,
        'x-custom-token': CUSTOM,
        'x-telegram-bot-api-secret-token': TG,
        'x-request-id': 'abc',
      },
    );
    expect(r.status).toBe(202);
    const list = await call('GET', '/api/requests?hook=agent');
    expect(list.status).toBe(200);
    const item = list.body.requests[0];
    expect(item).toMatchObject({
      hook: 'agent',
      mappingId: null,
      status: 202,
      url: '/hooks/agent?x=1',
      runIds: [r.body.runId],
      eventIds: [],
      replayOf: null,
    });
    expect(item.body).toBeUndefined(); // a list leaves bodies out
    const detail = await call('GET', `/api/requests/${item.id}`);
    expect(detail.body.request).toMatchObject({
      body: '{"message":"hello there"}',
      bodyEncoding: 'utf8',
      actions: [{ kind: 'agent', runId: r.body.runId }],
    });
    const headers = detail.body.request.headers;
    expect(headers['x-request-id']).toBe('abc');
    for (const h of ['authorization', 'cookie', 'x-custom-token', 'x-telegram-bot-api-secret-token']) expect(headers).not.toHaveProperty(h);
  });

  it('keeps a signed request without its signature, and replays it through the current mappings as a new request', async () => {
    const body = JSON.stringify({ repo: 'api' });
    const sig = signatureHeaders({ type: 'github', secret: SIGNING }, Buffer.from(body), Date.now());
    signatures.push(...Object.values(sig));
    const r = await call('POST', '/hooks/github', {
      body,
      headers: { 'content-type': 'application/json', 'x-github-event': 'push', ...sig },
    });
    expect(r.status).toBe(200);
    const [kept] = (await call('GET', '/api/requests?hook=github&limit=1')).body.requests;
    expect(kept).toMatchObject({ mappingId: 'github', status: 200, eventIds: [r.body.eventId] });
    const detail = (await call('GET', `/api/requests/${kept.id}`)).body.request;
    expect(Object.keys(detail.headers).filter((h) => h.includes('signature'))).toEqual([]);
    expect(detail.headers['x-github-event']).toBe('push');

    const replay = await call('POST', `/api/requests/${kept.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ ok: true, mode: 'next-heartbeat', replayOf: kept.id });
    expect(replay.body.requestId).not.toBe(kept.id);
    // a new request like any other: it coalesces into the first one's event while that is still the newest pending
    // event, which a summary of an earlier test's run may have come after (docs/http.md, "Wake coalescing")
    const coalesced = replay.body.eventOutcome === 'coalesced';
    expect([replay.body.eventOutcome, replay.body.eventId === r.body.eventId]).toEqual(coalesced ? ['coalesced', true] : ['queued', false]);
    const again = (await call('GET', `/api/requests/${replay.body.requestId}`)).body.request;
    expect(again).toMatchObject({ replayOf: kept.id, hook: 'github', mappingId: 'github', eventIds: [replay.body.eventId], body });
  });

  it('keeps a request its mapping skipped, and lists by status, a page at a time', async () => {
    expect((await hook('/hooks/quiet', { items: [] })).status).toBe(204);
    expect((await hook('/hooks/quiet', { items: [1, 2] })).status).toBe(202);
    const quiet = (await call('GET', '/api/requests?hook=quiet')).body.requests;
    expect(quiet.map((q: { status: number; eventIds: string[] }) => [q.status, q.eventIds.length])).toEqual([
      [202, 2],
      [204, 0],
    ]);
    const replayed = await call('POST', `/api/requests/${quiet[1].id}/replay`);
    expect(replayed).toMatchObject({ status: 200, body: { ok: true, skipped: true, replayOf: quiet[1].id } });
    const all = (await call('GET', '/api/requests')).body.requests;
    const page = (await call('GET', `/api/requests?limit=2&before=${all[0].id}`)).body.requests;
    expect(page.map((p: { id: string }) => p.id)).toEqual(all.slice(1, 3).map((p: { id: string }) => p.id));
    const ok = (await call('GET', '/api/requests?status=200')).body.requests;
    expect(ok.length).toBeGreaterThan(0);
    expect(ok.every((q: { status: number }) => q.status === 200)).toBe(true);
    expect((await call('GET', '/api/requests?status=abc')).body).toMatchObject({
      code: 'INVALID_PAYLOAD',
      error: 'status: must be an HTTP status code',
    });
  });

  it('answers 404 for an unknown request, and 401 without the gateway token', async () => {
    expect((await call('GET', '/api/requests/nope')).status).toBe(404);
    expect((await call('POST', '/api/requests/nope/replay')).status).toBe(404);
    expect((await call('GET', '/api/requests', { headers: { authorization: `Bearer ${HOOK}` } })).status).toBe(401);
  });

  it('keeps none with retention.requestsDays 0', async () => {
    requestsDays = 0;
    expect(await svc.reloader.reload('test')).toBe(true);
    const before = (await call('GET', '/api/requests')).body.requests.length;
    expect((await hook('/hooks/wake', { text: 'not kept' })).status).toBe(200);
    expect((await call('GET', '/api/requests')).body.requests.length).toBe(before);
    requestsDays = 7;
    expect(await svc.reloader.reload('test')).toBe(true);
  });
});

describe('admin actions', () => {
  it('retries a finished run as a new run with the same input, and refuses a run not finished or unknown', async () => {
    const r = await hook('/hooks/agent', { message: 'retry me', deliver: false });
    const first = await finished(r.body.runId);
    const retry = await call('POST', `/api/runs/${r.body.runId}/retry`);
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ ok: true, retryOf: r.body.runId, sessionKey: first!.sessionKey });
    const second = await finished(retry.body.runId);
    expect(second).toMatchObject({ status: 'ok', message: first!.message, sessionKey: first!.sessionKey, hookName: first!.hookName });
    expect((await call('POST', '/api/runs/nope/retry')).status).toBe(404);
  });

  it('redelivers a failed reply through the outbox, and refuses one already sent', async () => {
    failing = true;
    const r = await hook('/hooks/agent', { message: 'deliver me' });
    await until(async () => (await svc.store.records.getRun(r.body.runId))?.delivery.status === 'failed');
    failing = false;
    const again = await call('POST', `/api/runs/${r.body.runId}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ ok: true, runId: r.body.runId, channel: 'flaky' });
    await until(async () => (await svc.store.records.getRun(r.body.runId))?.delivery.status === 'sent');
    expect(sent.some((t) => t.includes('deliver me'))).toBe(true);
    expect((await call('POST', `/api/runs/${r.body.runId}/redeliver`)).body).toMatchObject({ code: 'CONFLICT' });
  });

  it('redelivers a skipped reply', async () => {
    const r = await hook('/hooks/agent', { message: 'skipped at first', deliver: false });
    expect((await finished(r.body.runId))!.delivery.status).toBe('skipped');
    expect((await call('POST', `/api/runs/${r.body.runId}/redeliver`)).status).toBe(202);
    await until(async () => (await svc.store.records.getRun(r.body.runId))?.delivery.status === 'sent');
  });

  it('logs each action with the token fingerprint and address, never the token', () => {
    const lines = out
      .text()
      .split('\n')
      .filter((l) => l.includes('"admin action"'))
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.admin)).toEqual(expect.arrayContaining(['replay', 'retry', 'redeliver']));
    for (const l of lines) expect(l.by).toEqual({ fingerprint: tokenFingerprint(GW), address: '127.0.0.1' });
  });
});

describe('secrets', () => {
  it('no credential a request carried is in the stored rows, the database file, an answer or the log', async () => {
    const listed = await svc.store.requests.list({ limit: 1000 });
    const kept = await Promise.all(listed.map((k) => svc.store.requests.get(k.id)));
    const stored = JSON.stringify(kept.map((k) => k!.headers));
    const db = join(dir, 'hook-intake.db');
    const files = [db, `${db}-wal`].filter(existsSync).map((f) => readFileSync(f).toString('latin1'));
    const everything = { stored, files: files.join('\n'), answers: said.join('\n'), log: out.text() };
    for (const secret of [HOOK, GW, SIGNING, COOKIE, CUSTOM, TG, ...signatures.map((s) => s.replace(/^sha256=/, ''))])
      for (const [where, text] of Object.entries(everything)) expect(text.includes(secret), `${where} holds a secret`).toBe(false);
    expect(kept.length).toBeGreaterThan(5);
  });
});
