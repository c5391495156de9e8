/**
 * Word of runs that ended (`Store.ends`, src/store/roles.ts): a listener hears of a run when it finishes and again
 * when its delivery ends, never of a delivery that is to be retried, and no more once it stopped listening.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/roles.ts';
import { until } from '../helpers/cli.ts';
import { newRun, okOutcome } from '../helpers/records.ts';

export function endsContract(store: () => Store): void {
  describe('ends', () => {
    /** A run accepted, started and finished with `outcome` (okOutcome's delivery through the outbox unless given). */
    const finish = async (over: Parameters<typeof okOutcome>[1] = {}) => {
      const { records } = store();
      const run = newRun();
      await records.accept({ events: [], runs: [run] });
      await records.startRun(run.id, 1_500);
      const outcome = okOutcome(run.id, over);
      await records.finishRun(outcome);
      return { id: run.id, outcome };
    };

    it('tell of a run that finished and of its delivery once it ended, not of an attempt to be retried', async () => {
      const heard: (string | undefined)[] = [];
      await store().ends.listen((id) => heard.push(id));
      const { id, outcome } = await finish();
      await until(() => heard.length === 1);
      const delivery = outcome.delivery.kind === 'outbox' ? outcome.delivery.entry.id : '';
      await store().records.recordDelivery({ id: delivery, runId: id, attempts: 1, at: 3_000, status: 'pending', nextAttemptAt: 4_000 });
      await store().records.recordDelivery({ id: delivery, runId: id, attempts: 2, at: 4_000, status: 'sent' });
      // a later run marks where the word so far ends (on a shared store it comes through the server, in order)
      const marker = await finish({ delivery: { kind: 'skipped', reason: 'deliver is false' } });
      await until(() => heard.includes(marker.id));
      expect(heard).toEqual([id, id, marker.id]);
    });

    it('stop telling a listener once it stopped, and tell every listener', async () => {
      const first: (string | undefined)[] = [];
      const second: (string | undefined)[] = [];
      const stop = await store().ends.listen((id) => first.push(id));
      await store().ends.listen((id) => second.push(id));
      const one = await finish({ delivery: { kind: 'skipped', reason: 'ack' } });
      await until(() => first.length === 1 && second.length === 1);
      stop();
      const two = await finish({ delivery: { kind: 'skipped', reason: 'ack' } });
      await until(() => second.length === 2);
      expect([first, second]).toEqual([[one.id], [one.id, two.id]]);
    });
  });
}
