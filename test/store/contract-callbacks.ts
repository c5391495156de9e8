/**
 * Callback entries (docs/callbacks.md, "Delivery"): outbox entries that send a lifecycle event, each
 * stored in the same write as its cause — a run's outcome (`finishRun`), a delivery's final failure
 * (`recordDelivery`), a rejected request (`accept` with only callbacks). Nothing of either without the other.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/store/errors.ts';
import type { Store } from '../../src/store/roles.ts';
import type { CallbackEventType, NewDelivery, NewRun } from '../../src/store/types.ts';
import { newDelivery, newRun, okOutcome } from '../helpers/records.ts';

const ALL = Number.MAX_SAFE_INTEGER;

/** A callback entry for `runId` ('' for none). */
function entry(runId: string, event: CallbackEventType, over: Partial<NewDelivery> = {}): NewDelivery {
  return { id: randomUUID(), runId, channel: 'ci', to: null, text: JSON.stringify({ type: event }), createdAt: 2_000, event, ...over };
}

export function callbacksContract(store: () => Store): void {
  describe('callback entries', () => {
    const started = async (over: Partial<NewRun> = {}): Promise<NewRun> => {
      const run = newRun(over);
      await store().records.accept({ events: [], runs: [run] });
      await store().records.startRun(run.id, 1_500);
      return run;
    };
    const due = () => store().records.dueDeliveries(ALL, 100);

    it('a run keeps the hook it came from, and a claim hands it out', async () => {
      const run = await started({ hookId: 'github' });
      expect((await store().records.getRun(run.id))!.hookId).toBe('github');
      const other = newRun();
      await store().records.accept({ events: [], runs: [other] });
      expect((await store().records.queuedRun(other.id))!.hookId).toBeUndefined();
      expect((await store().records.getRun(other.id))!.hookId).toBeUndefined();
    });

    it("are stored with a run's outcome: due at once, listed by run, apart from its delivery", async () => {
      const run = await started();
      const reply = newDelivery(run.id);
      const long = JSON.stringify({ type: 'run.completed', data: { reply: 'Zürich ✓ '.repeat(2_000) } });
      const [a, b] = [
        entry(run.id, 'run.completed', { text: long }),
        entry(run.id, 'run.completed', { channel: 'audit', createdAt: 2_001 }),
      ];
      await store().records.finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry: reply }, callbacks: [a, b] }));
      const listed = await store().records.runCallbacks(run.id);
      expect(listed.map((d) => [d.id, d.channel, d.event, d.text, d.status, d.attempts])).toEqual([
        [a.id, 'ci', 'run.completed', long, 'pending', 0],
        [b.id, 'audit', 'run.completed', b.text, 'pending', 0],
      ]);
      expect(listed[0]).toMatchObject({ to: null, runId: run.id, nextAttemptAt: 2_000, lastError: null, parts: null });
      expect((await due()).map((d) => d.id).sort()).toEqual([reply.id, a.id, b.id].sort());
      expect((await due()).find((d) => d.id === reply.id)!.event).toBeUndefined();
      // the run's delivery is its reply's, whatever happens to its callbacks
      await store().records.recordDelivery({ id: a.id, runId: run.id, attempts: 5, at: 3_000, status: 'failed', error: 'answered 500' });
      expect((await store().records.getRun(run.id))!.delivery).toMatchObject({ status: 'pending', attempts: 0, reason: null });
      expect((await store().records.runCallbacks(run.id))[0]).toMatchObject({ status: 'failed', attempts: 5, lastError: 'answered 500' });
    });

    it('are recorded like deliveries: a retry waits for its time, a send ends it', async () => {
      const run = await started();
      const e = entry(run.id, 'run.failed');
      await store().records.finishRun(okOutcome(run.id, { delivery: { kind: 'skipped', reason: 'deliver is false' }, callbacks: [e] }));
      await store().records.recordDelivery({
        id: e.id,
        runId: run.id,
        attempts: 1,
        at: 2_100,
        status: 'pending',
        nextAttemptAt: 9_000,
        error: 'answered 503',
      });
      expect(await store().records.dueDeliveries(8_999, 10)).toEqual([]);
      expect(await store().records.dueDeliveries(9_000, 10)).toEqual([
        expect.objectContaining({ id: e.id, event: 'run.failed', attempts: 1, lastError: 'answered 503' }),
      ]);
      await store().records.recordDelivery({ id: e.id, runId: run.id, attempts: 2, at: 9_100, status: 'sent' });
      expect(await due()).toEqual([]);
      expect((await store().records.runCallbacks(run.id))[0]).toMatchObject({ status: 'sent', attempts: 2, updatedAt: 9_100 });
    });

    it("are stored with a delivery's final failure", async () => {
      const run = await started();
      const reply = newDelivery(run.id);
      await store().records.finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry: reply } }));
      const e = entry(run.id, 'delivery.failed', { createdAt: 3_000 });
      await store().records.recordDelivery({
        id: reply.id,
        runId: run.id,
        attempts: 5,
        at: 3_000,
        status: 'failed',
        error: 'HTTP 400',
        callbacks: [e],
      });
      expect((await store().records.getRun(run.id))!.delivery).toMatchObject({ status: 'failed', reason: 'HTTP 400' });
      expect((await due()).map((d) => [d.id, d.event])).toEqual([[e.id, 'delivery.failed']]);
      expect((await store().records.runCallbacks(run.id)).map((d) => d.id)).toEqual([e.id]);
    });

    it('are stored alone for a rejected request (no run)', async () => {
      const e = entry('', 'request.rejected');
      await store().records.accept({ events: [], runs: [], callbacks: [e] });
      expect(await due()).toEqual([expect.objectContaining({ id: e.id, runId: '', event: 'request.rejected', channel: 'ci' })]);
      expect((await store().records.counts()).runs.queued).toBe(0);
    });

    it("a finish whose callback entry's id is taken stores nothing: neither the outcome nor the other entries", async () => {
      const run = await started();
      const taken = entry('', 'request.rejected');
      await store().records.accept({ events: [], runs: [], callbacks: [taken] });
      const reply = newDelivery(run.id);
      const fresh = entry(run.id, 'run.completed');
      await expect(
        store().records.finishRun(
          okOutcome(run.id, {
            delivery: { kind: 'outbox', entry: reply },
            callbacks: [fresh, { ...entry(run.id, 'run.completed'), id: taken.id }],
          }),
        ),
      ).rejects.toBeInstanceOf(ConflictError);
      expect((await store().records.getRun(run.id))!.status).toBe('running');
      expect((await due()).map((d) => d.id)).toEqual([taken.id]);
      expect(await store().records.runCallbacks(run.id)).toEqual([]);
    });

    it("an attempt whose callback entry's id is taken records nothing of it", async () => {
      const run = await started();
      const reply = newDelivery(run.id);
      const other = entry(run.id, 'run.completed');
      await store().records.finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry: reply }, callbacks: [other] }));
      const attempt = { id: reply.id, runId: run.id, attempts: 5, at: 3_000, status: 'failed', error: 'HTTP 400' } as const;
      await expect(
        store().records.recordDelivery({ ...attempt, callbacks: [{ ...entry(run.id, 'delivery.failed'), id: other.id }] }),
      ).rejects.toBeInstanceOf(ConflictError);
      expect((await store().records.getRun(run.id))!.delivery).toMatchObject({ status: 'pending', attempts: 0 });
      expect((await due()).map((d) => d.id).sort()).toEqual([reply.id, other.id].sort());
    });

    it("a rejection whose entry's id is taken stores none of its entries", async () => {
      const taken = entry('', 'request.rejected');
      await store().records.accept({ events: [], runs: [], callbacks: [taken] });
      const fresh = entry('', 'request.rejected', { channel: 'audit' });
      await expect(store().records.accept({ events: [], runs: [], callbacks: [fresh, taken] })).rejects.toBeInstanceOf(ConflictError);
      expect((await due()).map((d) => d.id)).toEqual([taken.id]);
    });
  });
}
