/**
 * What only the SQLite queue of runs does: it is rebuilt from the runs table at open, and it keeps a
 * backlog as numbers, not as an object per run. What every queue does is the contract's (queue-contract.ts).
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/store.ts';
import type { NumberFifo } from '../../../src/store/sqlite/number-fifo.ts';
import { cleanup, tempDir } from '../../helpers/cli.ts';
import { newRun, okOutcome } from '../../helpers/records.ts';

const dir = tempDir('hook-intake-queue-');
afterAll(() => cleanup(dir));
let n = 0;
const file = () => join(dir, `${++n}.db`);

describe('the SQLite queue of runs', () => {
  it('holds again at open the hook runs left queued or running, oldest first, a running one with its stored starts as attempts', async () => {
    const path = file();
    const before = new SqliteStore({ path });
    const [queued, running, twice, done] = [newRun(), newRun(), newRun(), newRun()];
    await before.records.accept({ events: [], runs: [queued, running, twice, done] });
    await before.records.startRun(running.id, 1);
    await before.records.startRun(twice.id, 1);
    await before.records.requeueRun(twice.id, { refundAttempt: false });
    await before.records.startRun(twice.id, 2);
    await before.records.startRun(done.id, 1);
    await before.records.finishRun(okOutcome(done.id, { delivery: { kind: 'skipped', reason: 'ack' } }));
    await before.records.insertHeartbeat(newRun({ kind: 'heartbeat', sessionKey: 'main' }), 3);
    // claimed in this process: a claim is not written, the start is
    await before.runs.claim('w', 60_000, 10);
    await before.close();

    const after = new SqliteStore({ path });
    expect(after.runs.size()).toEqual({ waiting: 3, claimed: 0 });
    expect((await after.runs.claim('w', 60_000, 10)).map((c) => [c.id, c.attempts])).toEqual([
      [queued.id, 0],
      [running.id, 1],
      [twice.id, 2],
    ]);
    await after.close();
  });

  it('keeps a backlog of runs accepted one after another in a few slots, with no entry per run or key', async () => {
    const store = new SqliteStore({ path: file() });
    const runs = Array.from({ length: 10_000 }, () => newRun());
    for (let i = 0; i < runs.length; i += 1000) await store.records.accept({ events: [], runs: runs.slice(i, i + 1000) });
    const inside = store.runs as unknown as { fresh: NumberFifo; heads: Map<string, unknown> };
    expect(store.runs.size().waiting).toBe(10_000);
    expect(inside.fresh.capacity).toBe(1024);
    expect(inside.heads.size).toBe(0);
    const claimed = await store.runs.claim('w', 60_000, 5);
    expect(claimed.map((c) => c.id)).toEqual(runs.slice(0, 5).map((r) => r.id));
    expect(inside.heads.size).toBe(5);
    await store.close();
  });

  it("keeps a long line of one key's runs in order behind the one under way, among other keys' runs", async () => {
    const store = new SqliteStore({ path: file() });
    const runs = Array.from({ length: 3000 }, (_, i) => newRun({ sessionKey: i % 3 === 0 ? `hook:other-${i}` : 'hook:busy' }));
    await store.records.accept({ events: [], runs });
    const order: string[] = [];
    for (let claims = await store.runs.claim('w', 60_000, 2); claims.length; claims = await store.runs.claim('w', 60_000, 2))
      for (const c of claims) {
        order.push(c.id);
        expect(await store.runs.complete(c.id, 'w')).toBe(true);
      }
    const busy = runs.filter((r) => r.sessionKey === 'hook:busy').map((r) => r.id);
    expect(order.filter((id) => busy.includes(id))).toEqual(busy);
    expect(order).toHaveLength(runs.length);
    await store.close();
  });

  it("keeps whether a run's session key was made for it, for the runner; the read API does not show it", async () => {
    const store = new SqliteStore({ path: file() });
    const fresh = newRun({ newSession: true });
    const keyed = newRun();
    await store.records.accept({ events: [], runs: [fresh, keyed] });
    expect((await store.runs.claim('w', 60_000, 10)).map((c) => c.item.newSession)).toEqual([true, undefined]);
    expect(await store.records.getRun(fresh.id)).not.toHaveProperty('newSession');
    await store.close();
  });
});
