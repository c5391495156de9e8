/**
 * The Store contract's cases for the operator console (docs/http.md, "Kept requests"): kept requests. Called from inside
 * `storeContract`, so every driver that runs the contract runs these too.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/store/errors.ts';
import type { KeptRequestSummary, NewKeptRequest } from '../../src/store/types.ts';
import type { Store } from '../../src/store/roles.ts';
import { newDelivery, newEvent, newRun, okOutcome } from '../helpers/records.ts';

export function newRequest(over: Partial<NewKeptRequest> = {}): NewKeptRequest {
  return {
    hook: 'github',
    mappingId: 'github',
    url: '/hooks/github?x=1',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push' },
    body: new Uint8Array(Buffer.from('{"ref":"main"}')),
    receivedAt: 1_000,
    status: 202,
    actions: [],
    replayOf: null,
    ...over,
  };
}

export function consoleContract(store: () => Store): void {
  describe('kept requests', () => {
    it("are stored with the request's events and runs, and read back whole", async () => {
      const run = newRun();
      const event = newEvent();
      // bytes that are not valid UTF-8 come back as they were
      const body = new Uint8Array([0xff, 0x00, 0x7b, 0xc3]);
      const req = newRequest({
        body,
        actions: [
          { kind: 'wake', mode: 'now', eventId: event.id },
          { kind: 'agent', name: 'Hook', sessionKey: run.sessionKey, channel: 'last', to: null, deliver: true, runId: run.id },
        ],
      });
      const { requestId } = await store().records.accept({ events: [event], runs: [run], request: req });
      const read = await store().requests.get(requestId!);
      expect({ ...read, body: Buffer.from(read!.body) }).toEqual({
        ...req,
        id: requestId,
        body: Buffer.from(body),
        bodyBytes: 4,
        reason: null,
      });
      expect(await store().requests.get('nope')).toBeUndefined();
    });

    it('keep why nothing ran, and the size of a body that was not kept, in a read and in a list', async () => {
      const refused = newRequest({
        hook: 'refused-hook',
        status: 401,
        body: new Uint8Array(0),
        actions: [],
        reason: 'INVALID_SIGNATURE',
        bodyBytes: 1234,
      });
      const skipped = newRequest({ hook: 'refused-hook', status: 204, actions: [], reason: 'event "push" is not in events' });
      const a = (await store().records.accept({ events: [], runs: [], request: refused })).requestId!;
      const b = (await store().records.accept({ events: [], runs: [], request: skipped })).requestId!;
      expect(await store().requests.get(a)).toMatchObject({ status: 401, reason: 'INVALID_SIGNATURE', bodyBytes: 1234 });
      expect((await store().requests.get(a))!.body.byteLength).toBe(0);
      expect(await store().requests.get(b)).toMatchObject({ status: 204, reason: 'event "push" is not in events' });
      const listed = await store().requests.list({ limit: 10, hook: 'refused-hook' });
      expect(listed.map((r) => [r.id, r.status, r.reason, r.bodyBytes])).toEqual([
        [b, 204, 'event "push" is not in events', skipped.body.byteLength],
        [a, 401, 'INVALID_SIGNATURE', 1234],
      ]);
    });

    it('are named by the driver with UUIDv7s in the order received, and a batch without one names none', async () => {
      const ids: string[] = [];
      for (const receivedAt of [1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_001]) {
        ids.push((await store().records.accept({ events: [], runs: [], request: newRequest({ receivedAt }) })).requestId!);
      }
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(ids[0]!.startsWith('018bcfe5-6800-')).toBe(true); // the timestamp is receivedAt's
      expect(new Set(ids).size).toBe(3);
      expect([...ids].sort()).toEqual(ids);
      expect(await store().records.accept({ events: [newEvent()], runs: [] })).toEqual({});
    });

    it('are not found by ids they were not given: changed, of another shape, or of an older request', async () => {
      const { requestId } = await store().records.accept({ events: [], runs: [], request: newRequest({ receivedAt: 0xabc_def }) });
      const id = requestId!; // with letters, for the upper-case case
      const other = (i: number) => id.slice(0, i) + (id[i] === '0' ? '1' : '0') + id.slice(i + 1);
      for (const wrong of [other(0), other(id.length - 1), id.toUpperCase(), `${id}0`, '', '00000000-0000-7000-8000-000000000000']) {
        expect(await store().requests.get(wrong)).toBeUndefined();
      }
      expect((await store().requests.get(id))!.receivedAt).toBe(0xabc_def);
    });

    it("are not stored when the request's batch fails", async () => {
      const taken = newRun();
      await store().records.accept({ events: [], runs: [taken] });
      await expect(store().records.accept({ events: [], runs: [taken], request: newRequest({ hook: 'failed' }) })).rejects.toBeInstanceOf(
        ConflictError,
      );
      expect(await store().requests.list({ limit: 10, hook: 'failed' })).toEqual([]);
    });

    it('list newest first, filtered by hook and status, a page at a time', async () => {
      const reqs = [
        newRequest({ hook: 'github', status: 202, receivedAt: 1 }),
        newRequest({ hook: 'wake', mappingId: null, status: 200, receivedAt: 2 }),
        newRequest({ hook: 'github', status: 204, receivedAt: 3 }),
        newRequest({ hook: 'github', status: 202, receivedAt: 4, replayOf: 'x' }),
      ];
      const named: string[] = [];
      for (const r of reqs) named.push((await store().records.accept({ events: [], runs: [], request: r })).requestId!);
      const ids = (l: KeptRequestSummary[]) => l.map((r) => r.receivedAt);
      expect(ids(await store().requests.list({ limit: 10 }))).toEqual([4, 3, 2, 1]);
      expect(ids(await store().requests.list({ limit: 2 }))).toEqual([4, 3]);
      expect(ids(await store().requests.list({ limit: 10, hook: 'github' }))).toEqual([4, 3, 1]);
      expect(ids(await store().requests.list({ limit: 10, status: 202 }))).toEqual([4, 1]);
      expect(ids(await store().requests.list({ limit: 10, hook: 'github', status: 204 }))).toEqual([3]);
      expect(ids(await store().requests.list({ limit: 2, before: named[2]! }))).toEqual([2, 1]);
      expect(ids(await store().requests.list({ limit: 10, before: 'unknown' }))).toEqual([]);
    });

    it('keep long bodies byte for byte, whether they compress or not', async () => {
      const text = new Uint8Array(Buffer.from(`{"message":"${'Zürich ✓ the same words again '.repeat(4_000)}"}`));
      const random = new Uint8Array(randomBytes(64 * 1024));
      const edge = new Uint8Array(Buffer.from('y'.repeat(4096)));
      for (const body of [text, random, edge]) {
        const { requestId } = await store().records.accept({ events: [], runs: [], request: newRequest({ body }) });
        const read = await store().requests.get(requestId!);
        expect(Buffer.from(read!.body).equals(Buffer.from(body))).toBe(true);
        expect((await store().requests.list({ limit: 1 }))[0]!.bodyBytes).toBe(body.byteLength);
      }
    });

    it("list without headers and bodies, with each body's size in bytes", async () => {
      const body = new Uint8Array(Buffer.from('Zürich ✓ '.repeat(10_000)));
      const { requestId } = await store().records.accept({ events: [], runs: [], request: newRequest({ body, replayOf: 'r1' }) });
      const [listed] = await store().requests.list({ limit: 1 });
      const { headers: _h, body: _b, ...whole } = (await store().requests.get(requestId!))!;
      expect(listed).toEqual({ ...whole, bodyBytes: body.byteLength });
      expect(listed).not.toHaveProperty('body');
      expect(listed).not.toHaveProperty('headers');
    });
  });

  describe('redeliver()', () => {
    it('gives a finished run a new pending delivery, due at once, and leaves the failed one as it was', async () => {
      const run = newRun();
      await store().records.accept({ events: [], runs: [run] });
      await store().records.startRun(run.id, 1_500);
      const first = newDelivery(run.id, { channel: 'slack', to: '#a' });
      await store().records.finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry: first } }));
      await store().records.recordDelivery({ id: first.id, runId: run.id, attempts: 5, at: 3_000, status: 'failed', error: 'HTTP 500' });
      expect((await store().records.getRun(run.id))!.delivery).toMatchObject({ status: 'failed', attempts: 5 });

      const again = newDelivery(run.id, { channel: 'slack', to: '#b', createdAt: 9_000, text: 'the reply' });
      await store().records.redeliver(again);
      expect((await store().records.getRun(run.id))!.delivery).toEqual({
        status: 'pending',
        reason: null,
        channel: 'slack',
        to: '#b',
        attempts: 0,
      });
      const due = await store().records.dueDeliveries(9_000, 10);
      expect(due.map((d) => [d.id, d.text, d.status])).toEqual([[again.id, 'the reply', 'pending']]);
      await store().records.recordDelivery({ id: again.id, runId: run.id, attempts: 1, at: 9_100, status: 'sent' });
      expect((await store().records.getRun(run.id))!.delivery).toMatchObject({ status: 'sent', attempts: 1 });
    });

    it('sends a skipped reply', async () => {
      const run = newRun();
      await store().records.accept({ events: [], runs: [run] });
      await store().records.startRun(run.id, 1_500);
      await store().records.finishRun(okOutcome(run.id, { delivery: { kind: 'skipped', reason: 'deliver is false' } }));
      const entry = newDelivery(run.id, { channel: 'console', createdAt: 5_000 });
      await store().records.redeliver(entry);
      expect((await store().records.getRun(run.id))!.delivery).toEqual({
        status: 'pending',
        reason: null,
        channel: 'console',
        to: null,
        attempts: 0,
      });
      expect((await store().records.dueDeliveries(5_000, 10)).map((d) => d.id)).toEqual([entry.id]);
    });
  });

  describe('prune()', () => {
    const long = (tag: string) => `${tag}: ${'Zürich ✓ '.repeat(600)}`;
    const cutoff = { runs: 10_000, events: 10_000, requests: 10_000, sessionLines: 3 };
    /** A hook run accepted, started and finished at `at` with `delivery`. */
    const finishedRun = async (at: number, over: Parameters<typeof newRun>[0] = {}, outcome: Parameters<typeof okOutcome>[1] = {}) => {
      const run = newRun({ createdAt: at, ...over });
      await store().records.accept({ events: [], runs: [run] });
      await store().records.startRun(run.id, at);
      await store().records.finishRun(okOutcome(run.id, { finishedAt: at, delivery: { kind: 'skipped', reason: 'ack' }, ...outcome }));
      return run;
    };
    const pruneAll = async (limit: number) => {
      const total = { runs: 0, events: 0, messages: 0, deliveries: 0, requests: 0 };
      let batches = 0;
      for (;;) {
        const { more, ...c } = await store().records.prune(cutoff, limit);
        batches++;
        for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += c[k];
        if (!more) return { total, batches };
      }
    };

    it('removes what finished, was consumed, delivered or received before the cutoffs, in batches, and nothing else', async () => {
      const old = [await finishedRun(1_000), await finishedRun(2_000), await finishedRun(3_000)];
      const queued = newRun({ createdAt: 1_500 });
      await store().records.accept({ events: [], runs: [queued] });
      const sentRun = await finishedRun(4_000, {}, { delivery: { kind: 'outbox', entry: newDelivery('x', { createdAt: 4_000 }) } });
      const pendingRun = await finishedRun(4_500, {}, { delivery: { kind: 'outbox', entry: newDelivery('y', { createdAt: 4_500 }) } });
      const sent = (await store().records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).find((d) => d.createdAt === 4_000)!;
      await store().records.recordDelivery({ id: sent.id, runId: sentRun.id, attempts: 1, at: 4_100, status: 'sent' });
      // events: two consumed long ago by a heartbeat, one pending, one recent
      const events = [newEvent({ createdAt: 5_000 }), newEvent({ createdAt: 5_100 }), newEvent({ createdAt: 5_200 })];
      await store().records.accept({ events, runs: [] });
      const hb = newRun({ kind: 'heartbeat', sessionKey: 'main', createdAt: 6_000 });
      await store().records.insertHeartbeat(hb, 6_000);
      await store().records.finishRun(
        okOutcome(hb.id, {
          finishedAt: 6_000,
          delivery: { kind: 'skipped', reason: 'ack' },
          consumedEventIds: [events[0]!.id, events[1]!.id],
        }),
      );
      // rows come in the order of their times: a pass stops at the first one newer than the cutoff
      const recent = await finishedRun(20_000);
      const late = newEvent({ createdAt: 20_000 });
      await store().records.accept({ events: [late], runs: [] });
      for (const at of [1_000, 2_000, 30_000])
        await store().records.accept({ events: [], runs: [], request: newRequest({ receivedAt: at }) });

      const dry = await store().records.countPrunable(cutoff);
      const { total, batches } = await pruneAll(2);
      expect(total).toEqual({ runs: 5, events: 2, messages: 0, deliveries: 1, requests: 2 });
      expect(dry).toEqual(total);
      expect(batches).toBeGreaterThan(1);
      for (const r of [...old, sentRun, hb]) expect(await store().records.getRun(r.id)).toBeUndefined();
      for (const r of [queued, pendingRun, recent]) expect(await store().records.getRun(r.id)).toBeDefined();
      expect((await store().records.listEvents({ limit: 10 })).map((e) => e.id)).toEqual([late.id, events[2]!.id]);
      expect((await store().records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).map((d) => d.createdAt)).toEqual([4_500]);
      expect((await store().requests.list({ limit: 10 })).map((r) => r.receivedAt)).toEqual([30_000]);
      expect(await store().records.counts()).toEqual({
        events: { pending: 2, consumed: 0 },
        runs: { queued: 1, running: 0, ok: 2, error: 0, timeout: 0 },
        outbox: { pending: 1, failed: 0 },
      });
      expect(await pruneAll(100)).toEqual({ total: { runs: 0, events: 0, messages: 0, deliveries: 0, requests: 0 }, batches: 1 });
    });

    it('removes the transcripts of sessions idle since before the cutoff; of a session in use, the old lines beyond its newest ones', async () => {
      const line = (sessionKey: string, createdAt: number) => ({
        sessionKey,
        role: 'user' as const,
        content: `at ${createdAt}`,
        runId: null,
        createdAt,
      });
      const idle = await finishedRun(1_000, { sessionKey: 'idle' }, { messages: [line('idle', 1_000), line('idle', 2_000)] });
      await finishedRun(
        1_000,
        { sessionKey: 'busy' },
        { messages: [line('busy', 1_000), line('busy', 1_100), line('busy', 1_200), line('busy', 1_300)] },
      );
      await finishedRun(1_000, { sessionKey: 'short' }, { messages: [line('short', 1_000)] });
      await finishedRun(20_000, { sessionKey: 'short' }, { messages: [line('short', 20_000)] });
      await finishedRun(20_000, { sessionKey: 'busy' }, { messages: [line('busy', 20_000)] });
      const dry = await store().records.countPrunable(cutoff);
      const { total } = await pruneAll(1);
      expect(total.messages).toBe(4);
      expect(dry.messages).toBe(4);
      expect(await store().records.transcript('idle', 10)).toEqual([]);
      // the newest three lines (sessionLines) stay, however old
      expect((await store().records.transcript('busy', 10)).map((m) => m.createdAt)).toEqual([1_200, 1_300, 20_000]);
      expect((await store().records.transcript('short', 10)).map((m) => m.createdAt)).toEqual([1_000, 20_000]);
      expect(await store().records.getRun(idle.id)).toBeUndefined();
    });

    it('removes events consumed one by one, out of order, once consumed before the cutoff', async () => {
      const events = [1_000, 1_100, 1_200, 1_300].map((at) => newEvent({ createdAt: at }));
      await store().records.accept({ events, runs: [] });
      await store().records.pendingEvents(10);
      const hb = newRun({ kind: 'heartbeat', sessionKey: 'main', createdAt: 2_000 });
      await store().records.insertHeartbeat(hb, 2_000);
      // not the oldest pending one: marked consumed by its row
      await store().records.finishRun(
        okOutcome(hb.id, { finishedAt: 2_000, delivery: { kind: 'skipped', reason: 'ack' }, consumedEventIds: [events[1]!.id] }),
      );
      expect(await store().records.countPrunable(cutoff)).toMatchObject({ events: 1 });
      expect((await pruneAll(10)).total.events).toBe(1);
      expect((await store().records.listEvents({ limit: 10 })).map((e) => [e.createdAt, e.status])).toEqual([
        [1_300, 'pending'],
        [1_200, 'pending'],
        [1_000, 'pending'],
      ]);
      expect((await store().records.counts()).events).toEqual({ pending: 3, consumed: 0 });
    });

    it('keeps a long text while a row still refers to it', async () => {
      const message = long('message');
      const reply = long('reply');
      // an echo: the reply and the transcript lines repeat the run's long message and reply
      const run = newRun({ createdAt: 1_000, sessionKey: 'busy', message });
      await store().records.accept({ events: [], runs: [run] });
      await store().records.queuedRun(run.id);
      await store().records.startRun(run.id, 1_000);
      await store().records.finishRun(
        okOutcome(run.id, {
          finishedAt: 1_000,
          reply,
          delivery: { kind: 'skipped', reason: 'ack' },
          messages: [
            { sessionKey: 'busy', role: 'user', content: message, runId: run.id, createdAt: 1_000 },
            { sessionKey: 'busy', role: 'assistant', content: reply, runId: run.id, createdAt: 1_000 },
          ],
        }),
      );
      await finishedRun(
        20_000,
        { sessionKey: 'busy' },
        { messages: [{ sessionKey: 'busy', role: 'user', content: 'later', runId: null, createdAt: 20_000 }] },
      );
      await finishedRun(30_000);
      await pruneAll(10);
      expect(await store().records.getRun(run.id)).toBeUndefined();
      expect((await store().records.transcript('busy', 10)).map((m) => m.content)).toEqual([message, reply, 'later']);
    });
  });
}
