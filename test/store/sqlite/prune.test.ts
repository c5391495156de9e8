/**
 * What retention does inside the SQLite driver, beyond the Store contract: long texts leave with the
 * last row referring to them, and the counts tallied before a prune drop what it removed.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseSync } from 'node:sqlite';
import { SqliteStore } from '../../../src/store/sqlite/store.ts';
import { cleanup, tempDir } from '../../helpers/cli.ts';
import { newDelivery, newEvent, newRun, okOutcome } from '../../helpers/records.ts';

const dir = tempDir('hook-intake-sqlite-prune-');
afterAll(() => cleanup(dir));
let n = 0;
const long = (tag: string) => `${tag}: ${'x'.repeat(5_000)}`;
const cutoff = { runs: 10_000, events: 10_000, requests: 10_000, sessionLines: 50 };

async function finished(store: SqliteStore, at: number, sessionKey: string) {
  const message = long(`message ${at}`);
  const reply = long(`reply ${at}`);
  const run = newRun({ createdAt: at, sessionKey, message });
  await store.records.accept({ events: [newEvent({ createdAt: at })], runs: [run] });
  await store.records.startRun(run.id, at);
  await store.records.finishRun(
    okOutcome(run.id, {
      finishedAt: at,
      reply,
      messages: [{ sessionKey, role: 'assistant', content: reply, runId: run.id, createdAt: at }],
      delivery: { kind: 'outbox', entry: newDelivery(run.id, { text: reply, createdAt: at }) },
    }),
  );
  const [d] = await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 1);
  await store.records.recordDelivery({ id: d!.id, runId: run.id, attempts: 1, at, status: 'sent' });
  return run;
}

describe('the SQLite records: prune()', () => {
  it('removes a long text with the last row that refers to it', async () => {
    const path = join(dir, `${++n}.db`);
    const store = new SqliteStore({ path });
    for (const at of [1_000, 2_000, 3_000]) await finished(store, at, `s${at}`);
    await finished(store, 20_000, 'new');
    const texts = () => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        return Number((db.prepare('SELECT count(*) AS n FROM texts').get() as { n: number }).n);
      } catch {
        return -1;
      } finally {
        db.close();
      }
    };
    await store.close();
    expect(texts()).toBe(8); // a message and a reply per run; the transcript line and the delivery share the reply
    const again = new SqliteStore({ path });
    while ((await again.records.prune(cutoff, 2)).more);
    await again.close();
    expect(texts()).toBe(2);
  });

  it('takes what it removed off counts tallied before', async () => {
    const store = new SqliteStore({ path: join(dir, `${++n}.db`) });
    for (const at of [1_000, 2_000, 3_000, 20_000]) await finished(store, at, `s${at}`);
    const before = await store.records.counts();
    expect(before.runs.ok).toBe(4);
    while ((await store.records.prune(cutoff, 1)).more);
    expect(await store.records.counts()).toEqual({ ...before, runs: { ...before.runs, ok: 1 } });
    await store.close();
  });
});
