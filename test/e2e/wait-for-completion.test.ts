/**
 * `waitForCompletion` over real HTTP against the real CLI on SQLite (docs/waiting.md): the answer waits for the run and
 * its delivery (a retried delivery included) and carries the completion, the reply only with hooks.replyInResponse; a
 * repeat of the key gets the same completion; waiting requests take no runner place; past the limit 202 with
 * `completion: null`; at a stop 503 with Retry-After and the run stored.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { cleanup, post, startCli, until, type Running } from '../helpers/cli.ts';
import { completion, json, startStub, type HttpStub } from '../helpers/http-stub.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };
/** Model calls held until the test lets them answer, by the job their prompt names. */
const held = new Map<string, () => void>();
const jobOf = (text: string) => /job-[\w-]+/.exec(text)?.[0];

let llm: HttpStub;
let receiver: HttpStub;
let srv: Running;
/** Deliveries the receiver refuses once before taking them, by the job their text names. */
const refuseOnce = new Set<string>();

const config = (over: Record<string, unknown> = {}) => ({
  hooks: { enabled: true, token: HOOK, waitForCompletionSeconds: 4, replyInResponse: true },
  agents: {
    defaults: { model: 'llm/stand-in', maxConcurrent: 1, heartbeat: { every: '0' } },
    providers: { llm: { type: 'openai', baseUrl: `${llm.url}/v1`, models: { 'stand-in': 'local-model' } } },
  },
  channels: { out: { type: 'webhook', url: `${receiver.url}/deliver`, secret: `whsec_${randomBytes(16).toString('base64')}` } },
  session: { defaultRoute: { channel: 'out' } },
  delivery: { initialBackoffMs: 50 },
  ...over,
});

beforeAll(async () => {
  llm = await startStub(async (req, res) => {
    const prompt = String(req.json.messages.at(-1).content);
    // a heartbeat's prompt may quote a run's summary: it is never held
    const job = prompt.startsWith('Heartbeat.') ? undefined : jobOf(prompt);
    if (job?.startsWith('job-held')) await new Promise<void>((r) => held.set(job, r));
    json(res, 200, completion(job === 'job-ack' ? 'HEARTBEAT_OK' : `done: ${job}`));
  });
  receiver = await startStub((req, res) => {
    const job = jobOf(JSON.stringify(req.json));
    if (job && refuseOnce.delete(job)) return json(res, 500, { error: 'try again' });
    json(res, 200, { ok: true });
  });
  srv = await startCli({ config: config() });
});
afterAll(async () => {
  for (const release of held.values()) release();
  expect(await srv?.stop()).toBe(0);
  cleanup(srv.dir);
  await llm?.close();
  await receiver?.close();
});

const ask = (body: Record<string, unknown>, headers: Record<string, string> = {}, on = srv) =>
  post(`${on.url}/hooks/agent`, { waitForCompletion: true, wakeMode: 'next-heartbeat', ...body }, { ...auth, ...headers });

it('answers once the run and its retried delivery ended: 200 with the completion and the reply', async () => {
  refuseOnce.add('job-a');
  const r = await ask({ message: 'job-a' });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    ok: true,
    runId: expect.any(String),
    sessionKey: expect.stringMatching(/^hook:/),
    completion: { status: 'ok', replyDisposition: 'visible', delivery: { status: 'sent', attempts: 2 }, reply: 'done: job-a' },
  });
});

it('gives a repeat of the key, sent while the first waits, the same completion; deliver false and an acknowledgement are silent', async () => {
  const key = { 'idempotency-key': `k-${randomBytes(4).toString('hex')}` };
  const first = ask({ message: 'job-held-b', deliver: false }, key);
  await until(() => held.has('job-held-b'));
  const repeat = ask({ message: 'job-held-b', deliver: false }, key);
  held.get('job-held-b')!();
  const [a, b] = await Promise.all([first, repeat]);
  expect(a.status).toBe(200);
  expect(a.body.completion).toEqual({
    status: 'ok',
    replyDisposition: 'silent',
    delivery: { status: 'skipped', attempts: 0 },
    reply: 'done: job-held-b',
  });
  expect(b).toMatchObject({ status: 200, body: { ...a.body, duplicate: true } });
  expect((await ask({ message: 'job-ack' })).body.completion).toMatchObject({ replyDisposition: 'silent', reply: 'HEARTBEAT_OK' });
});

it('takes no runner place for a waiting request: three at once with maxConcurrent 1 all end', async () => {
  const answers = await Promise.all(['job-c1', 'job-c2', 'job-c3'].map((job) => ask({ message: job })));
  expect(answers.map((a) => [a.status, a.body.completion.delivery.status])).toEqual([
    [200, 'sent'],
    [200, 'sent'],
    [200, 'sent'],
  ]);
});

it('answers 202 with completion null once hooks.waitForCompletionSeconds passed, the run going on', async () => {
  const r = await ask({ message: 'job-held-d' });
  expect(r).toMatchObject({ status: 202, body: { ok: true, completion: null } });
  held.get('job-held-d')!();
});

it('answers a waiting request 503 with Retry-After at a stop, its run stored', async () => {
  const other = await startCli({ config: config({ gateway: { shutdownTimeoutSeconds: 1 } }) });
  try {
    const waiting = ask({ message: 'job-held-e' }, {}, other);
    await until(() => held.has('job-held-e'));
    const stopped = other.stop();
    const r = await waiting;
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(r.body).toMatchObject({ ok: false, code: 'SHUTTING_DOWN' });
    const runId = /run (\S+) is stored/.exec(r.body.error)![1]!;
    expect(await stopped).toBe(0);
    const store = new SqliteStore({ path: join(other.dataDir, 'hook-intake.db') });
    try {
      expect((await store.records.getRun(runId))?.status).toBe('queued');
    } finally {
      await store.close();
    }
  } finally {
    await other.stop();
    cleanup(other.dir);
  }
});
