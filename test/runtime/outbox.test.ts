/**
 * The delivery outbox (docs/runtime.md, "Delivery") with an in-memory channel: backoff, the
 * outcome recorded on the run, shutdown, and what reaches the log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelError, type ChannelMessage, type Plugin } from '../../src/plugins/define.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { backoffFor, createOutbox, MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, type Outbox } from '../../src/runtime/outbox.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { until } from '../helpers/cli.ts';
import { captureLogger, runAwaitingDelivery, testGeneration } from '../helpers/runtime.ts';

type Send = (msg: ChannelMessage) => Promise<void>;

function memoryChannel(send: Send): Plugin {
  return { name: 'memory-test', channels: { memory: { create: () => ({ send: (m) => send(m) }) } } };
}

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

function setup(send: Send, opts: { delivery?: Record<string, number>; channels?: Record<string, unknown>; clock?: () => number } = {}) {
  const store = new SqliteStore({ path: ':memory:' });
  const log = captureLogger('trace');
  const gen = testGeneration(
    { channels: opts.channels ?? { mem: { type: 'memory' } }, delivery: opts.delivery ?? { initialBackoffMs: 5 } },
    { plugins: [memoryChannel(send)] },
  );
  const outbox: Outbox = createOutbox({
    records: store.records,
    generations: new GenerationRef(gen),
    logger: log.logger,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  cleanups.push(async () => {
    await outbox.stop(0);
    await store.close();
  });
  return { store, outbox, log };
}

describe('backoffFor()', () => {
  it.each([
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [4, 8000],
    [10, 300_000],
  ])('after %i failures waits about %i ms', (failures, base) => {
    expect(backoffFor(failures, 1000, 300_000, () => 0)).toBe(Math.round(base * 0.8));
    expect(backoffFor(failures, 1000, 300_000, () => 1)).toBe(Math.round(base * 1.2));
  });
});

describe('createOutbox()', () => {
  it('records a successful delivery of the main session as sent, with the attempts it took, and remembers its route as the main route', async () => {
    const sent: ChannelMessage[] = [];
    let calls = 0;
    const { store, outbox } = setup(async (m) => {
      if (++calls === 1) throw new Error('socket hang up');
      sent.push(m);
    });
    const { runId, deliveryId } = await runAwaitingDelivery(store, { channel: 'mem', to: 'chat-1', text: 'hello', mainSession: true });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'sent');
    expect((await store.records.getRun(runId))!.delivery).toEqual({
      status: 'sent',
      reason: null,
      channel: 'mem',
      to: 'chat-1',
      attempts: 2,
    });
    expect(sent).toMatchObject([{ runId, deliveryId, to: 'chat-1', text: 'hello', part: 1, parts: 1 }]);
    expect(JSON.parse((await store.records.getMeta('mainRoute'))!)).toEqual({ channel: 'mem', to: 'chat-1' });
  });

  it('does not take the route of a reply of another session as the main route', async () => {
    const { store, outbox } = setup(async () => undefined);
    await store.records.setMeta('mainRoute', JSON.stringify({ channel: 'mem', to: 'owner' }));
    const { runId } = await runAwaitingDelivery(store, { channel: 'mem', to: 'someone-else', text: 'hello' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'sent');
    expect(JSON.parse((await store.records.getMeta('mainRoute'))!)).toEqual({ channel: 'mem', to: 'owner' });
  });

  it(`gives up after ${MAX_ATTEMPTS} attempts with the last reason`, async () => {
    let calls = 0;
    const { store, outbox } = setup(async () => {
      calls++;
      throw new ChannelError(`HTTP 503 (try ${calls})`, { retryable: true });
    });
    const { runId } = await runAwaitingDelivery(store, { channel: 'mem', text: 'x' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'failed');
    await outbox.idle();
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({
      status: 'failed',
      reason: `HTTP 503 (try ${MAX_ATTEMPTS})`,
      attempts: MAX_ATTEMPTS,
    });
    expect(calls).toBe(MAX_ATTEMPTS);
  });

  it('waits delivery.initialBackoffMs (±20 %) before the second attempt', async () => {
    // a clock that stands still, ahead of every delivery's due time: the retry's time is exact
    const NOW = Date.now() + 600_000;
    const { store, outbox } = setup(
      async () => {
        throw new Error('connection reset');
      },
      { delivery: { initialBackoffMs: 60_000 }, clock: () => NOW },
    );
    await runAwaitingDelivery(store, { channel: 'mem', text: 'x' });
    outbox.start();
    await until(async () => (await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10))[0]?.attempts === 1);
    const [d] = await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10);
    expect(d!.nextAttemptAt - NOW).toBeGreaterThanOrEqual(48_000);
    expect(d!.nextAttemptAt - NOW).toBeLessThanOrEqual(72_000);
    expect(d!.lastError).toBe('connection reset');
  });

  it('waits for a Retry-After longer than the backoff, but no longer than the cap', async () => {
    const NOW = Date.now() + 600_000;
    const { store, outbox } = setup(
      async () => {
        throw new ChannelError('HTTP 429', { retryable: true, retryAfterMs: 10 * MAX_RETRY_AFTER_MS });
      },
      { clock: () => NOW },
    );
    const { deliveryId } = await runAwaitingDelivery(store, { channel: 'mem', text: 'x' });
    outbox.start();
    await until(async () => (await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10))[0]?.attempts === 1);
    const [d] = await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10);
    expect(d!.id).toBe(deliveryId);
    expect(d!.nextAttemptAt - NOW).toBe(MAX_RETRY_AFTER_MS);
  });

  it('fails a delivery whose channel is no longer configured', async () => {
    const { store, outbox } = setup(async () => undefined);
    const { runId } = await runAwaitingDelivery(store, { channel: 'removed', text: 'x' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'failed');
    expect((await store.records.getRun(runId))!.delivery.reason).toBe('channel "removed" is not configured');
  });

  it('on stop, aborts a send still going at the deadline and leaves it pending without counting the attempt', async () => {
    let signal: AbortSignal | undefined;
    const { store, outbox } = setup(
      (m) =>
        new Promise((_resolve, reject) => {
          signal = m.signal;
          m.signal.addEventListener('abort', () => reject(m.signal.reason), { once: true });
        }),
    );
    const { runId, deliveryId } = await runAwaitingDelivery(store, { channel: 'mem', text: 'x' });
    outbox.start();
    await until(() => signal);
    await outbox.stop(50);
    expect(signal!.aborted).toBe(true);
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await store.records.dueDeliveries(Date.now() + 1, 10)).toMatchObject([{ id: deliveryId, status: 'pending', attempts: 0 }]);
  });

  it('logs the run, channel, attempt and reason, never the reply text', async () => {
    const { store, outbox, log } = setup(async () => {
      throw new ChannelError('HTTP 400: bad request', { retryable: false });
    });
    const { runId } = await runAwaitingDelivery(store, { channel: 'mem', text: 'PRIVATE-REPLY-TEXT' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'failed');
    expect(log.text()).toContain(runId);
    expect(log.text()).toContain('HTTP 400: bad request');
    expect(log.text()).not.toContain('PRIVATE-REPLY-TEXT');
  });
});
