/**
 * The outbox's parts (docs/runtime.md, "Delivery"): a reply is rendered into
 * parts once, at its first attempt, and kept; progress is stored per part, so
 * a retry or a restart sends only the parts not yet accepted; and each class
 * of channel error (rate limited, transient, permanent, ambiguous) is handled
 * as the channel says.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelError, type ChannelMessage, type Plugin } from '../../src/plugins/define.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { createOutbox, MAX_ATTEMPTS, type Outbox } from '../../src/runtime/outbox.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/roles.ts';
import { cleanup, tempDir, until } from '../helpers/cli.ts';
import { captureLogger, runAwaitingDelivery, testGeneration } from '../helpers/runtime.ts';

type Send = (msg: ChannelMessage) => Promise<void>;

/**
 * A channel (type `parts`) that splits at `max` characters, or renders with `render` when
 * the test gives one; each call to `render` is counted.
 */
function partsChannel(send: Send, render?: (markdown: string) => string[]) {
  const renders: string[] = [];
  const plugin: Plugin = {
    name: 'parts-test',
    channels: {
      parts: {
        create: (config: { max?: number }) => ({
          limits: { maxTextLength: config.max ?? 10 },
          ...(render
            ? {
                render: (md: string) => {
                  renders.push(md);
                  return render(md);
                },
              }
            : {}),
          send: (m) => send(m),
        }),
      },
    },
  };
  return { plugin, renders };
}

const dirs: string[] = [];
let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
  for (const d of dirs.splice(0)) cleanup(d);
});

/** An outbox over `store` with a channel `chat` of type `parts` splitting at `max`. */
function outboxFor(store: Store, plugin: Plugin, opts: { max?: number; clock?: () => number; backoffMs?: number } = {}) {
  const log = captureLogger('trace');
  const generations = new GenerationRef(
    testGeneration({ channels: { chat: { type: 'parts', max: opts.max ?? 10 } } }, { plugins: [plugin] }),
  );
  const outbox: Outbox = createOutbox({
    records: store.records,
    generations,
    logger: log.logger,
    backoffMs: () => opts.backoffMs ?? 1,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  cleanups.push(() => outbox.stop(0));
  return { outbox, generations, log };
}

function memoryStore(): SqliteStore {
  const store = new SqliteStore({ path: ':memory:' });
  cleanups.push(() => store.close());
  return store;
}

/** Three parts at a limit of 10: "aaaa aaaa", "bbbb bbbb", "cccc cccc". */
const THREE = 'aaaa aaaa bbbb bbbb cccc cccc';
const due = async (store: Store) => (await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10))[0];

describe('parts fixed at the first attempt', () => {
  it('renders once, stores the parts before the first is sent, and a retry after a config change sends the stored parts', async () => {
    const sent: ChannelMessage[] = [];
    let failSecond = true;
    let storedAtFirstSend: unknown;
    const store = memoryStore();
    const { plugin, renders } = partsChannel(
      async (m) => {
        if (m.part === 1) storedAtFirstSend = (await due(store))?.parts;
        if (m.part === 2 && failSecond) {
          failSecond = false;
          throw new ChannelError('HTTP 503', { retryable: true });
        }
        sent.push(m);
      },
      (md) => md.split(' ').reduce<string[]>((out, w, i) => (i % 2 ? [...out.slice(0, -1), `${out.at(-1)} ${w}`] : [...out, w]), []),
    );
    const { outbox, generations } = outboxFor(store, plugin, { backoffMs: 200 });
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', to: 'c1', text: THREE });
    outbox.start();
    await until(async () => (await due(store))?.attempts === 1);
    // the limit changes before the retry: what was fixed is sent, not a new split
    generations.swap(testGeneration({ channels: { chat: { type: 'parts', max: 1000 } } }, { plugins: [plugin] }));
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'sent');
    expect(storedAtFirstSend).toEqual(['aaaa aaaa', 'bbbb bbbb', 'cccc cccc']);
    expect(renders).toEqual([THREE]);
    expect(sent.map((m) => [m.part, m.parts, m.text, m.attempt])).toEqual([
      [1, 3, 'aaaa aaaa', 1],
      [2, 3, 'bbbb bbbb', 2],
      [3, 3, 'cccc cccc', 2],
    ]);
  });

  it('falls back to splitting at the channel limit without a renderer', async () => {
    const sent: string[] = [];
    const store = memoryStore();
    const { plugin } = partsChannel(async (m) => void sent.push(m.text));
    const { outbox } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: THREE });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'sent');
    expect(sent).toEqual(['aaaa aaaa', 'bbbb bbbb', 'cccc cccc']);
  });

  it('a reply of one part costs no write before its send; a retry sends the part rendered at the first attempt', async () => {
    const sent: string[] = [];
    const seen: unknown[] = [];
    let calls = 0;
    const store = memoryStore();
    const { plugin, renders } = partsChannel(
      async (m) => {
        seen.push((await due(store))?.parts);
        if (++calls === 1) throw new ChannelError('HTTP 502', { retryable: true });
        sent.push(m.text);
      },
      (md) => [`<b>${md}</b>`],
    );
    const { outbox } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: 'hi' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'sent');
    expect(seen).toEqual([null, ['<b>hi</b>']]);
    expect(renders).toEqual(['hi']);
    expect(sent).toEqual(['<b>hi</b>']);
  });

  it('a reply of one part whose send a stop cuts off keeps the part it was sending, unsent and uncounted', async () => {
    const store = memoryStore();
    let sending = false;
    const { plugin } = partsChannel(
      (m) =>
        new Promise((_resolve, reject) => {
          sending = true;
          m.signal.addEventListener('abort', () => reject(m.signal.reason), { once: true });
        }),
      (md) => [`<b>${md}</b>`],
    );
    const { outbox } = outboxFor(store, plugin);
    await runAwaitingDelivery(store, { channel: 'chat', text: 'hi' });
    outbox.start();
    await until(() => sending);
    expect((await due(store))?.parts).toBeNull();
    await outbox.stop(0);
    await until(async () => (await due(store))?.parts);
    expect(await due(store)).toMatchObject({ parts: ['<b>hi</b>'], sentParts: 0, attempts: 0 });
  });

  it('a renderer that throws fails the delivery with a reason that quotes nothing of the reply', async () => {
    const store = memoryStore();
    const { plugin } = partsChannel(
      async () => undefined,
      (md) => {
        throw new Error(`cannot render ${md}`);
      },
    );
    const { outbox, log } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: 'PRIVATE-REPLY' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'failed');
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({
      reason: 'channel "chat" could not render the reply',
      attempts: 1,
    });
    expect(log.text()).not.toContain('PRIVATE-REPLY');
  });
});

describe('a reply that renders to nothing', () => {
  it('is skipped with the reason "empty reply": nothing is sent and it is not called sent', async () => {
    const sent: string[] = [];
    const store = memoryStore();
    const { plugin, renders } = partsChannel(
      async (m) => void sent.push(m.text),
      () => [],
    );
    const { outbox, log } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', to: 'c1', text: '[ref]: https://example.com' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status !== 'pending');
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({ status: 'skipped', reason: 'empty reply', attempts: 0 });
    expect(renders).toHaveLength(1);
    expect(sent).toEqual([]);
    expect(await due(store)).toBeUndefined();
    expect(log.text()).toContain('delivery skipped');
  });
});

describe('progress stored per part', () => {
  it('the count of parts sent is stored before the next part is sent', async () => {
    const storedAtSend: number[] = [];
    const store = memoryStore();
    const { plugin } = partsChannel(async () => void storedAtSend.push((await due(store))!.sentParts));
    const { outbox } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: THREE });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'sent');
    expect(storedAtSend).toEqual([0, 1, 2]);
  });

  it('a stop between parts of a reply, then a new start on the same file, sends only the rest', async () => {
    const dir = tempDir('hook-intake-parts-');
    dirs.push(dir);
    const path = join(dir, 'store.db');
    const first: string[] = [];
    let store = new SqliteStore({ path });
    // the second part never gets an answer: the service stops while it is in flight
    const one = partsChannel((m) => {
      if (m.part === 1) {
        first.push(m.text);
        return Promise.resolve();
      }
      return new Promise((_resolve, reject) => m.signal.addEventListener('abort', () => reject(m.signal.reason), { once: true }));
    });
    const a = outboxFor(store, one.plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: THREE });
    a.outbox.start();
    await until(async () => (await due(store))?.sentParts === 1);
    await a.outbox.stop(0);
    await store.close();

    store = new SqliteStore({ path });
    cleanups.push(() => store.close());
    const second: ChannelMessage[] = [];
    const two = partsChannel(async (m) => void second.push(m));
    const b = outboxFor(store, two.plugin, { max: 1000 });
    b.outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'sent');
    expect(first).toEqual(['aaaa aaaa']);
    expect(second.map((m) => [m.part, m.parts, m.text])).toEqual([
      [2, 3, 'bbbb bbbb'],
      [3, 3, 'cccc cccc'],
    ]);
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({ status: 'sent', attempts: 1 });
  });
});

describe('error classes', () => {
  it("rate limited: waits the channel's hint, then resumes at the part that was refused", async () => {
    const NOW = Date.now() + 600_000;
    const sent: number[] = [];
    let limited = false;
    const store = memoryStore();
    const { plugin } = partsChannel(async (m) => {
      if (m.part === 2 && !limited) {
        limited = true;
        throw new ChannelError('HTTP 429: Too Many Requests', { retryable: true, retryAfterMs: 30_000 });
      }
      sent.push(m.part);
    });
    const { outbox } = outboxFor(store, plugin, { clock: () => NOW, backoffMs: 1 });
    await runAwaitingDelivery(store, { channel: 'chat', text: THREE });
    outbox.start();
    await until(async () => (await due(store))?.attempts === 1);
    expect(await due(store)).toMatchObject({ nextAttemptAt: NOW + 30_000, sentParts: 1, lastError: 'HTTP 429: Too Many Requests' });
    expect(sent).toEqual([1]);
  });

  it("permanent: fails after one attempt with the channel's message as the reason", async () => {
    let calls = 0;
    const store = memoryStore();
    const { plugin } = partsChannel(async () => {
      calls++;
      throw new ChannelError('HTTP 400: chat not found', { retryable: false });
    });
    const { outbox } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: 'hi' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'failed');
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({
      status: 'failed',
      reason: 'HTTP 400: chat not found',
      attempts: 1,
    });
    expect(calls).toBe(1);
  });

  it('transient: retried with backoff up to the attempt cap', async () => {
    let calls = 0;
    const store = memoryStore();
    const { plugin } = partsChannel(async () => {
      calls++;
      throw new ChannelError('HTTP 502', { retryable: true });
    });
    const { outbox } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: 'hi' });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'failed');
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({ reason: 'HTTP 502', attempts: MAX_ATTEMPTS });
    expect(calls).toBe(MAX_ATTEMPTS);
  });

  it('ambiguous: a part is retried once; a second ambiguous failure of it fails the delivery saying it may have been delivered', async () => {
    const tries: number[] = [];
    const store = memoryStore();
    const { plugin } = partsChannel(async (m) => {
      tries.push(m.part);
      if (m.part === 2) throw new ChannelError('timed out after sending', { retryable: true, ambiguous: true });
    });
    const { outbox } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: THREE });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'failed');
    expect(tries).toEqual([1, 2, 2]);
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({
      status: 'failed',
      attempts: 2,
      reason: 'timed out after sending; part 2 of 3 may or may not have been delivered',
    });
  });

  it('ambiguous: each part has its own retry, and a transient failure between does not use it up', async () => {
    const script: Record<number, string[]> = { 1: ['ambiguous', 'ok'], 2: ['ambiguous', 'transient', 'ok'], 3: ['ok'] };
    const tries: string[] = [];
    const store = memoryStore();
    const { plugin } = partsChannel(async (m) => {
      const what = script[m.part]!.shift()!;
      tries.push(`${m.part}:${what}`);
      if (what === 'ambiguous') throw new ChannelError('no answer', { retryable: true, ambiguous: true });
      if (what === 'transient') throw new ChannelError('HTTP 503', { retryable: true });
    });
    const { outbox } = outboxFor(store, plugin);
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: THREE });
    outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'sent');
    expect(tries).toEqual(['1:ambiguous', '1:ok', '2:ambiguous', '2:transient', '2:ok', '3:ok']);
    expect((await store.records.getRun(runId))!.delivery.attempts).toBe(4);
  });

  it('ambiguous: the first failure is remembered across a restart, so the second after it ends the delivery', async () => {
    const dir = tempDir('hook-intake-parts-');
    dirs.push(dir);
    const path = join(dir, 'store.db');
    let store = new SqliteStore({ path });
    const ambiguous = async () => {
      throw new ChannelError('connection reset after sending', { retryable: true, ambiguous: true });
    };
    const a = outboxFor(store, partsChannel(ambiguous).plugin, { backoffMs: 60_000 });
    const { runId } = await runAwaitingDelivery(store, { channel: 'chat', text: 'hi' });
    a.outbox.start();
    await until(async () => (await due(store))?.attempts === 1);
    await a.outbox.stop(0);
    await store.close();

    store = new SqliteStore({ path });
    cleanups.push(() => store.close());
    // the retry is due in a minute: the new process's clock is past it
    const b = outboxFor(store, partsChannel(ambiguous).plugin, { clock: () => Date.now() + 120_000 });
    b.outbox.start();
    await until(async () => (await store.records.getRun(runId))!.delivery.status === 'failed');
    expect((await store.records.getRun(runId))!.delivery).toMatchObject({
      attempts: 2,
      reason: 'connection reset after sending; the reply may or may not have been delivered',
    });
  });
});
