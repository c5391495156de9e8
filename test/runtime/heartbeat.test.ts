/**
 * The heartbeat (docs/runtime.md, "The main session and the heartbeat"): coalescing of `now` requests, the periodic timer,
 * consumption of pending events, and what happens to the reply.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GenerationRef } from '../../src/generation/ref.ts';
import { COALESCE_MS, createHeartbeat, type Heartbeat } from '../../src/runtime/heartbeat.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { TokenTally } from '../../src/runtime/tokens.ts';
import { captureLogger, scriptedProvider, testGeneration } from '../helpers/runtime.ts';

interface Setup {
  store: SqliteStore;
  heartbeat: Heartbeat;
  others: Heartbeat[];
  provider: ReturnType<typeof scriptedProvider>;
  outbox: ReturnType<typeof vi.fn>;
  wake(text: string): Promise<string>;
  /** Another instance's heartbeat on the same store. */
  another(): Heartbeat;
  heartbeatRuns(): Promise<import('../../src/store/types.ts').Run[]>;
  tokens: TokenTally;
}

let open: Setup[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const s of open) {
    await s.heartbeat.stop();
    for (const h of s.others) await h.stop();
    await s.store.close();
  }
  open = [];
});

/** Fake time passes by `ms`, with the turns of the event loop the store's writes need. */
async function passFake(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setImmediate(r));
    await vi.advanceTimersByTimeAsync(0);
  }
}

let seq = 0;
function setup(
  opts: { every?: string; maxEvents?: number; reply?: string; provider?: ReturnType<typeof scriptedProvider>; clock?: () => number } = {},
): Setup {
  const provider = opts.provider ?? scriptedProvider(() => opts.reply ?? 'HEARTBEAT_OK');
  const beats = { every: opts.every ?? '0', ...(opts.maxEvents ? { maxEvents: opts.maxEvents } : {}) };
  const gen = testGeneration(
    {
      agents: { defaults: { model: 'sp/main', heartbeat: beats }, providers: { sp: { type: 'scripted' } } },
      session: { defaultRoute: { channel: 'console' } },
    },
    { plugins: [provider.plugin] },
  );
  const store = new SqliteStore({ path: ':memory:', clock: opts.clock });
  const outbox = vi.fn();
  const tokens = new TokenTally();
  const make = () =>
    createHeartbeat({
      records: store.records,
      tasks: store.tasks,
      generations: new GenerationRef(gen),
      logger: captureLogger('silent').logger,
      notifyOutbox: outbox,
      clock: opts.clock,
      tokens,
    });
  const heartbeat = make();
  const others: Heartbeat[] = [];
  const s: Setup = {
    store,
    heartbeat,
    others,
    provider,
    outbox,
    async wake(text) {
      const id = `ev-${++seq}`;
      await store.records.accept({ events: [{ id, source: 'wake', text, createdAt: Date.now(), runId: null }], runs: [] });
      return id;
    },
    another() {
      const h = make();
      others.push(h);
      return h;
    },
    heartbeatRuns: async () => (await store.records.listRuns({ limit: 1000 })).filter((r) => r.kind === 'heartbeat'),
    tokens,
  };
  open.push(s);
  return s;
}

describe('createHeartbeat()', () => {
  it('turns a burst of now requests into exactly one heartbeat over all pending events', async () => {
    const s = setup();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push(await s.wake(`event ${i}`));
    // the burst in one turn, so that however slow the machine, it falls in one coalescing window
    for (let i = 0; i < 25; i++) s.heartbeat.request();
    await s.heartbeat.idle();
    const runs = await s.heartbeatRuns();
    expect(runs).toHaveLength(1);
    expect(s.provider.calls).toHaveLength(1);
    const prompt = s.provider.calls[0]!.req.messages.at(-1)!.content;
    for (let i = 0; i < 25; i++) expect(prompt).toContain(`event ${i}`);
    const events = await s.store.records.listEvents({ limit: 100 });
    expect(events.map((e) => [e.status, e.heartbeatId])).toEqual(ids.map(() => ['consumed', runs[0]!.id]));
  });

  it("stores the usage its provider reports with the heartbeat's run, counted for the main agent", async () => {
    const provider = scriptedProvider();
    const s = setup({ provider });
    await s.wake('disk at 91%');
    s.heartbeat.request();
    await provider.waitForCalls(1);
    provider.calls[0]!.reply('HEARTBEAT_OK', { inputTokens: 300, outputTokens: 4 });
    await s.heartbeat.idle();
    expect((await s.heartbeatRuns()).map((r) => r.usage)).toEqual([{ inputTokens: 300, outputTokens: 4 }]);
    expect(s.tokens.entries()).toEqual([{ agent: 'main', model: 'sp/main', inputTokens: 300, outputTokens: 4 }]);
  });

  it('runs one more heartbeat for requests that arrive while one is running', async () => {
    const provider = scriptedProvider();
    const s = setup({ provider });
    await s.wake('event-alpha');
    s.heartbeat.request();
    await provider.waitForCalls(1);
    await s.wake('event-beta');
    s.heartbeat.request();
    s.heartbeat.request();
    provider.calls[0]!.reply('HEARTBEAT_OK');
    await provider.waitForCalls(2);
    provider.calls[1]!.reply('HEARTBEAT_OK');
    await s.heartbeat.idle();
    expect(await s.heartbeatRuns()).toHaveLength(2);
    expect(provider.calls[1]!.req.messages.at(-1)!.content).toContain('event-beta');
    expect(provider.calls[1]!.req.messages.at(-1)!.content).not.toContain('event-alpha');
  });

  it('claims again when its timer fired a moment early and the queue found the heartbeat not yet due', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    // the wall clock the service reads can lag the timers' clock by a millisecond
    let lag = 0;
    const s = setup({ clock: () => Date.now() - lag });
    const claim = s.store.tasks.claim.bind(s.store.tasks);
    let claims = 0;
    // by the time the first claim's answer is read, the lag is gone (time went on)
    vi.spyOn(s.store.tasks, 'claim').mockImplementation((...args) => {
      const claimed = claim(...args);
      if (++claims === 1) lag = 0;
      return claimed;
    });
    await s.wake('disk at 91%');
    s.heartbeat.request();
    // the request is stored and its timer set; then the lag begins
    await passFake(0);
    lag = 1;
    await passFake(COALESCE_MS);
    // the first claim found nothing due; the heartbeat ran from the next
    expect(claims).toBeGreaterThan(1);
    expect(s.provider.calls).toHaveLength(1);
    await s.heartbeat.idle();
    expect((await s.store.records.listEvents({ limit: 10 }))[0]!.status).toBe('consumed');
  });

  it('leaves next-heartbeat events pending until the periodic timer fires', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const s = setup({ every: '30m' });
    const id = await s.wake('disk at 91%');
    s.heartbeat.start();
    await vi.advanceTimersByTimeAsync(30 * 60_000 - 1000);
    expect(s.provider.calls).toHaveLength(0);
    expect((await s.store.records.listEvents({ limit: 10 }))[0]).toMatchObject({ id, status: 'pending' });
    await vi.advanceTimersByTimeAsync(1000);
    for (let i = 0; i < 100 && (await s.store.records.listEvents({ limit: 10 }))[0]!.status === 'pending'; i++) {
      await new Promise((r) => setImmediate(r));
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(s.provider.calls).toHaveLength(1);
    expect((await s.store.records.listEvents({ limit: 10 }))[0]).toMatchObject({ id, status: 'consumed' });
  });

  it('runs a heartbeat asked of several instances on one store once, on the one that claims it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const provider = scriptedProvider();
    const s = setup({ provider });
    const other = s.another();
    await s.wake('x');
    s.heartbeat.request();
    other.request();
    await passFake(COALESCE_MS);
    expect(provider.calls).toHaveLength(1);
    await passFake(5_000);
    expect(provider.calls).toHaveLength(1);
    provider.calls[0]!.reply('HEARTBEAT_OK');
    await passFake(1);
    await Promise.all([s.heartbeat.idle(), other.idle()]);
    expect(await s.heartbeatRuns()).toHaveLength(1);
    expect((await s.store.records.listEvents({ limit: 10 }))[0]!.status).toBe('consumed');
  });

  it('coalesces a now request and the timer within the window into one heartbeat, and the timer goes on firing at its period', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const s = setup({ every: '1s' });
    s.heartbeat.start();
    await s.wake('first');
    await passFake(900);
    s.heartbeat.request();
    await passFake(100);
    expect(s.provider.calls).toHaveLength(1);
    await passFake(COALESCE_MS);
    expect(s.provider.calls).toHaveLength(1);
    await s.wake('second');
    await passFake(1_000 - COALESCE_MS - 1);
    expect(s.provider.calls).toHaveLength(1);
    await passFake(1);
    expect(s.provider.calls).toHaveLength(2);
    expect(await s.heartbeatRuns()).toHaveLength(2);
  });

  it('does not deliver a HEARTBEAT_OK reply (any case, surrounding whitespace ignored)', async () => {
    const s = setup({ reply: '\n  heartbeat_ok  \n' });
    await s.wake('nothing to see');
    s.heartbeat.request();
    await s.heartbeat.idle();
    const [run] = await s.heartbeatRuns();
    expect(run).toMatchObject({ status: 'ok', delivery: { status: 'skipped', reason: 'heartbeat acknowledgement only' } });
    expect(await s.store.records.dueDeliveries(Date.now() + 1000, 10)).toEqual([]);
    expect(s.outbox).not.toHaveBeenCalled();
    expect((await s.store.records.listEvents({ limit: 10 }))[0]!.status).toBe('consumed');
  });

  it('delivers any other reply to the main route', async () => {
    const s = setup({ reply: 'The disk is nearly full; I opened a ticket.' });
    await s.wake('disk at 99%');
    s.heartbeat.request();
    await s.heartbeat.idle();
    const [run] = await s.heartbeatRuns();
    expect(run!.delivery).toMatchObject({ status: 'pending', channel: 'console' });
    // a reply of the main session: once sent, its route is the main route
    expect(await s.store.records.dueDeliveries(Date.now() + 1000, 10)).toMatchObject([
      { runId: run!.id, channel: 'console', text: 'The disk is nearly full; I opened a ticket.', mainSession: true },
    ]);
    expect(s.outbox).toHaveBeenCalledTimes(1);
  });

  /** `total` pending events, `backlog <i>` created at 1,000 + i ms, from three sources in a fixed pattern. */
  const backlog = (total: number) =>
    Array.from({ length: total }, (_, i) => ({
      id: `backlog-${i}`,
      source: i % 10 < 5 ? 'wake' : i % 10 < 8 ? 'github' : 'run',
      text: `backlog ${i}`,
      createdAt: 1_000 + i,
      runId: null,
    }));
  const shownIn = (prompt: string) => (prompt.match(/backlog \d+/g) ?? []).map((m) => Number(m.slice('backlog '.length)));

  it('takes a backlog in one heartbeat: the newest 200 events shown, the older ones counted by source, all consumed and still listed', async () => {
    const s = setup();
    await s.store.records.accept({ events: backlog(1000), runs: [] });
    s.heartbeat.request();
    await s.heartbeat.idle();
    const runs = await s.heartbeatRuns();
    expect(runs).toHaveLength(1);
    expect(s.provider.calls).toHaveLength(1);
    const prompt = s.provider.calls[0]!.req.messages.at(-1)!.content;
    expect(shownIn(prompt)).toEqual(Array.from({ length: 200 }, (_, i) => 800 + i));
    // the 800 older ones: 400 wake, 240 github, 160 run, created from 1,000 to 1,799 ms after the epoch
    expect(prompt).toContain(
      '[Backlog] 800 older pending events (1970-01-01T00:00:01.000Z to 1970-01-01T00:00:01.799Z) are not shown, only counted by source: ' +
        'wake 400, github 240, run 160. The newest 200 follow.',
    );
    expect(prompt.indexOf('[Backlog]')).toBeLessThan(prompt.indexOf('backlog 800'));
    const events = await s.store.records.listEvents({ limit: 10_000 });
    expect(events).toHaveLength(1000);
    expect(events.filter((e) => e.status !== 'consumed' || e.heartbeatId !== runs[0]!.id)).toEqual([]);
    expect((await s.store.records.counts()).events).toEqual({ pending: 0, consumed: 1000 });
    expect(await s.store.records.pendingEvents(10)).toEqual([]);
  });

  it('shows at most agents.defaults.heartbeat.maxEvents events, and all of them when no more are pending', async () => {
    const s = setup({ maxEvents: 50 });
    await s.store.records.accept({ events: backlog(120), runs: [] });
    s.heartbeat.request();
    await s.heartbeat.idle();
    const first = s.provider.calls[0]!.req.messages.at(-1)!.content;
    expect(shownIn(first)).toEqual(Array.from({ length: 50 }, (_, i) => 70 + i));
    expect(first).toContain('[Backlog] 70 older pending events');
    await s.store.records.accept({ events: backlog(1000).slice(120, 170), runs: [] });
    s.heartbeat.request();
    await s.heartbeat.idle();
    const second = s.provider.calls[1]!.req.messages.at(-1)!.content;
    expect(shownIn(second)).toEqual(Array.from({ length: 50 }, (_, i) => 120 + i));
    expect(second).not.toContain('[Backlog]');
    expect(s.provider.calls).toHaveLength(2);
    expect((await s.store.records.counts()).events).toEqual({ pending: 0, consumed: 170 });
  });

  it('leaves events that arrive during a backlog heartbeat pending for the next one', async () => {
    const provider = scriptedProvider();
    const s = setup({ provider, maxEvents: 10 });
    await s.store.records.accept({ events: backlog(30), runs: [] });
    s.heartbeat.request();
    await provider.waitForCalls(1);
    const late = await s.wake('arrived meanwhile');
    provider.calls[0]!.reply('HEARTBEAT_OK');
    await s.heartbeat.idle();
    expect(provider.calls).toHaveLength(1);
    expect((await s.store.records.pendingEvents(10)).map((e) => e.id)).toEqual([late]);
    expect((await s.store.records.counts()).events).toEqual({ pending: 1, consumed: 30 });
  });

  it('leaves a whole backlog pending when its heartbeat fails', async () => {
    const provider = scriptedProvider();
    const s = setup({ provider, maxEvents: 10 });
    await s.store.records.accept({ events: backlog(30), runs: [] });
    s.heartbeat.request();
    await provider.waitForCalls(1);
    provider.calls[0]!.fail(new Error('endpoint down'));
    await s.heartbeat.idle();
    expect((await s.store.records.counts()).events).toEqual({ pending: 30, consumed: 0 });
    expect(await s.store.records.listEvents({ limit: 100, status: 'consumed' })).toEqual([]);
  });

  it('runs nothing when no event is pending', async () => {
    const s = setup();
    expect(await s.heartbeat.beat()).toBeUndefined();
    expect(await s.heartbeatRuns()).toEqual([]);
  });

  it('keeps the events pending when the heartbeat fails, so the next one sees them', async () => {
    const provider = scriptedProvider();
    const s = setup({ provider });
    await s.wake('important');
    s.heartbeat.request();
    await provider.waitForCalls(1);
    provider.calls[0]!.fail(new Error('endpoint down'));
    await s.heartbeat.idle();
    expect((await s.heartbeatRuns())[0]).toMatchObject({ status: 'error', error: 'endpoint down' });
    expect((await s.store.records.listEvents({ limit: 10 }))[0]!.status).toBe('pending');
  });

  it('lets a running heartbeat finish within the stop deadline, and ignores requests after stop', async () => {
    const provider = scriptedProvider();
    const s = setup({ provider });
    await s.wake('x');
    s.heartbeat.request();
    await provider.waitForCalls(1);
    const stopping = s.heartbeat.stop(5000);
    setTimeout(() => provider.calls[0]!.reply('HEARTBEAT_OK'), 50);
    await stopping;
    expect((await s.heartbeatRuns())[0]!.status).toBe('ok');
    await s.wake('after stop');
    s.heartbeat.request();
    await new Promise((r) => setTimeout(r, 400)); // longer than the coalescing window
    expect(provider.calls).toHaveLength(1);
  });
});
