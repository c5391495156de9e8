/**
 * The pipeline's wait step (src/intake/pipeline.ts, docs/waiting.md) on a real SQLite store: a direct `/agent` request
 * with `waitForCompletion` is stored like any other, then answered once its run and the run's delivery ended, or at
 * its time limit; a repeat of its key gets the same completion; the places are bounded, a stop answers 503 with the
 * run stored, and only an adapter that can keep its answer open waits.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { builtinPlugins } from '../../plugins/index.ts';
import { buildGeneration } from '../../src/generation/build.ts';
import type { Generation } from '../../src/generation/types.ts';
import { createDispatcher } from '../../src/intake/dispatch.ts';
import { IdempotencyGuard } from '../../src/intake/idempotency.ts';
import { type IntakeAnswer, Intake } from '../../src/intake/pipeline.ts';
import { createRateLimiter } from '../../src/intake/rate-limit.ts';
import type { HookRequest } from '../../src/intake/request.ts';
import { Waits } from '../../src/intake/wait.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { newDelivery, okOutcome } from '../helpers/records.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';

const NOW = Date.parse('2026-11-29T10:00:00Z');
const dir = tempDir('hook-intake-pipeline-wait-');
const { logger } = captureLogger('silent');

let gen: Generation;
let store: SqliteStore;
let waits: Waits;
let intake: Intake;

beforeAll(async () => {
  const config = testConfig({ hooks: { enabled: true, token: 'hook-token-0123456789abcdef0123', waitForCompletionSeconds: 30 } }, dir);
  gen = await buildGeneration(config, { builtins: builtinPlugins, logger });
});
afterAll(async () => {
  await gen.dispose();
  cleanup(dir);
});
beforeEach(() => {
  store = new SqliteStore({ path: ':memory:', clock: () => NOW });
  waits = new Waits({ runs: store.records, ends: store.ends, logger, max: 2 });
  const dispatcher = createDispatcher({ records: store.records, runsAccepted: () => {}, queuedRuns: () => 0, requestHeartbeat: () => {} });
  const idempotency = new IdempotencyGuard(store.records);
  intake = new Intake({ dispatcher, idempotency, rateLimiter: createRateLimiter(store.counters), logger, waits });
});
afterEach(async () => {
  vi.useRealTimers();
  await store.close();
});

const agent = (payload: Record<string, unknown>, headers: Record<string, string> = {}): HookRequest => ({
  name: 'agent',
  payload,
  headers: { 'content-type': 'application/json', ...headers },
  query: {},
  path: '/hooks/agent',
  url: '/hooks/agent',
  rawBody: Buffer.from(JSON.stringify(payload)),
  json: undefined,
  receivedAt: NOW,
  authenticated: true,
});
const waiting = (payload: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  intake.accept(gen, agent({ message: 'build the docs', waitForCompletion: true, ...payload }, headers), undefined, { canWait: true });

/** The runner's part: the run claimed, started and finished with a reply to deliver; resolves with the delivery's id. */
async function runIt(runId: string): Promise<string> {
  const [claim] = await store.runs.claim('w', 60_000, 1);
  expect(claim!.id).toBe(runId);
  await store.records.startRun(runId, NOW + 1);
  const entry = newDelivery(runId, { text: 'the docs are built' });
  await store.records.finishRun(okOutcome(runId, { reply: 'the docs are built', delivery: { kind: 'outbox', entry } }));
  await store.runs.complete(runId, 'w');
  return entry.id;
}

describe('the wait step', () => {
  it('answers 200 with the completion once the run finished and its delivery ended, retries included', async () => {
    const accepted = await waiting();
    expect(accepted).toMatchObject({ status: 202, body: { ok: true, runId: expect.any(String) }, waited: expect.any(Promise) });
    const runId = accepted.body.runId as string;
    const delivery = await runIt(runId);
    await store.records.recordDelivery({ id: delivery, runId, attempts: 1, at: NOW + 2, status: 'pending', nextAttemptAt: NOW + 3 });
    await store.records.recordDelivery({ id: delivery, runId, attempts: 2, at: NOW + 3, status: 'sent' });
    // told at the finish and at the retry, it answered only once the delivery was sent
    expect(await accepted.waited).toEqual({
      status: 200,
      body: {
        ok: true,
        runId,
        sessionKey: accepted.body.sessionKey,
        completion: { status: 'ok', replyDisposition: 'visible', delivery: { status: 'sent', attempts: 2 } },
      },
      requestId: accepted.requestId,
    });
    expect(waits.waiting).toBe(0);
  });

  it('answers 202 with completion null once hooks.waitForCompletionSeconds passed, the run going on', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const accepted = await waiting();
    let answer: IntakeAnswer | undefined;
    void accepted.waited!.then((a) => (answer = a));
    await vi.advanceTimersByTimeAsync(29_999);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answer).toEqual({ status: 202, body: { ...accepted.body, completion: null }, requestId: accepted.requestId });
    expect((await store.records.getRun(accepted.body.runId as string))!.status).toBe('queued');
  });

  it('gives a repeat of its idempotency key the same completion, while it waits and after it answered', async () => {
    const key = { 'idempotency-key': 'k-1' };
    const first = await waiting({}, key);
    const repeat = await waiting({}, key);
    expect(repeat.body).toEqual({ ...first.body, duplicate: true });
    const runId = first.body.runId as string;
    await store.records.recordDelivery({ id: await runIt(runId), runId, attempts: 1, at: NOW + 2, status: 'sent' });
    const [a, b] = [await first.waited!, await repeat.waited!];
    expect(b).toEqual({ status: 200, body: { ...a.body, duplicate: true } });
    const later = await waiting({}, key);
    expect(await later.waited!).toEqual(b);
    expect(await store.records.listRuns({ limit: 10 })).toHaveLength(1);
  });

  it('refuses a request past the places with 503 and Retry-After before anything is stored, and gives back a refused one', async () => {
    await expect(waiting({ message: '' })).rejects.toMatchObject({ status: 400, field: 'message' });
    await waiting();
    await waiting();
    await expect(waiting()).rejects.toMatchObject({ status: 503, code: 'UNAVAILABLE', headers: { 'Retry-After': '5' } });
    expect(await store.records.listRuns({ limit: 10 })).toHaveLength(2);
  });

  it('answers a waiting request 503 SHUTTING_DOWN with Retry-After at a stop, its run stored', async () => {
    const accepted = await waiting();
    waits.stop();
    const runId = accepted.body.runId as string;
    await expect(accepted.waited).rejects.toMatchObject({
      status: 503,
      code: 'SHUTTING_DOWN',
      message: `the service is shutting down; run ${runId} is stored; send the request again with its idempotency key to wait for it`,
      headers: { 'Retry-After': '5' },
    });
    expect((await store.records.getRun(runId))!.status).toBe('queued');
  });

  it('waits only where the adapter can keep its answer open, and only when asked', async () => {
    const replay = await intake.accept(gen, agent({ message: 'm', waitForCompletion: true }), undefined, { idempotent: false });
    expect(replay.waited).toBeUndefined();
    const plain = await intake.accept(gen, agent({ message: 'm', waitForCompletion: false }), undefined, { canWait: true });
    expect(plain.waited).toBeUndefined();
    expect(waits.waiting).toBe(0);
  });
});
