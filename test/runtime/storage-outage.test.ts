/**
 * The runtime through a full disk, without a restart: a run whose outcome
 * cannot be stored is kept and stored once the disk has room (no other run
 * starts meanwhile), a delivery's attempts are recorded before the next send,
 * so the sends never pass the attempt cap, and a heartbeat goes on. The disk
 * fails at the store's COMMIT (test/helpers/storage.ts); time is faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChannelError, type ChannelMessage, type Plugin } from '../../src/plugins/define.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { createHeartbeat } from '../../src/runtime/heartbeat.ts';
import { createOutbox, MAX_ATTEMPTS, type Outbox } from '../../src/runtime/outbox.ts';
import { createRunner, type Runner } from '../../src/runtime/runner.ts';
import { STORE_RETRY_MAX_MS } from '../../src/runtime/until-stored.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { captureLogger, newRun, runAwaitingDelivery, scriptedProvider, testGeneration } from '../helpers/runtime.ts';
import { fillableDisk } from '../helpers/storage.ts';

/** A channel `memory` whose sends go to `send`. */
function memoryChannel(send: (m: ChannelMessage) => Promise<void>): Plugin {
  return { name: 'memory-test', channels: { memory: { create: () => ({ send: (m) => send(m) }) } } };
}

/** Lets the store's group commits (setImmediate, not faked) and what follows them run. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** Moves fake time on by `ms`, a second at a time, letting commits run in between. */
async function pass(ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 1000) {
    await vi.advanceTimersByTimeAsync(Math.min(1000, ms - t));
    await turns();
  }
}

/** Waits (in fake seconds) until `check` holds; fails after `ms`. */
async function eventually(check: () => Promise<boolean> | boolean, ms = 5 * STORE_RETRY_MAX_MS): Promise<void> {
  for (let t = 0; t <= ms; t += 1000) {
    await turns();
    if (await check()) return;
    await pass(1000);
  }
  throw new Error('condition not met in time');
}

let stores: SqliteStore[] = [];
let stops: (() => Promise<void>)[] = [];
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(async () => {
  // real timers first: a stop's deadline is a timer
  vi.useRealTimers();
  for (const s of stops) await s();
  for (const s of stores) await s.close();
  stores = [];
  stops = [];
});

function world(
  send: (m: ChannelMessage) => Promise<void>,
  provider = scriptedProvider((req) => `reply to ${req.messages.at(-1)!.content}`),
) {
  const gen = testGeneration(
    {
      agents: { defaults: { model: 'sp/m', maxConcurrent: 1 }, providers: { sp: { type: 'scripted' } } },
      channels: { mem: { type: 'memory' } },
      session: { defaultRoute: { channel: 'mem' } },
      delivery: { initialBackoffMs: 1000 },
    },
    { plugins: [provider.plugin, memoryChannel(send)] },
  );
  const store = new SqliteStore({ path: ':memory:' });
  stores.push(store);
  const disk = fillableDisk(store);
  const generations = new GenerationRef(gen);
  const log = captureLogger('info');
  const newOutbox = () => {
    const o = createOutbox({ records: store.records, generations, logger: log.logger, backoffMs: () => 1000 });
    stops.push(() => o.stop(0));
    return o;
  };
  return { provider, store, disk, generations, log, newOutbox };
}

describe('a full disk', () => {
  it('keeps the outcomes it cannot store, starts no run once it knows, and stores, delivers and goes on once the disk has room', async () => {
    const sent: ChannelMessage[] = [];
    const provider = scriptedProvider();
    const w = world(async (m) => void sent.push(m), provider);
    const outbox: Outbox = w.newOutbox();
    const runner: Runner = createRunner({
      records: w.store.records,
      queue: w.store.runs,
      generations: w.generations,
      logger: w.log.logger,
      requestHeartbeat: () => {},
      notifyOutbox: (e) => outbox.notify(e),
    });
    stops.push(() => runner.stop(0));
    const runs = ['first', 'second', 'third'].map((message) => newRun({ model: 'sp/m', message }));
    await w.store.records.accept({ events: [], runs });
    runner.notify();
    await provider.waitForCalls(1);

    w.disk.full = true;
    // the first answer frees the slot for the second run before its outcome's commit fails
    provider.calls[0]!.reply('reply to first');
    await provider.waitForCalls(2);
    await eventually(() => w.disk.failedCommits() > 0);
    provider.calls[1]!.reply('reply to second');
    await pass(3 * STORE_RETRY_MAX_MS);
    // both outcomes wait in memory; the third run is not started while the store cannot write
    expect(provider.calls).toHaveLength(2);
    expect([runner.running(), runner.queued()]).toEqual([2, 1]);
    expect((await w.store.records.unfinishedRuns()).map((r) => r.id)).toEqual(runs.map((r) => r.id));
    expect(w.log.text()).toContain('store the outcome of a run: storage unavailable; trying again until it works');

    w.disk.full = false;
    await eventually(() => provider.calls.length === 3);
    provider.calls[2]!.reply('reply to third');
    for (const r of runs) await eventually(async () => (await w.store.records.getRun(r.id))!.delivery.status === 'sent');
    for (const r of runs) {
      const stored = (await w.store.records.getRun(r.id))!;
      expect(stored).toMatchObject({
        status: 'ok',
        attempts: 1,
        reply: `reply to ${r.message}`,
        delivery: { status: 'sent', attempts: 1 },
      });
      expect(stored.startedAt).not.toBeNull();
    }
    expect(sent.map((m) => m.text).sort()).toEqual(['reply to first', 'reply to second', 'reply to third']);
    expect([runner.running(), runner.queued()]).toEqual([0, 0]);
  });

  it('records each delivery attempt before the next send: never more sends than the cap, before or after a restart', async () => {
    let sends = 0;
    const w = world(async () => {
      sends++;
      throw new ChannelError('HTTP 503', { retryable: true });
    });
    const { runId } = await runAwaitingDelivery(w.store, { channel: 'mem', text: 'hello' });
    w.disk.full = true;
    const first = w.newOutbox();
    first.start();
    await eventually(() => w.disk.failedCommits() > 0);
    await pass(5 * 60_000);
    // one send, whose failure could not be recorded: the next one waits for that record
    expect(sends).toBe(1);
    expect((await w.store.records.getRun(runId))!.delivery).toMatchObject({ status: 'pending', attempts: 0 });

    w.disk.full = false;
    await eventually(async () => (await w.store.records.getRun(runId))!.delivery.status === 'failed');
    expect((await w.store.records.getRun(runId))!.delivery).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, reason: 'HTTP 503' });
    expect(sends).toBe(MAX_ATTEMPTS);
    // a restart finds nothing left to send
    await first.stop(0);
    w.newOutbox().start();
    await pass(60_000);
    expect(sends).toBe(MAX_ATTEMPTS);
  });

  it('sends a delivery that succeeds after the disk recovers once, and records it sent', async () => {
    let sends = 0;
    const w = world(async () => {
      if (++sends < 3) throw new ChannelError('HTTP 502', { retryable: true });
    });
    const { runId } = await runAwaitingDelivery(w.store, { channel: 'mem', text: 'hello' });
    w.disk.full = true;
    w.newOutbox().start();
    await eventually(() => w.disk.failedCommits() > 0);
    await pass(60_000);
    w.disk.full = false;
    await eventually(async () => (await w.store.records.getRun(runId))!.delivery.status === 'sent');
    expect((await w.store.records.getRun(runId))!.delivery).toMatchObject({ status: 'sent', attempts: 3 });
    expect(sends).toBe(3);
  });

  it('lets a heartbeat requested while the disk is full run once it has room, consuming its events', async () => {
    const w = world(async () => {});
    const heartbeat = createHeartbeat({
      records: w.store.records,
      tasks: w.store.tasks,
      generations: w.generations,
      logger: w.log.logger,
      notifyOutbox: () => {},
    });
    stops.push(() => heartbeat.stop(0));
    await w.store.records.accept({
      events: [{ id: 'ev-1', source: 'wake', text: 'disk at 100%', createdAt: Date.now(), runId: null }],
      runs: [],
    });
    w.disk.full = true;
    heartbeat.request();
    await eventually(() => w.disk.failedCommits() > 0);
    await pass(60_000);
    expect(w.provider.calls).toHaveLength(0);
    w.disk.full = false;
    await eventually(async () => (await w.store.records.listEvents({ limit: 10 }))[0]!.status === 'consumed');
    const [hb] = (await w.store.records.listRuns({ limit: 10 })).filter((r) => r.kind === 'heartbeat');
    expect(hb).toMatchObject({ status: 'ok' });
    expect(w.provider.calls).toHaveLength(1);
  });

  it('gives up on an outcome the store still cannot take at the stop deadline, leaving the run for the next start', async () => {
    const w = world(async () => {});
    const runner = createRunner({
      records: w.store.records,
      queue: w.store.runs,
      generations: w.generations,
      logger: w.log.logger,
      requestHeartbeat: () => {},
      notifyOutbox: () => {},
    });
    const run = newRun({ model: 'sp/m' });
    await w.store.records.accept({ events: [], runs: [run] });
    w.disk.full = true;
    runner.notify();
    await eventually(() => w.disk.failedCommits() > 0);
    const stopped = runner.stop(5000);
    await pass(5000);
    await stopped;
    expect([runner.running(), runner.queued()]).toEqual([0, 0]);
    expect(w.log.text()).toContain('run left for the next start');
    w.disk.full = false;
    expect((await w.store.records.unfinishedRuns()).map((r) => r.id)).toEqual([run.id]);
  });
});
