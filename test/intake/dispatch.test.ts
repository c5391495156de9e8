/**
 * The dispatcher's answers (docs/http.md, "Endpoints", "Order of checks" and "Idempotency"): what each combination of actions
 * answers, what it stores before answering, and the queue cap.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDispatcher, type DispatchOptions } from '../../src/intake/dispatch.ts';
import { type PreparedAgent, type PreparedWake, wakeKey } from '../../src/intake/prepare.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { uuidv7 } from '../../src/util/uuid7.ts';

const NOW = 1_700_000_000_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const wake = (over: Partial<PreparedWake> = {}): PreparedWake => ({
  kind: 'wake',
  text: 'wrapped text',
  mode: 'now',
  origin: 'wake',
  coalesceKey: wakeKey(over.origin ?? 'wake', over.text ?? 'wrapped text'),
  ...over,
});
const agent = (over: Partial<PreparedAgent> = {}): PreparedAgent => ({
  kind: 'agent',
  message: 'wrapped message',
  name: 'CI',
  sessionKey: 'hook:ci',
  wakeMode: 'now',
  deliver: true,
  channel: 'last',
  to: null,
  model: 'echo/echo',
  thinking: null,
  timeoutSeconds: 600,
  origin: 'agent',
  label: 'Webhook',
  trusted: false,
  nameTrusted: true,
  agentId: 'main',
  sessionMode: 'persistent',
  ...over,
});

const OPTS: DispatchOptions = { agentStatus: 202, maxQueuedRuns: 100 };

let store: SqliteStore;
let queued: number;
/** How many times the runner was told runs were accepted, and how many runs the queue held each time. */
let enqueued: number[];
let heartbeats: number;
let dispatcher: ReturnType<typeof createDispatcher>;
beforeEach(() => {
  store = new SqliteStore({ path: ':memory:' });
  queued = 0;
  enqueued = [];
  heartbeats = 0;
  dispatcher = createDispatcher({
    records: store.records,
    clock: () => NOW,
    runsAccepted: () => enqueued.push(store.runs.size().waiting),
    queuedRuns: () => queued,
    requestHeartbeat: () => heartbeats++,
  });
});
afterEach(() => store.close());

describe('dispatcher.dispatch()', () => {
  it('answers a single wake with 200, its mode and the stored event id', async () => {
    const r = await dispatcher.dispatch([wake({ mode: 'next-heartbeat' })], OPTS);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, mode: 'next-heartbeat', eventId: expect.stringMatching(UUID), eventOutcome: 'queued' });
    expect(await store.records.pendingEvents(10)).toEqual([
      {
        id: r.body.eventId,
        source: 'wake',
        text: 'wrapped text',
        status: 'pending',
        createdAt: NOW,
        consumedAt: null,
        heartbeatId: null,
        runId: null,
      },
    ]);
  });

  it('requests a heartbeat for mode now only', async () => {
    await dispatcher.dispatch([wake({ mode: 'next-heartbeat' })], OPTS);
    expect(heartbeats).toBe(0);
    await dispatcher.dispatch([wake({ mode: 'now' })], OPTS);
    expect(heartbeats).toBe(1);
  });

  it.each([202, 200] as const)('answers a single agent action with agentStatus %i, runId and sessionKey', async (agentStatus) => {
    const r = await dispatcher.dispatch([agent()], { ...OPTS, agentStatus });
    expect(r.status).toBe(agentStatus);
    expect(r.body).toEqual({ ok: true, runId: expect.stringMatching(UUID), sessionKey: 'hook:ci' });
    expect(heartbeats).toBe(0); // an agent's wakeMode applies when the run finishes
  });

  it('stores and queues the run before telling the runner', async () => {
    let storedAtEnqueue: unknown;
    const d = createDispatcher({
      records: store.records,
      clock: () => NOW,
      runsAccepted: () => {
        storedAtEnqueue = store.runs.claim('w', 1000, 1).then((c) => store.records.getRun(c[0]!.id));
      },
      queuedRuns: () => 0,
      requestHeartbeat: () => {},
    });
    const r = await d.dispatch([agent({ to: 'ops', thinking: 'high', trusted: true, nameTrusted: false })], OPTS);
    expect(await storedAtEnqueue).toMatchObject({
      id: r.body.runId,
      status: 'queued',
      kind: 'hook',
      hookName: 'CI',
      label: 'Webhook',
      trusted: true,
      nameTrusted: false,
      sessionKey: 'hook:ci',
      message: 'wrapped message',
      to: 'ops',
      thinking: 'high',
      createdAt: NOW,
    });
  });

  it('answers several actions with 202, runIds and eventIds, all stored', async () => {
    const r = await dispatcher.dispatch(
      [agent({ sessionKey: 'hook:a' }), wake({ mode: 'next-heartbeat' }), agent({ sessionKey: 'hook:b', newSession: true }), wake()],
      { ...OPTS, agentStatus: 200 },
    );
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ ok: true, runIds: r.runIds, eventIds: r.eventIds });
    expect(r.runIds).toHaveLength(2);
    expect(r.eventIds).toHaveLength(2);
    expect((await store.records.listRuns({ limit: 10 })).map((x) => x.id).sort()).toEqual([...r.runIds].sort());
    expect(enqueued).toEqual([2]);
    // a session key made for its action tells the runner there is no transcript to read
    const claimed = await store.runs.claim('w', 1000, 10);
    expect(claimed.map((c) => [c.id, c.key, c.item.newSession])).toEqual([
      [r.runIds[0], 'hook:a', undefined],
      [r.runIds[1], 'hook:b', true],
    ]);
    expect(heartbeats).toBe(1);
  });

  it('gives every run a new id, whatever its session key says', async () => {
    const made = `hook:${uuidv7()}`;
    const r = await dispatcher.dispatch(
      [agent({ sessionKey: made, newSession: true }), agent({ sessionKey: 'hook:b', newSession: true })],
      OPTS,
    );
    expect(r.runIds.every((id) => UUID.test(id) && !made.includes(id))).toBe(true);
    expect(new Set(r.runIds).size).toBe(2);
    expect((await store.records.getRun(r.runIds[0]!))!.sessionKey).toBe(made);
  });

  it('answers two wakes as a fan-out too', async () => {
    const r = await dispatcher.dispatch([wake(), wake()], OPTS);
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ runIds: [], eventIds: [expect.any(String), expect.any(String)] });
  });

  describe('queue cap', () => {
    it('refuses agent runs beyond maxQueuedRuns with 503 and Retry-After, storing nothing', async () => {
      queued = 99;
      await expect(dispatcher.dispatch([agent(), agent(), wake()], OPTS)).rejects.toMatchObject({
        status: 503,
        code: 'UNAVAILABLE',
        headers: { 'Retry-After': '30' },
      });
      expect(await store.records.counts()).toMatchObject({ events: { pending: 0 }, runs: { queued: 0 } });
      expect(enqueued).toEqual([]);
      expect(heartbeats).toBe(0);
    });

    it('holds the cap for concurrent requests whose runs commit together', async () => {
      // the runner's count grows only after each commit, as in the service
      dispatcher = createDispatcher({
        records: store.records,
        clock: () => NOW,
        runsAccepted: () => (queued = store.runs.size().waiting),
        queuedRuns: () => queued,
        requestHeartbeat: () => heartbeats++,
      });
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => dispatcher.dispatch([agent()], { ...OPTS, maxQueuedRuns: 5 })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason.code === 'UNAVAILABLE')).toBe(
        true,
      );
      expect((await store.records.counts()).runs.queued).toBe(5);
      // a failed commit gives its reservation back
      vi.spyOn(store.records, 'accept').mockRejectedValueOnce(new Error('disk full'));
      queued = 3;
      await expect(dispatcher.dispatch([agent()], { ...OPTS, maxQueuedRuns: 5 })).rejects.toThrow('disk full');
      expect((await dispatcher.dispatch([agent(), agent()], { ...OPTS, maxQueuedRuns: 5 })).status).toBe(202);
    });

    it('accepts runs up to the cap exactly, and wakes whatever the queue holds', async () => {
      queued = 99;
      expect((await dispatcher.dispatch([agent()], OPTS)).status).toBe(202);
      queued = 1_000;
      expect((await dispatcher.dispatch([wake()], OPTS)).status).toBe(200);
    });
  });

  describe('idempotency', () => {
    it('stores the answer under the key, in the same commit as the actions', async () => {
      const r = await dispatcher.dispatch([agent()], { ...OPTS, idempotency: { key: 'agent\nk1', ttlSeconds: 86_400 } });
      expect(await store.records.getIdempotency('agent\nk1', NOW)).toEqual({
        key: 'agent\nk1',
        status: 202,
        body: JSON.stringify(r.body),
        createdAt: NOW,
        expiresAt: NOW + 86_400_000,
      });
      expect(await store.records.getIdempotency('agent\nk1', NOW + 86_400_000)).toBeUndefined();
    });

    it('stores nothing without a key', async () => {
      await dispatcher.dispatch([wake()], OPTS);
      expect(await store.records.pruneIdempotency(Number.MAX_SAFE_INTEGER)).toBe(0);
    });
  });

  describe('wake coalescing', () => {
    const keep = {
      hook: 'wake',
      mappingId: null,
      url: '/hooks/wake',
      headers: {},
      body: new Uint8Array(),
      receivedAt: NOW,
      replayOf: null,
    };

    it('answers a lone wake that is the newest pending event already as coalesced into it, storing nothing new', async () => {
      const first = await dispatcher.dispatch([wake()], OPTS);
      const again = await dispatcher.dispatch([wake()], OPTS);
      expect(again).toMatchObject({ status: 200, eventIds: [first.body.eventId] });
      expect(again.body).toEqual({ ok: true, mode: 'now', eventId: first.body.eventId, eventOutcome: 'coalesced' });
      expect((await store.records.pendingEvents(10)).map((e) => e.id)).toEqual([first.body.eventId]);
      // a `now` wake asks for a heartbeat whether it was queued or coalesced
      expect(heartbeats).toBe(2);
    });

    it('queues a wake from another source or with other text, and never coalesces a fan-out', async () => {
      await dispatcher.dispatch([wake()], OPTS);
      expect((await dispatcher.dispatch([wake({ origin: 'github' })], OPTS)).body.eventOutcome).toBe('queued');
      expect((await dispatcher.dispatch([wake({ origin: 'github', text: 'other' })], OPTS)).body.eventOutcome).toBe('queued');
      const fanOut = await dispatcher.dispatch(
        [wake({ origin: 'github', text: 'other' }), wake({ origin: 'github', text: 'other' })],
        OPTS,
      );
      expect(fanOut.body).toEqual({ ok: true, runIds: [], eventIds: fanOut.eventIds });
      expect(await store.records.pendingEvents(10)).toHaveLength(5);
      // a lone wake coalesces into a fan-out's wake when that is the newest pending event
      expect((await dispatcher.dispatch([wake({ origin: 'github', text: 'other' })], OPTS)).body.eventId).toBe(fanOut.eventIds[1]);
    });

    it('keeps the coalesced answer under the idempotency key, and the kept request names that event', async () => {
      const first = await dispatcher.dispatch([wake()], OPTS);
      const again = await dispatcher.dispatch([wake()], { ...OPTS, idempotency: { key: 'wake\nk', ttlSeconds: 60 }, keep });
      expect(JSON.parse((await store.records.getIdempotency('wake\nk', NOW))!.body)).toEqual(again.body);
      expect((await store.requests.get(again.requestId!))!.actions).toEqual([{ kind: 'wake', mode: 'now', eventId: first.body.eventId }]);
    });
  });

  it('tells neither the runner nor the heartbeat when the store refuses the write', async () => {
    vi.spyOn(store.records, 'accept').mockRejectedValueOnce(new Error('disk full'));
    await expect(dispatcher.dispatch([agent(), wake()], OPTS)).rejects.toThrow('disk full');
    expect(enqueued).toEqual([]);
    expect(heartbeats).toBe(0);
  });
});
