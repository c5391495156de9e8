/**
 * What a `StoreReader` (src/store/roles.ts) shows on every driver: the request log, and the runs and
 * events a kept request names, read while the serving store is open and goes on writing.
 */
import { describe, expect, it } from 'vitest';
import type { Store, StoreReader } from '../../src/store/roles.ts';
import { uuidv7 } from '../../src/util/uuid7.ts';
import { newEvent, newRun } from '../helpers/records.ts';
import { newRequest } from './contract-console.ts';

export interface ReaderPair {
  store: Store;
  reader: StoreReader;
}

export function readerContract(name: string, open: () => Promise<ReaderPair>): void {
  describe(`StoreReader: ${name}`, () => {
    it('reads kept requests, their runs and events while the store goes on writing', async () => {
      const { store, reader } = await open();
      try {
        const t = 1_700_000_000_000;
        const run = newRun({ message: 'the run', createdAt: t });
        const event = newEvent({ id: uuidv7(t), text: 'the event', createdAt: t });
        const request = newRequest({
          receivedAt: t,
          actions: [
            { kind: 'wake', mode: 'now', eventId: event.id },
            { kind: 'agent', name: 'Hook', sessionKey: run.sessionKey, channel: 'last', to: null, deliver: true, runId: run.id },
          ],
        });
        const { requestId } = await store.records.accept({ events: [event], runs: [run], request });
        expect((await reader.requests.list({ limit: 10 })).map((r) => r.id)).toEqual([requestId]);
        expect((await reader.requests.get(requestId!))?.actions).toEqual(request.actions);
        expect((await reader.records.getRun(run.id))?.message).toBe('the run');
        expect((await reader.records.getEvent(event.id))?.text).toBe('the event');
        // the store writes while the reader is open, and the reader sees what was committed
        const { requestId: second } = await store.records.accept({ events: [], runs: [], request: newRequest({ receivedAt: t + 1 }) });
        expect((await reader.requests.list({ limit: 10 })).map((r) => r.id)).toEqual([second, requestId]);
        expect(await reader.records.getRun('nope')).toBeUndefined();
      } finally {
        await reader.close();
        await store.close();
      }
    });
  });
}
