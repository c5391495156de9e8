/**
 * One attempt at an outbox entry that sends a lifecycle event to a callback (docs/callbacks.md,
 * "Delivery"): signed for this attempt's time under the entry's id (the same `webhook-id` on every
 * retry), sent, and recorded as a reply's attempt is (runtime/delivery-attempt.ts): sent, pending until
 * its retry, or failed with the reason.
 */
import type { Logger } from 'pino';
import type { Generation } from '../generation/types.ts';
import { type AttemptContext, type AttemptOutcome, MAX_ATTEMPTS, MAX_RETRY_AFTER_MS } from '../runtime/delivery-attempt.ts';
import type { Delivery, DeliveryAttempt } from '../store/types.ts';
import { type Resolve, type SendResult, sendEvent } from './send.ts';
import { signatureHeaders } from './sign.ts';

/** One attempt at the callback entry `d` (`d.event` set; `d.channel` the callback's id). */
export async function attemptCallback(
  gen: Generation,
  d: Delivery,
  log: Logger,
  ctx: AttemptContext,
  resolve?: Resolve,
): Promise<AttemptOutcome> {
  const attempts = d.attempts + 1;
  const record = (status: DeliveryAttempt['status'], more: Partial<DeliveryAttempt> = {}) =>
    ctx.record({ id: d.id, runId: d.runId, attempts, at: ctx.clock(), status, ...more }, log);
  const callback = gen.callbacks.get(d.channel);
  if (!callback) {
    log.warn('callback failed: not configured');
    return { retry: undefined, recorded: record('failed', { error: `callback "${d.channel}" is not configured` }) };
  }
  const result: SendResult = await sendEvent({
    url: callback.url,
    body: d.text,
    headers: signatureHeaders(callback.key, d.id, Math.floor(ctx.clock() / 1000), d.text),
    allowPrivateNetwork: callback.allowPrivateNetwork,
    signal: ctx.signal,
    clock: ctx.clock,
    ...(resolve ? { resolve } : {}),
  });
  if (result.ok) {
    log.info({ status: result.status }, 'callback sent');
    return { retry: undefined, recorded: record('sent', { error: null }) };
  }
  if (ctx.signal.aborted) {
    // not the receiver's fault: not counted, sent again at the next start
    log.info('callback interrupted by shutdown; left pending');
    return { retry: undefined, recorded: Promise.resolve() };
  }
  const { reason } = result;
  if (result.retryable && attempts < MAX_ATTEMPTS) {
    const delay = Math.max(ctx.backoff(attempts), Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
    const next = ctx.clock() + delay;
    log.warn({ reason, retryInMs: delay }, 'callback failed; will retry');
    const recorded = record('pending', { nextAttemptAt: next, error: reason });
    return { retry: { delivery: { ...d, attempts, nextAttemptAt: next, lastError: reason }, at: next }, recorded };
  }
  log.error({ reason }, 'callback failed');
  return { retry: undefined, recorded: record('failed', { error: reason }) };
}
