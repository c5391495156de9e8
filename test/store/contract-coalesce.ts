/**
 * Wake coalescing in the store (docs/http.md, "Wake coalescing"; `AcceptBatch.coalesce` in src/store/types.ts): a lone
 * wake whose key is that of the newest pending event is not stored, and its idempotency record and kept request name
 * that event; the look and the write are one atomic step, so two identical wakes at once make one event.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/roles.ts';
import type { AcceptBatch, NewEvent, NewKeptRequest } from '../../src/store/types.ts';
import { newEvent, newRun, okOutcome } from '../helpers/records.ts';

const wake = (key: string, over: Partial<NewEvent> = {}) => newEvent({ coalesceKey: key, ...over });
const lone = (event: NewEvent, more: Partial<AcceptBatch> = {}): AcceptBatch => ({ events: [event], runs: [], coalesce: {}, ...more });
const kept = (eventId: string): NewKeptRequest => ({
  hook: 'wake',
  mappingId: null,
  url: '/hooks/wake',
  headers: { 'content-type': 'application/json' },
  body: new TextEncoder().encode('{"text":"ping"}'),
  receivedAt: 5_000,
  status: 200,
  actions: [{ kind: 'wake', mode: 'now', eventId }],
  replayOf: null,
});
const idem = (key: string, eventId: string, outcome: string) => ({
  key,
  status: 200,
  body: JSON.stringify({ ok: true, eventId, eventOutcome: outcome }),
  createdAt: 5_000,
  expiresAt: 99_000,
});

export function coalesceContract(store: () => Store): void {
  describe('accept() of a lone wake that coalesces', () => {
    const pendingIds = async () => (await store().records.pendingEvents(10)).map((e) => e.id);

    it('stores the first and coalesces the next into it while it is the newest pending event', async () => {
      const { records } = store();
      const first = wake('k1');
      expect(await records.accept(lone(first))).toEqual({});
      expect(await records.accept(lone(wake('k1')))).toEqual({ coalescedInto: first.id });
      expect(await records.accept(lone(wake('k1')))).toEqual({ coalescedInto: first.id });
      expect(await pendingIds()).toEqual([first.id]);
      expect((await records.counts()).events.pending).toBe(1);
    });

    it('stores a wake with another key, one behind a newer event, and one whose twin was consumed', async () => {
      const { records } = store();
      const a = wake('k-a');
      await records.accept(lone(a));
      const b = wake('k-b');
      expect(await records.accept(lone(b))).toEqual({});
      // a is pending but no longer the newest
      const a2 = wake('k-a');
      expect(await records.accept(lone(a2))).toEqual({});
      // a summary event (no key) is the newest
      const run = newRun();
      await records.accept({ events: [], runs: [run] });
      await records.startRun(run.id, 1_500);
      await records.finishRun(okOutcome(run.id, { event: newEvent({ source: 'run', runId: run.id }) }));
      expect(await records.accept(lone(wake('k-a')))).toEqual({});
      // a heartbeat consumes everything pending: the next wake is stored again
      const all = await pendingIds();
      const hb = newRun({ kind: 'heartbeat', sessionKey: 'main' });
      await records.insertHeartbeat(hb, 2_999);
      await records.finishRun(okOutcome(hb.id, { finishedAt: 3_000, delivery: { kind: 'skipped', reason: 'ack' }, consumedEventIds: all }));
      const again = wake('k-a');
      expect(await records.accept(lone(again))).toEqual({});
      expect(await pendingIds()).toEqual([again.id]);
    });

    it('stores every event of a batch not marked to coalesce, and a wake without a key', async () => {
      const { records } = store();
      const first = wake('k');
      await records.accept(lone(first));
      const twin = wake('k');
      expect(await records.accept({ events: [twin], runs: [] })).toEqual({});
      const bare = newEvent();
      expect(await records.accept(lone(bare))).toEqual({});
      expect(await pendingIds()).toEqual([first.id, twin.id, bare.id]);
    });

    it('stores the coalesced answer under the idempotency key and names the event in the kept request', async () => {
      const { records, requests } = store();
      const first = wake('k');
      await records.accept(lone(first));
      const second = wake('k');
      const batch = lone(second, {
        idempotency: idem('wake\nkey-2', second.id, 'queued'),
        request: kept(second.id),
        coalesce: { idempotencyBody: idem('', second.id, 'coalesced').body },
      });
      const { requestId, coalescedInto } = await records.accept(batch);
      expect(coalescedInto).toBe(first.id);
      const record = await records.getIdempotency('wake\nkey-2', 6_000);
      expect(JSON.parse(record!.body)).toEqual({ ok: true, eventId: first.id, eventOutcome: 'coalesced' });
      expect(record).toMatchObject({ status: 200, createdAt: 5_000, expiresAt: 99_000 });
      expect((await requests.get(requestId!))!.actions).toEqual([{ kind: 'wake', mode: 'now', eventId: first.id }]);
      // one that is stored keeps its own answer and names its own event
      const third = wake('other');
      const stored = await records.accept(
        lone(third, {
          idempotency: idem('wake\nkey-3', third.id, 'queued'),
          request: kept(third.id),
          coalesce: { idempotencyBody: 'unused' },
        }),
      );
      expect(stored.coalescedInto).toBeUndefined();
      expect(JSON.parse((await records.getIdempotency('wake\nkey-3', 6_000))!.body)).toEqual({
        ok: true,
        eventId: third.id,
        eventOutcome: 'queued',
      });
      expect((await requests.get(stored.requestId!))!.actions).toEqual([{ kind: 'wake', mode: 'now', eventId: third.id }]);
    });

    it('makes one event of two identical wakes accepted at once', async () => {
      const { records } = store();
      const [a, b] = [wake('same'), wake('same')];
      const results = await Promise.all([records.accept(lone(a)), records.accept(lone(b))]);
      const ids = await pendingIds();
      expect(ids).toHaveLength(1);
      expect(results.filter((r) => r.coalescedInto === ids[0])).toHaveLength(1);
    });
  });
}
