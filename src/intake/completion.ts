/**
 * What a waiting `/hooks/agent` request is told of its run (docs/waiting.md): the run's end in a few
 * bounded facts, read from the stored run, so that every request waiting for one run (a repeat with the
 * same idempotency key included) is told the same.
 */
import type { Run } from '../store/types.ts';

export interface Completion {
  status: 'ok' | 'error' | 'timeout';
  /** `visible`: a reply set out to be delivered; `silent`: one not delivered by choice; `empty`: no reply text. */
  replyDisposition: 'visible' | 'silent' | 'empty';
  delivery: { status: 'sent' | 'skipped' | 'failed'; attempts: number };
  /** The reply text, only with `hooks.replyInResponse`. */
  reply?: string;
}

/** True once the run finished and its delivery ended (sent, skipped, failed): nothing of it changes any more. */
export function hasEnded(run: Run): boolean {
  return run.status !== 'queued' && run.status !== 'running' && run.delivery.status !== 'pending';
}

/** The completion of a run that has ended (`hasEnded`); the reply text only when `withReply`. */
export function completionOf(run: Run, withReply: boolean): Completion {
  const delivery = run.delivery.status as Completion['delivery']['status'];
  const text = run.reply ?? '';
  const replyDisposition = !text.trim() ? 'empty' : delivery === 'skipped' ? 'silent' : 'visible';
  const c: Completion = {
    status: run.status as Completion['status'],
    replyDisposition,
    delivery: { status: delivery, attempts: run.delivery.attempts },
  };
  if (withReply && run.reply !== null) c.reply = run.reply;
  return c;
}
