/**
 * The Store contract's cases for the operator console (SPEC §12): kept requests. Called from inside
 * `storeContract`, so every driver that runs the contract runs these too.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KeptRequest, Store } from '../../src/store/types.ts';
import { newDelivery, newEvent, newRun, okOutcome } from '../helpers/records.ts';

export function newRequest(over: Partial<KeptRequest> = {}): KeptRequest {
  return {
    id: randomUUID(),
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
    it('are stored with the request\'s events and runs, and read back whole', async () => {
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
      await store().accept({ events: [event], runs: [run], request: req });
      const read = await store().getRequest(req.id);
      expect({ ...read, body: Buffer.from(read!.body) }).toEqual({ ...req, body: Buffer.from(body) });
      expect(await store().getRequest('nope')).toBeUndefined();
    });

    it('are not stored when the request\'s batch fails', async () => {
      const taken = newRun();
      await store().accept({ events: [], runs: [taken] });
      const req = newRequest();
      await expect(store().accept({ events: [], runs: [taken], request: req })).rejects.toThrow();
      expect(await store().getRequest(req.id)).toBeUndefined();
    });

    it('list newest first, filtered by hook and status, a page at a time', async () => {
      const reqs = [
        newRequest({ hook: 'github', status: 202, receivedAt: 1 }),
        newRequest({ hook: 'wake', mappingId: null, status: 200, receivedAt: 2 }),
        newRequest({ hook: 'github', status: 204, receivedAt: 3 }),
        newRequest({ hook: 'github', status: 202, receivedAt: 4, replayOf: 'x' }),
      ];
      for (const r of reqs) await store().accept({ events: [], runs: [], request: r });
      const ids = (l: KeptRequest[]) => l.map((r) => r.receivedAt);
      expect(ids(await store().listRequests({ limit: 10 }))).toEqual([4, 3, 2, 1]);
      expect(ids(await store().listRequests({ limit: 2 }))).toEqual([4, 3]);
      expect(ids(await store().listRequests({ limit: 10, hook: 'github' }))).toEqual([4, 3, 1]);
      expect(ids(await store().listRequests({ limit: 10, status: 202 }))).toEqual([4, 1]);
      expect(ids(await store().listRequests({ limit: 10, hook: 'github', status: 204 }))).toEqual([3]);
      expect(ids(await store().listRequests({ limit: 2, before: reqs[2]!.id }))).toEqual([2, 1]);
      expect(ids(await store().listRequests({ limit: 10, before: 'unknown' }))).toEqual([]);
    });
  });

  describe('redeliver()', () => {
    it('gives a finished run a new pending delivery, due at once, and leaves the failed one as it was', async () => {
      const run = newRun();
      await store().accept({ events: [], runs: [run] });
      await store().startRun(run.id, 1_500);
      const first = newDelivery(run.id, { channel: 'slack', to: '#a' });
      await store().finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry: first } }));
      await store().recordDelivery({ id: first.id, runId: run.id, attempts: 5, at: 3_000, status: 'failed', error: 'HTTP 500' });
      expect((await store().getRun(run.id))!.delivery).toMatchObject({ status: 'failed', attempts: 5 });

      const again = newDelivery(run.id, { channel: 'slack', to: '#b', createdAt: 9_000, text: 'the reply' });
      await store().redeliver(again);
      expect((await store().getRun(run.id))!.delivery).toEqual({ status: 'pending', reason: null, channel: 'slack', to: '#b', attempts: 0 });
      const due = await store().dueDeliveries(9_000, 10);
      expect(due.map((d) => [d.id, d.text, d.status])).toEqual([[again.id, 'the reply', 'pending']]);
      await store().recordDelivery({ id: again.id, runId: run.id, attempts: 1, at: 9_100, status: 'sent' });
      expect((await store().getRun(run.id))!.delivery).toMatchObject({ status: 'sent', attempts: 1 });
    });

    it('sends a skipped reply', async () => {
      const run = newRun();
      await store().accept({ events: [], runs: [run] });
      await store().startRun(run.id, 1_500);
      await store().finishRun(okOutcome(run.id, { delivery: { kind: 'skipped', reason: 'deliver is false' } }));
      const entry = newDelivery(run.id, { channel: 'console', createdAt: 5_000 });
      await store().redeliver(entry);
      expect((await store().getRun(run.id))!.delivery).toEqual({ status: 'pending', reason: null, channel: 'console', to: null, attempts: 0 });
      expect((await store().dueDeliveries(5_000, 10)).map((d) => d.id)).toEqual([entry.id]);
    });
  });
}
