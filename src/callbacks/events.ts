/**
 * The lifecycle events of docs/callbacks.md, "Events", as outbox entries: one per callback that takes
 * the event, each with an id of its own (its `webhook-id`) and the same body. They are made where their
 * cause is stored, and stored with it: a run's outcome, a reply's last attempt, a rejected request.
 */
import type { CallbackType } from '../config/schema.ts';
import type { Generation } from '../generation/types.ts';
import { replyDisposition } from '../runtime/disposition.ts';
import type { DeliveryAttempt, NewDelivery, NewRun, Run, RunDelivery, RunOutcome } from '../store/types.ts';
import { uuidv7 } from '../util/uuid7.ts';

/** The entries of an event of `type` from `hook`, one per callback that takes it; `data` is called only when there is one. */
function entries(gen: Generation, hook: string, type: CallbackType, runId: string, at: number, data: () => object): NewDelivery[] {
  const targets = gen.callbacks.targets(hook, type);
  if (!targets.length) return [];
  const text = JSON.stringify({ type, timestamp: new Date(at).toISOString(), data: data() });
  return targets.map((c) => ({ id: uuidv7(at), runId, channel: c.id, to: null, text, createdAt: at, event: type }));
}

/** What every run event says of its run. */
function runData(run: Pick<NewRun, 'id' | 'hookId' | 'sessionKey' | 'agentId'>, status: string, reply: string | null, delivered: boolean) {
  return {
    runId: run.id,
    hook: run.hookId,
    agentId: run.agentId,
    sessionKey: run.sessionKey,
    status,
    replyDisposition: replyDisposition(reply, delivered),
  };
}

/** `run.completed` or `run.failed` for a hook run's outcome (a heartbeat, without a hook, has none). */
export function runEvents(gen: Generation, run: NewRun, o: RunOutcome): NewDelivery[] {
  const type = o.status === 'ok' ? 'run.completed' : 'run.failed';
  if (run.hookId === undefined || !gen.callbacks.wants(type)) return [];
  return entries(gen, run.hookId, type, run.id, o.finishedAt, () => {
    const d = o.delivery;
    const delivery: RunDelivery =
      d.kind === 'outbox'
        ? { status: 'pending', reason: null, channel: d.entry.channel, to: d.entry.to, attempts: 0 }
        : { status: 'skipped', reason: d.reason, channel: d.channel ?? null, to: d.to ?? null, attempts: 0 };
    return {
      ...runData(run, o.status, o.reply, d.kind === 'outbox'),
      delivery,
      ...(o.status === 'ok' ? {} : { error: o.error }),
      ...(withReply(gen) && o.reply !== null ? { reply: o.reply } : {}),
    };
  });
}

/** `delivery.failed` for the last attempt `a` of `run`'s reply, when it failed for good. */
export function deliveryFailedEvents(gen: Generation, run: Run | undefined, a: DeliveryAttempt): NewDelivery[] {
  if (a.status !== 'failed' || run?.hookId === undefined || !gen.callbacks.wants('delivery.failed')) return [];
  return entries(gen, run.hookId, 'delivery.failed', run.id, a.at, () => ({
    ...runData(run, run.status, run.reply, true),
    delivery: { ...run.delivery, status: 'failed', reason: a.error ?? null, attempts: a.attempts },
    ...(withReply(gen) && run.reply !== null ? { reply: run.reply } : {}),
  }));
}

/** `request.rejected`: a request to `hook` refused with `status` and `code`; nothing of the request itself. */
export function rejectedEvents(
  gen: Generation,
  hook: string,
  status: number,
  code: string,
  at: number,
  notReported: number,
): NewDelivery[] {
  if (!gen.callbacks.wants('request.rejected')) return [];
  return entries(gen, hook, 'request.rejected', '', at, () => ({ hook, status, code, notReported }));
}

/** The reply's text goes out only where the operator allowed it (`hooks.replyInResponse`). */
const withReply = (gen: Generation) => gen.config.hooks.replyInResponse;
