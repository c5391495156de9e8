/**
 * The delivery outbox. Entries are written in the same transaction that
 * finishes a run, so a reply is never lost between "run done" and "sent".
 * A failed send is retried with exponential backoff (honouring a channel's
 * Retry-After), at most `MAX_ATTEMPTS` times; the outcome is recorded on the run.
 */
import type { Logger } from 'pino';
import type { GenerationRef } from './generation.ts';
import type { Delivery, Store } from '../store/types.ts';
import { ChannelError } from '../plugins/define.ts';
import { oneLine } from './agent-call.ts';
import { chunkText } from './chunk.ts';

export const MAX_ATTEMPTS = 5;
const BATCH = 50;
const MAX_BACKOFF_MS = 5 * 60_000;

export interface OutboxDeps {
  store: Store;
  generations: GenerationRef;
  logger: Logger;
  clock?: () => number;
  /** Delay before attempt n+1 after n failures (n ≥ 1). Default 1 s, 2 s, 4 s, 8 s with ±20 % jitter. */
  backoffMs?: (failures: number) => number;
}

export interface Outbox {
  notify(): void;
  start(): void;
  stop(deadlineMs: number): Promise<void>;
  /** Resolves when nothing is due or in flight (tests). */
  idle(): Promise<void>;
}

export function defaultBackoff(failures: number): number {
  const base = Math.min(1000 * 2 ** (failures - 1), MAX_BACKOFF_MS);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export function createOutbox(deps: OutboxDeps): Outbox {
  const { store, generations, logger } = deps;
  const clock = deps.clock ?? Date.now;
  const backoff = deps.backoffMs ?? defaultBackoff;
  const inFlight = new Map<string, Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  let pumping = false;
  let pumpAgain = false;
  let stopped = false;
  let idleWaiters: (() => void)[] = [];

  const settle = async () => {
    if (!idleWaiters.length || pumping || inFlight.size) return;
    const next = await store.nextDeliveryAt();
    if (next !== undefined && next <= clock() + 50) return;
    const w = idleWaiters;
    idleWaiters = [];
    for (const r of w) r();
  };

  function schedule(at: number): void {
    if (stopped || at >= timerAt) return;
    if (timer) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(() => {
      timer = undefined;
      timerAt = Infinity;
      void pump();
    }, Math.max(0, at - clock()));
  }

  async function pump(): Promise<void> {
    if (stopped) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        const due = await store.dueDeliveries(clock(), BATCH);
        for (const d of due) {
          if (inFlight.has(d.id)) continue;
          const p = attempt(d).finally(() => {
            inFlight.delete(d.id);
            void settle();
          });
          inFlight.set(d.id, p);
        }
      } while (pumpAgain && !stopped);
      const next = await store.nextDeliveryAt();
      if (next !== undefined) schedule(Math.max(next, clock() + 10));
    } catch (err) {
      logger.error({ err }, 'outbox pump failed');
      schedule(clock() + 1000);
    } finally {
      pumping = false;
      void settle();
    }
  }

  async function attempt(d: Delivery): Promise<void> {
    const gen = generations.current;
    const entry = gen.channels.get(d.channel);
    const attempts = d.attempts + 1;
    const log = logger.child({ runId: d.runId, channel: d.channel, attempt: attempts });
    if (!entry) {
      await store.recordDelivery({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'failed', error: `channel "${d.channel}" is not configured` });
      log.warn('delivery failed: channel not configured');
      return;
    }
    try {
      for (const text of chunkText(d.text, entry.channel.limits?.maxTextLength)) {
        await entry.channel.send({ runId: d.runId, to: d.to, text });
      }
      await store.recordDelivery({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'sent', route: { channel: d.channel, to: d.to } });
      log.info('delivered');
    } catch (err) {
      const retryable = err instanceof ChannelError ? err.retryable : true;
      const reason = oneLine(err instanceof Error ? err.message : String(err), 300);
      if (retryable && attempts < MAX_ATTEMPTS) {
        const hinted = err instanceof ChannelError ? (err.retryAfterMs ?? 0) : 0;
        const next = clock() + Math.min(Math.max(backoff(attempts), hinted), MAX_BACKOFF_MS);
        await store.recordDelivery({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'pending', nextAttemptAt: next, error: reason });
        log.warn({ reason, retryInMs: next - clock() }, 'delivery failed; will retry');
        schedule(next);
      } else {
        await store.recordDelivery({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'failed', error: reason });
        log.error({ reason }, 'delivery failed');
      }
    }
  }

  return {
    notify: () => void pump(),
    start: () => void pump(),
    async stop(deadlineMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (!inFlight.size) return;
      let t: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...inFlight.values()]), new Promise((r) => (t = setTimeout(r, deadlineMs)))]);
      clearTimeout(t);
    },
    idle() {
      return new Promise((r) => {
        idleWaiters.push(r);
        void settle();
      });
    },
  };
}
