/**
 * The run executor across restarts and shutdowns (docs/runtime.md, "Agent runs", "Crash safety" and
 * "Shutdown"): recovery of queued and interrupted runs, leases kept while a run goes on, and stop()
 * with a deadline.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LEASE_MS } from '../../src/runtime/runner.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { closeAll, finished, setup } from '../helpers/runner.ts';
import { newRun, scriptedProvider } from '../helpers/runtime.ts';

afterEach(async () => {
  vi.useRealTimers();
  await closeAll();
});

/** Lets the store's group commits (setImmediate, not faked) and what follows them run. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe('createRunner() across restarts and shutdowns', () => {
  describe('recover()', () => {
    it('runs runs found queued, runs runs found running once more, and marks them error the second time', async () => {
      const store = new SqliteStore({ path: ':memory:' });
      const queued = newRun({ model: 'sp/m', wakeMode: 'next-heartbeat' });
      const once = newRun({ model: 'sp/m', wakeMode: 'next-heartbeat' });
      const twice = newRun({ model: 'sp/m', hookName: 'Twice', wakeMode: 'now' });
      const heartbeat = newRun({ kind: 'heartbeat', sessionKey: 'main', model: 'sp/m' });
      await store.records.accept({ events: [], runs: [queued, once, twice] });
      await store.records.startRun(once.id, Date.now()); // attempts 1: interrupted once
      await store.records.startRun(twice.id, Date.now());
      await store.records.requeueRun(twice.id, { refundAttempt: false });
      await store.records.startRun(twice.id, Date.now()); // attempts 2: interrupted again
      await store.records.insertHeartbeat(heartbeat, Date.now());

      const s = setup({ store, provider: scriptedProvider(() => 'done') });
      expect(await s.runner.recover()).toEqual({ queued: 3, heartbeats: 1 });
      expect(await finished(s, queued.id)).toMatchObject({ status: 'ok', attempts: 1 });
      expect(await finished(s, once.id)).toMatchObject({ status: 'ok', attempts: 2 });
      expect(await s.store.records.getRun(twice.id)).toMatchObject({ status: 'error', error: 'interrupted twice by a service restart' });
      expect(await s.store.records.getRun(heartbeat.id)).toMatchObject({ status: 'error', error: 'interrupted by a service restart' });
      expect((await s.store.records.pendingEvents(10)).map((e) => e.text)).toContain(
        'Hook Twice (error): interrupted twice by a service restart',
      );
      expect(s.heartbeats).toHaveBeenCalledTimes(1); // Twice asked for wakeMode now
      expect(s.provider.calls.map((c) => c.req.runId).sort()).toEqual([queued.id, once.id].sort());
    });
  });

  describe('leases', () => {
    it('keeps a run that outlasts its lease claimed: the lease is renewed while the agent works, so the run is not taken again', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
      const s = setup();
      const run = await s.add({ timeoutSeconds: 3600 });
      while (s.provider.calls.length < 1) await turns();
      for (let t = 0; t < 3 * LEASE_MS; t += LEASE_MS / 6) {
        await vi.advanceTimersByTimeAsync(LEASE_MS / 6);
        await turns();
      }
      expect(s.provider.calls).toHaveLength(1);
      expect(s.store.runs.size()).toEqual({ waiting: 0, claimed: 1 });
      s.provider.calls[0]!.reply('done');
      while ((await s.store.records.getRun(run.id))!.status !== 'ok') await turns();
      await turns();
      expect(s.store.runs.size()).toEqual({ waiting: 0, claimed: 0 });
    });
  });

  describe('stop()', () => {
    it('lets a running run finish within the deadline and leaves queued runs queued', async () => {
      const s = setup({ maxConcurrent: 1 });
      const a = await s.add({ sessionKey: 'hook:a' });
      const b = await s.add({ sessionKey: 'hook:b' });
      await s.provider.waitForCalls(1);
      const stopping = s.runner.stop(5000);
      setTimeout(() => s.provider.calls[0]!.reply('done'), 100);
      await stopping;
      expect(await s.store.records.getRun(a.id)).toMatchObject({ status: 'ok', reply: 'done' });
      expect(await s.store.records.getRun(b.id)).toMatchObject({ status: 'queued', attempts: 0 });
      expect(s.provider.calls).toHaveLength(1);
    });

    it('starts none of the runs a claim under way at the stop gives it, and leaves them in the queue', async () => {
      const s = setup();
      const run = newRun({ model: 'sp/m' });
      await s.store.records.accept({ events: [], runs: [run] });
      s.runner.notify();
      await s.runner.stop(0);
      await new Promise((r) => setImmediate(r));
      expect(s.provider.calls).toHaveLength(0);
      expect((await s.store.runs.claim('next', 1000, 10)).map((c) => [c.id, c.attempts])).toEqual([[run.id, 0]]);
    });

    it('aborts a run still going at the deadline and puts it back in the queue without counting the attempt', async () => {
      const s = setup();
      const a = await s.add({});
      await s.provider.waitForCalls(1);
      await s.runner.stop(100);
      expect(s.provider.calls[0]!.req.signal.aborted).toBe(true);
      expect(await s.store.records.getRun(a.id)).toMatchObject({ status: 'queued', attempts: 0 });
      expect(await s.store.records.pendingEvents(10)).toEqual([]);
    });
  });
});
