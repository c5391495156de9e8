/**
 * Background retention: the cutoffs come from `retention` and the injected clock; a pass prunes in
 * batches with a pause between them until nothing is left, and stops early when asked.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { createRetention, pruneAll, pruneBefore } from '../../src/runtime/retention.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { testGeneration } from '../helpers/generation.ts';
import { newEvent, newRun, okOutcome } from '../helpers/records.ts';
import { newRequest } from '../store/contract-console.ts';

const DAY = 86_400_000;
const dir = tempDir('hook-intake-retention-');
afterAll(() => cleanup(dir));
let n = 0;

/** A store holding `count` finished runs and kept requests made a day apart, from day 0. */
async function storeWithDays(count: number): Promise<SqliteStore> {
  const store = new SqliteStore({ path: join(dir, `${++n}.db`) });
  for (let d = 0; d < count; d++) {
    const run = newRun({ createdAt: d * DAY });
    await store.records.accept({ events: [newEvent({ createdAt: d * DAY })], runs: [run], request: newRequest({ receivedAt: d * DAY }) });
    await store.records.startRun(run.id, d * DAY);
    await store.records.finishRun(okOutcome(run.id, { finishedAt: d * DAY, delivery: { kind: 'skipped', reason: 'ack' } }));
  }
  return store;
}

describe('pruneBefore()', () => {
  it('puts each cutoff its days before now; fractions of a day work, and 0 days is now', () => {
    expect(pruneBefore({ runsDays: 30, eventsDays: 0.5, requestsDays: 0, pruneEverySeconds: 60 }, 100 * DAY)).toEqual({
      runs: 70 * DAY,
      events: 99.5 * DAY,
      requests: 100 * DAY,
      sessionLines: 50,
    });
  });
});

describe('pruneAll()', () => {
  it('prunes in batches, pausing between them, until nothing is left', async () => {
    const store = await storeWithDays(10);
    let pauses = 0;
    const total = await pruneAll(
      store.records,
      { runs: 5 * DAY, events: 0, requests: 7 * DAY, sessionLines: 50 },
      { batch: 2, pause: async () => void pauses++ },
    );
    expect(total).toEqual({ runs: 5, events: 0, messages: 0, deliveries: 0, requests: 7 });
    expect(pauses).toBeGreaterThanOrEqual(3);
    expect((await store.records.listRuns({ limit: 100 })).map((r) => r.createdAt / DAY)).toEqual([9, 8, 7, 6, 5]);
    await store.close();
  });

  it('stops after the batch under way when told to', async () => {
    const store = await storeWithDays(10);
    const total = await pruneAll(
      store.records,
      { runs: 10 * DAY, events: 0, requests: 0, sessionLines: 50 },
      { batch: 2, stopped: () => true },
    );
    expect(total.runs).toBe(2);
    await store.close();
  });
});

describe('createRetention()', () => {
  it("prunes what is older than retention at the clock's time, and logs what it removed", async () => {
    const store = await storeWithDays(10);
    let now = 10 * DAY;
    let lines = '';
    const logger = createLogger('info', { write: (s: string) => void (lines += s) });
    const generations = new GenerationRef(await testGeneration({ retention: { runsDays: 3, eventsDays: 30, requestsDays: 1 } }));
    const retention = createRetention({ records: store.records, generations, logger, clock: () => now, pause: async () => {} });
    expect(await retention.runOnce()).toEqual({ runs: 7, events: 0, messages: 0, deliveries: 0, requests: 9 });
    expect(JSON.parse(lines.trim())).toMatchObject({ msg: 'retention: pruned', pruned: { runs: 7, requests: 9 } });
    now += DAY;
    expect((await retention.runOnce()).runs).toBe(1);
    await retention.stop();
    await store.close();
  });
});
