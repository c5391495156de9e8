/**
 * Callback entries carried by the real outbox (docs/callbacks.md, "Delivery"): signed and sent to a
 * receiver that verifies them with the standardwebhooks library, retried with the same `webhook-id`
 * until they fail for good, refused addresses failed at once with the reason, and a reply's final
 * failure stored with its `delivery.failed` event.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runEvents } from '../../src/callbacks/events.ts';
import type { Resolve } from '../../src/callbacks/send.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import type { Generation } from '../../src/generation/types.ts';
import { ChannelError, type Plugin } from '../../src/plugins/define.ts';
import { createOutbox, MAX_ATTEMPTS } from '../../src/runtime/outbox.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { NewRun } from '../../src/store/types.ts';
import { callbackSecret, startCallbackReceiver } from '../helpers/callback-receiver.ts';
import { until } from '../helpers/cli.ts';
import type { Script } from '../helpers/provider-stub.ts';
import { newRun, okOutcome } from '../helpers/records.ts';
import { captureLogger, testGeneration } from '../helpers/runtime.ts';

const secret = callbackSecret();

/** A channel that refuses every reply for good. */
const refusing: Plugin = {
  name: 'refusing-test',
  channels: {
    refusing: { create: () => ({ send: async () => Promise.reject(new ChannelError('HTTP 400: chat not found', { retryable: false })) }) },
  },
};

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function setup(
  opts: { script?: Script; callback?: Record<string, unknown>; types?: string[]; resolve?: Resolve; config?: Record<string, unknown> } = {},
) {
  const receiver = await startCallbackReceiver(secret, opts.script);
  const store = new SqliteStore({ path: ':memory:' });
  const log = captureLogger('trace');
  const gen: Generation = testGeneration(
    {
      channels: { refusing: {} },
      delivery: { initialBackoffMs: 1, maxBackoffMs: 2 },
      callbacks: [
        {
          id: 'ci',
          url: `${receiver.url}/events`,
          secret,
          types: opts.types ?? ['run.completed', 'run.failed', 'delivery.failed'],
          allowPrivateNetwork: true,
          ...opts.callback,
        },
      ],
      ...opts.config,
    },
    { plugins: [refusing], logger: log.logger },
  );
  const outbox = createOutbox({
    records: store.records,
    generations: new GenerationRef(gen),
    logger: log.logger,
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
  });
  cleanups.push(async () => {
    await outbox.stop(0);
    await store.close();
    await receiver.close();
  });
  /** A hook run of `agent` finished ok with `reply`, its events stored with it and handed to the outbox. */
  const finish = async (over: Partial<NewRun> = {}, reply = 'all green') => {
    const run = newRun({ hookId: 'agent', deliver: false, ...over });
    await store.records.accept({ events: [], runs: [run] });
    await store.records.startRun(run.id, 1_500);
    const o = okOutcome(run.id, { reply, delivery: { kind: 'skipped', reason: 'deliver is false' }, finishedAt: Date.now() });
    o.callbacks = runEvents(gen, run, o);
    await store.records.finishRun(o);
    for (const e of o.callbacks) outbox.notify(e);
    return run;
  };
  const callbacks = (runId: string) => store.records.runCallbacks(runId);
  const settled = async (runId: string) => {
    await until(async () => (await callbacks(runId)).every((c) => c.status !== 'pending'));
    return callbacks(runId);
  };
  return { receiver, store, outbox, gen, log, finish, callbacks, settled };
}

describe('the outbox and callbacks', () => {
  it('sends run.completed signed the Standard Webhooks way, with the entry id as webhook-id, and records it sent', async () => {
    const { receiver, finish, settled } = await setup();
    const run = await finish();
    const [entry] = await settled(run.id);
    expect(entry).toMatchObject({ status: 'sent', attempts: 1, lastError: null, event: 'run.completed', channel: 'ci' });
    receiver.expectClean();
    expect(receiver.requests).toHaveLength(1);
    const got = receiver.requests[0]!;
    expect(got.headers['webhook-id']).toBe(entry!.id);
    expect(got.body).toEqual({
      type: 'run.completed',
      timestamp: expect.any(String),
      data: {
        runId: run.id,
        hook: 'agent',
        agentId: 'main',
        sessionKey: run.sessionKey,
        status: 'ok',
        replyDisposition: 'silent',
        delivery: { status: 'skipped', reason: 'deliver is false', channel: null, to: null, attempts: 0 },
      },
    });
  });

  it('puts the reply in the event only with hooks.replyInResponse', async () => {
    const { receiver, finish, settled } = await setup({ config: { hooks: { replyInResponse: true } } });
    await settled((await finish({}, 'the build is green')).id);
    expect(receiver.requests[0]!.body.data.reply).toBe('the build is green');
  });

  it('retries a failing endpoint with the same webhook-id, each attempt signed anew, then fails it for good', async () => {
    const { receiver, finish, settled, log } = await setup({ script: () => ({ status: 503 }) });
    const run = await finish();
    const [entry] = await settled(run.id);
    expect(entry).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, lastError: 'HTTP 503' });
    expect(receiver.requests).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([entry!.id]));
    receiver.expectClean();
    expect(log.text()).toContain('callback failed; will retry');
  });

  it('honours Retry-After: the next attempt waits for it', async () => {
    let first = 0;
    const { finish, callbacks } = await setup({
      script: (_, i) => (i === 0 ? ((first = Date.now()), { status: 429, headers: { 'retry-after': '3600' } }) : { status: 204 }),
    });
    const run = await finish();
    await until(async () => (await callbacks(run.id))[0]!.attempts === 1);
    const [entry] = await callbacks(run.id);
    expect(entry).toMatchObject({ status: 'pending', lastError: 'HTTP 429' });
    expect(entry!.nextAttemptAt).toBeGreaterThanOrEqual(first + 3_600_000);
  });

  it('refuses a callback on 127.0.0.1 without allowPrivateNetwork: failed at once, the reason on the entry, nothing sent', async () => {
    const { receiver, finish, settled } = await setup({ callback: { allowPrivateNetwork: false } });
    const [entry] = await settled((await finish()).id);
    expect(entry).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'refused: 127.0.0.1, a loopback address (set allowPrivateNetwork to allow it)',
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses a name the resolver answers with a private address', async () => {
    const resolve: Resolve = async () => [{ address: '192.168.4.20', family: 4 }];
    const { finish, settled } = await setup({ callback: { url: 'https://hooks.example.com/in', allowPrivateNetwork: false }, resolve });
    const [entry] = await settled((await finish()).id);
    expect(entry!.lastError).toBe(
      'refused: hooks.example.com resolves to 192.168.4.20, a private address (set allowPrivateNetwork to allow it)',
    );
  });

  it('fails a redirect at once, without asking where it points', async () => {
    const { receiver, finish, settled } = await setup({ script: () => ({ status: 307, headers: { location: '/moved' } }) });
    const [entry] = await settled((await finish()).id);
    expect(entry).toMatchObject({ status: 'failed', attempts: 1, lastError: 'HTTP 307: a redirect, which is not followed' });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/events']);
  });

  it("stores delivery.failed with the reply's failure for good and sends it; a failed callback makes no event of its own", async () => {
    const { receiver, store, outbox, finish, settled } = await setup({ types: ['delivery.failed'] });
    const run = newRun({ hookId: 'agent', channel: 'refusing', to: '42' });
    await store.records.accept({ events: [], runs: [run] });
    await store.records.startRun(run.id, 1_500);
    const reply = { id: `reply-${run.id}`, runId: run.id, channel: 'refusing', to: '42', text: 'hi', createdAt: Date.now() };
    await store.records.finishRun(okOutcome(run.id, { reply: 'hi', delivery: { kind: 'outbox', entry: reply } }));
    outbox.notify(reply);
    await until(async () => (await store.records.runCallbacks(run.id)).length === 1);
    const [entry] = await settled(run.id);
    expect(entry).toMatchObject({ event: 'delivery.failed', status: 'sent' });
    expect((await store.records.getRun(run.id))!.delivery.status).toBe('failed');
    expect(receiver.requests[0]!.body.data).toMatchObject({
      runId: run.id,
      hook: 'agent',
      status: 'ok',
      replyDisposition: 'visible',
      delivery: { status: 'failed', reason: 'HTTP 400: chat not found', channel: 'refusing', to: '42', attempts: 1 },
    });
    // a run that finished without a delivery has no delivery.failed
    expect(await settled((await finish()).id)).toEqual([]);
    receiver.expectClean();
  });
});
