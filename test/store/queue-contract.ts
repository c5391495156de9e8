/**
 * The behaviour every driver's queues (`Store.runs`, `Store.tasks`) must show, through the roles only: run it for a driver with `queueContract(name, open)`, where `open` gives a new, empty store
 * whose queue reads the clock it is given.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Claim, NewRun, Task } from '../../src/store/types.ts';
import type { RunQueue, Store, TaskQueue } from '../../src/store/roles.ts';
import { newRun, okOutcome } from '../helpers/records.ts';

export function queueContract(name: string, open: (opts: { clock: () => number }) => Promise<Store>): void {
  describe(`queue contract: ${name}`, () => {
    const START = 1_700_000_000_000;
    let now: number;
    let store: Store;
    let q: RunQueue;
    beforeEach(async () => {
      now = START;
      store = await open({ clock: () => now });
      q = store.runs;
    });
    afterEach(() => store.close());

    /** Runs accepted in one request, one per session key given. */
    const accept = async (...keys: string[]): Promise<NewRun[]> => {
      const runs = keys.map((k, i) => newRun({ sessionKey: k, message: `${k} #${i}` }));
      await store.records.accept({ events: [], runs });
      return runs;
    };
    const ids = (cs: Claim<NewRun>[]) => cs.map((c) => c.id);

    it('gives the runs accept stored, oldest first, each with its key, its run and a lease', async () => {
      const [a, b] = await accept('k1', 'k2');
      const [c] = await accept('k3');
      expect(q.size()).toEqual({ waiting: 3, claimed: 0 });
      const claims = await q.claim('w1', 1_000, 10);
      expect(claims).toEqual(
        [a, b, c].map((run) => ({ id: run!.id, key: run!.sessionKey, attempts: 0, lastError: null, leaseUntil: START + 1_000, item: run })),
      );
      expect(q.size()).toEqual({ waiting: 0, claimed: 3 });
    });

    it('enqueues nothing of a request whose write fails', async () => {
      const [taken] = await accept('k1');
      await expect(store.records.accept({ events: [], runs: [newRun({ sessionKey: 'k2' }), taken!] })).rejects.toThrow();
      const [later] = await accept('k3');
      expect(ids(await q.claim('w1', 1_000, 10))).toEqual([taken!.id, later!.id]);
      expect(q.size()).toEqual({ waiting: 0, claimed: 2 });
      await q.complete(later!.id, 'w1');
      expect(await q.claim('w1', 1_000, 10)).toEqual([]);
    });

    it('claims at most `limit` items, and never an item twice while its lease holds', async () => {
      const runs = await accept('k1', 'k2', 'k3');
      const [first, second] = await Promise.all([q.claim('w1', 1_000, 2), q.claim('w2', 1_000, 2)]);
      expect([...ids(first!), ...ids(second!)].sort()).toEqual(runs.map((r) => r.id).sort());
      expect(first!.length).toBeLessThanOrEqual(2);
      now += 999;
      expect(await q.claim('w3', 1_000, 10)).toEqual([]);
    });

    it("gives one key's items in the order accepted, one at a time, while other keys pass", async () => {
      const [a1, a2, b1] = await accept('a', 'a', 'b');
      const [a3] = await accept('a');
      expect(ids(await q.claim('w1', 1_000, 10))).toEqual([a1!.id, b1!.id]);
      expect(await q.claim('w1', 1_000, 10)).toEqual([]);
      expect(q.size()).toEqual({ waiting: 2, claimed: 2 });
      expect(await q.complete(b1!.id, 'w1')).toBe(true);
      expect(await q.claim('w1', 1_000, 10)).toEqual([]);
      expect(await q.complete(a1!.id, 'w1')).toBe(true);
      expect(ids(await q.claim('w2', 1_000, 10))).toEqual([a2!.id]);
      expect(await q.complete(a2!.id, 'w2')).toBe(true);
      expect(ids(await q.claim('w2', 1_000, 10))).toEqual([a3!.id]);
    });

    it('complete() takes the item out for good; only its holder can, once', async () => {
      const [a] = await accept('a');
      await q.claim('w1', 1_000, 10);
      expect(await q.complete(a!.id, 'w2')).toBe(false);
      expect(await q.complete(a!.id, 'w1')).toBe(true);
      expect(await q.complete(a!.id, 'w1')).toBe(false);
      now += 10_000;
      expect(await q.claim('w1', 1_000, 10)).toEqual([]);
      expect(q.size()).toEqual({ waiting: 0, claimed: 0 });
      expect(await q.nextAt()).toBeUndefined();
    });

    it('makes an item whose lease ran out claimable again, counted as an attempt; its first holder then has lost it', async () => {
      const [a] = await accept('a');
      await q.claim('w1', 1_000, 10);
      expect(await q.nextAt()).toBe(START + 1_000);
      now += 999;
      expect(await q.claim('w2', 1_000, 10)).toEqual([]);
      now += 1;
      const [again] = await q.claim('w2', 1_000, 10);
      expect(again).toMatchObject({ id: a!.id, attempts: 1, leaseUntil: now + 1_000 });
      for (const call of [
        q.complete(a!.id, 'w1'),
        q.extend(a!.id, 'w1', 5_000),
        q.fail(a!.id, 'w1', { error: 'x' }),
        q.release(a!.id, 'w1'),
      ])
        expect(await call).toBe(false);
      expect(await q.complete(a!.id, 'w2')).toBe(true);
    });

    it('extend() keeps a lease from now on for the time given', async () => {
      const [a] = await accept('a');
      await q.claim('w1', 1_000, 10);
      now += 900;
      expect(await q.extend(a!.id, 'w1', 1_000)).toBe(true);
      expect(await q.extend(a!.id, 'w2', 1_000)).toBe(false);
      now += 500;
      expect(await q.claim('w2', 1_000, 10)).toEqual([]);
      expect(await q.nextAt()).toBe(START + 1_900);
      now = START + 1_900;
      expect(ids(await q.claim('w2', 1_000, 10))).toEqual([a!.id]);
    });

    it('fail() makes the item due again at its retry time with the error, and holds back its key until then', async () => {
      const [x1, x2, y] = await accept('x', 'x', 'y');
      await q.claim('w1', 1_000, 1);
      expect(await q.fail(x1!.id, 'w1', { retryAt: START + 5_000, error: 'HTTP 503' })).toBe(true);
      expect(q.size()).toEqual({ waiting: 3, claimed: 0 });
      expect(ids(await q.claim('w1', 1_000, 10))).toEqual([y!.id]);
      // while one item waits for its retry, the others claimed stay claimed
      expect(await q.claim('w2', 1_000, 10)).toEqual([]);
      expect(await q.nextAt()).toBe(START + 1_000);
      await q.complete(y!.id, 'w1');
      expect(await q.nextAt()).toBe(START + 5_000);
      now = START + 4_999;
      expect(await q.claim('w1', 1_000, 10)).toEqual([]);
      now = START + 5_000;
      const [retried] = await q.claim('w2', 1_000, 10);
      expect(retried).toMatchObject({ id: x1!.id, attempts: 1, lastError: 'HTTP 503', item: x1 });
      await q.complete(x1!.id, 'w2');
      expect(ids(await q.claim('w2', 1_000, 10))).toEqual([x2!.id]);
    });

    it('fail() without a time makes the item due at once', async () => {
      const [a] = await accept('a');
      await q.claim('w1', 1_000, 10);
      await q.fail(a!.id, 'w1', { error: 'boom' });
      expect(await q.claim('w1', 1_000, 10)).toMatchObject([{ id: a!.id, attempts: 1, lastError: 'boom' }]);
    });

    it('release() gives the item back due at once without counting the claim; its run is queued again with the start given back', async () => {
      const [a] = await accept('a');
      await q.claim('w1', 1_000, 10);
      await store.records.startRun(a!.id, START);
      expect(await q.release(a!.id, 'w1')).toBe(true);
      expect(await store.records.getRun(a!.id)).toMatchObject({ status: 'queued', attempts: 0 });
      expect(await q.claim('w2', 1_000, 10)).toMatchObject([{ id: a!.id, attempts: 0 }]);
    });

    it('a run finished and completed is gone; a run of its key accepted later is due', async () => {
      const [a] = await accept('a');
      await q.claim('w1', 1_000, 10);
      await store.records.startRun(a!.id, START);
      await store.records.finishRun(okOutcome(a!.id, { delivery: { kind: 'skipped', reason: 'ack' } }));
      await q.complete(a!.id, 'w1');
      const [later] = await accept('a');
      expect(ids(await q.claim('w1', 1_000, 10))).toEqual([later!.id]);
    });

    describe('tasks (Store.tasks)', () => {
      const beat: Task = { kind: 'heartbeat', key: 'main' };
      let t: TaskQueue;
      beforeEach(() => {
        t = store.tasks;
      });
      const claimBeats = (worker: string, leaseMs = 1_000) => t.claim('heartbeat', worker, leaseMs, 10);

      it('gives a task once it is due, with its key and a lease', async () => {
        expect(await t.enqueue(beat, START + 250)).toBe(START + 250);
        now += 249;
        expect(await claimBeats('w1')).toEqual([]);
        now += 1;
        const [c, ...more] = await claimBeats('w1');
        expect(more).toEqual([]);
        expect(c).toMatchObject({ key: 'main', attempts: 0, lastError: null, leaseUntil: now + 1_000, item: beat });
        expect(await t.complete(c!.id, 'w1')).toBe(true);
        now += 10_000;
        expect(await claimBeats('w1')).toEqual([]);
      });

      it('coalesces a task enqueued while one of its key waits: one task, due at the earlier time', async () => {
        await t.enqueue(beat, START + 250);
        now += 100;
        expect(await t.enqueue(beat, START + 350)).toBe(START + 250);
        expect(await t.enqueue(beat, START + 200)).toBe(START + 200);
        now = START + 200;
        const claims = await claimBeats('w1');
        expect(claims).toHaveLength(1);
        await t.complete(claims[0]!.id, 'w1');
        now += 10_000;
        expect(await claimBeats('w1')).toEqual([]);
      });

      it('says when the next task becomes claimable: due, or its lease run out', async () => {
        expect(await t.nextAt('heartbeat')).toBeUndefined();
        await t.enqueue(beat, START + 300);
        await t.enqueue({ kind: 'heartbeat', key: 'other' }, START + 200);
        expect(await t.nextAt('heartbeat')).toBe(START + 200);
        now = START + 200;
        const [c] = await claimBeats('w1', 5_000);
        expect(c!.key).toBe('other');
        expect(await t.nextAt('heartbeat')).toBe(START + 300);
        now = START + 300;
        const [d] = await claimBeats('w1', 5_000);
        expect(await t.nextAt('heartbeat')).toBe(START + 5_200);
        await t.complete(c!.id, 'w1');
        await t.complete(d!.id, 'w1');
        expect(await t.nextAt('heartbeat')).toBeUndefined();
      });

      it('keeps other keys apart', async () => {
        await t.enqueue(beat, START);
        await t.enqueue({ kind: 'heartbeat', key: 'other' }, START);
        expect((await claimBeats('w1')).map((c) => c.key).sort()).toEqual(['main', 'other']);
      });

      it('gives a due task to exactly one of the workers claiming it at once', async () => {
        await t.enqueue(beat, START);
        const all = await Promise.all(['w1', 'w2', 'w3'].map((w) => claimBeats(w)));
        expect(all.flat()).toHaveLength(1);
      });

      it('holds a task enqueued while its key is claimed until that one is complete', async () => {
        await t.enqueue(beat, START);
        const [first] = await claimBeats('w1');
        expect(await t.enqueue(beat, START + 10)).toBe(START + 10);
        expect(await t.enqueue(beat, START + 20)).toBe(START + 10);
        now += 500;
        expect(await claimBeats('w2')).toEqual([]);
        await t.complete(first!.id, 'w1');
        const [second, ...more] = await claimBeats('w2');
        expect(more).toEqual([]);
        expect(second!.id).not.toBe(first!.id);
      });

      it('makes a task whose lease ran out claimable again, counted; its first holder then has lost it', async () => {
        await t.enqueue(beat, START);
        const [c] = await claimBeats('w1');
        now += 900;
        expect(await t.extend(c!.id, 'w1', 1_000)).toBe(true);
        now += 999;
        expect(await claimBeats('w2')).toEqual([]);
        now += 1;
        expect(await claimBeats('w2')).toMatchObject([{ id: c!.id, attempts: 1 }]);
        for (const call of [
          t.complete(c!.id, 'w1'),
          t.extend(c!.id, 'w1', 5_000),
          t.fail(c!.id, 'w1', { error: 'x' }),
          t.release(c!.id, 'w1'),
        ])
          expect(await call).toBe(false);
        expect(await t.complete(c!.id, 'w2')).toBe(true);
      });

      it('fail() makes a task due again at its retry time, counted; release() gives it back due now, not counted', async () => {
        await t.enqueue(beat, START);
        const [c] = await claimBeats('w1');
        expect(await t.fail(c!.id, 'w1', { retryAt: START + 5_000, error: 'boom' })).toBe(true);
        expect(await claimBeats('w1')).toEqual([]);
        now = START + 5_000;
        expect(await claimBeats('w2')).toMatchObject([{ id: c!.id, attempts: 1, lastError: 'boom' }]);
        expect(await t.release(c!.id, 'w2')).toBe(true);
        expect(await claimBeats('w3')).toMatchObject([{ id: c!.id, attempts: 1 }]);
      });

      it("are apart from runs: the run queue leaves them out, a task claim gives no run, and neither queue ends the other's claims", async () => {
        const [a] = await accept('main');
        await t.enqueue(beat, START);
        expect(q.size()).toEqual({ waiting: 1, claimed: 0 });
        const [task] = await claimBeats('w1');
        expect(task!.item).toEqual(beat);
        const [run] = await q.claim('w1', 1_000, 10);
        expect(run!.id).toBe(a!.id);
        expect(q.size()).toEqual({ waiting: 0, claimed: 1 });
        expect([await q.complete(task!.id, 'w1'), await t.complete(run!.id, 'w1')]).toEqual([false, false]);
        expect([await t.complete(task!.id, 'w1'), await q.complete(run!.id, 'w1')]).toEqual([true, true]);
      });
    });
  });
}
