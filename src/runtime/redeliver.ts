/**
 * `POST /api/runs/<id>/redeliver`: the outbox entry that sends a finished run's reply again. A failed
 * delivery goes again to the route it failed on; a skipped one to the run's route as it resolves now
 * (the run's `deliver: false` is overridden: the operator asked for it).
 */
import { errors } from '../errors.ts';
import type { MetaRecords } from '../store/roles.ts';
import type { NewDelivery, Run } from '../store/types.ts';
import { uuidv7 } from '../util/uuid7.ts';
import type { Generation } from '../generation/types.ts';
import { resolveRoute } from './routes.ts';

export async function redeliveryOf(run: Run, gen: Generation, meta: MetaRecords, now: number): Promise<NewDelivery> {
  const d = run.delivery;
  if (run.status === 'queued' || run.status === 'running') throw errors.conflict(`the run is ${run.status}; it has no reply yet`);
  if (d.status !== 'failed' && d.status !== 'skipped')
    throw errors.conflict(`the reply's delivery is ${d.status}; only a failed or skipped one is sent again`);
  if (run.reply === null || !run.reply.trim()) throw errors.conflict('the run has no reply to deliver');
  let route: { channel: string; to: string | null };
  if (d.status === 'failed' && d.channel !== null && gen.channels.has(d.channel)) route = { channel: d.channel, to: d.to };
  else {
    const r = await resolveRoute(gen, meta, run.channel, run.to);
    if ('skip' in r) throw errors.conflict(`the reply cannot be delivered: ${r.skip}`);
    route = r.route;
  }
  return { id: uuidv7(now), runId: run.id, channel: route.channel, to: route.to, text: run.reply, createdAt: now };
}
