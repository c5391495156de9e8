/**
 * The delivery outbox. Entries are written in the same transaction that
 * finishes a run, so a reply is never lost between "run done" and "sent".
 * A failed send is retried with exponential backoff (`delivery.*` config,
 * honouring a channel's Retry-After), at most `MAX_ATTEMPTS` times; the
 * outcome is recorded on the run.
 *
 * Sends to one route (channel + recipient) go one at a time, so the chunks
 * and replies a chat receives arrive in order. A reply split into chunks
 * remembers how many were accepted, and a retry resumes after them.
 */
import type { Logger } from 'pino';
import type { Generation, GenerationRef } from './generation.ts';
import type { Delivery, Store } from '../store/types.ts';
import { ChannelError } from '../plugins/define.ts';
import { oneLine } from './agent-call.ts';
import { chunkText } from './chunk.ts';

export const MAX_ATTEMPTS = 5;
/** A Retry-After longer than this is treated as this long. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;
const BATCH = 100;

export interface OutboxDeps {
  store: Store;
  generations: GenerationRef;
  logger: Logger;
  clock?: () => number;
  /** Delay before attempt n+1 after n failures (n ≥ 1); default from `delivery.*` with ±20 % jitter. */
  backoffMs?: (failures: number) => number;
}

export interface Outbox {
  notify(): void;
  start(): void;
  /** Stops starting sends; waits for those in flight up to `deadlineMs`, then aborts them (they are sent again on the next start). */
  stop(deadlineMs: number): Promise<void>;
  /** Resolves when nothing is due or in flight (tests). */
  idle(): Promise<void>;
}

/** Exponential backoff from `delivery.initialBackoffMs`, capped at `delivery.maxBackoffMs`, with ±20 % jitter. */
export function backoffFor(failures: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(initialMs * 2 ** (failures - 1), maxMs);
  return Math.max(1, Math.round(base * (0.8 + random() * 0.4)));
}

const routeKey = (d: Delivery) => `${d.channel}\u0000${d.to ?? ''}`;

export function createOutbox(deps: OutboxDeps): Outbox {
  const { store, generations, logger } = deps;
  const clock = deps.clock ?? Date.now;
  const backoff =
    deps.backoffMs ??
    ((n: number) => {
      const d = generations.current.config.delivery;
      return backoffFor(n, d.initialBackoffMs, d.maxBackoffMs);
    });
  const inFlight = new Map<string, Promise<void>>();
  const busyRoutes = new Set<string>();
  const shutdown = new AbortController();
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
      let now: number;
      do {
        pumpAgain = false;
        now = clock();
        const due = await store.dueDeliveries(now, BATCH);
        for (const d of due) {
          const route = routeKey(d);
          if (inFlight.has(d.id) || busyRoutes.has(route)) continue;
          busyRoutes.add(route);
          const p = attempt(d).finally(() => {
            inFlight.delete(d.id);
            busyRoutes.delete(route);
            // the route is free again, and what waited behind this send may be due
            void pump();
          });
          inFlight.set(d.id, p);
        }
      } while (pumpAgain && !stopped);
      // entries due by `now` are in flight or wait for their route, and a finished send pumps again;
      // the same `now` as the due query, so an entry due in between is not missed by both
      const next = await store.nextDeliveryAt(now);
      if (next !== undefined) schedule(next);
    } catch (err) {
      logger.error({ err }, 'outbox pump failed');
      schedule(clock() + 1000);
    } finally {
      pumping = false;
      // a wake-up that arrived after the last look at the due entries must not be lost
      if (pumpAgain && !stopped) void pump();
      else void settle();
    }
  }

  /** Holds its generation while it runs: a reload does not dispose what it is using. */
  function attempt(d: Delivery): Promise<void> {
    return generations.use((gen) => attemptOn(gen, d));
  }

  async function attemptOn(gen: Generation, d: Delivery): Promise<void> {
    const entry = gen.channels.get(d.channel);
    const attempts = d.attempts + 1;
    const log = logger.child({ runId: d.runId, channel: d.channel, attempt: attempts });
    if (!entry) {
      await store.recordDelivery({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'failed', error: `channel "${d.channel}" is not configured` });
      log.warn('delivery failed: channel not configured');
      return;
    }
    const chunks = chunkText(d.text, entry.channel.limits?.maxTextLength);
    let sent = Math.min(d.sentParts, chunks.length);
    try {
      for (; sent < chunks.length; sent++) {
        shutdown.signal.throwIfAborted();
        await entry.channel.send({
          runId: d.runId,
          to: d.to,
          text: chunks[sent]!,
          deliveryId: d.id,
          part: sent + 1,
          parts: chunks.length,
          signal: shutdown.signal,
        });
      }
      await store.recordDelivery({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'sent', route: { channel: d.channel, to: d.to }, sentParts: sent });
      log.info({ parts: chunks.length }, 'delivered');
    } catch (err) {
      if (shutdown.signal.aborted) {
        // not the channel's fault: keep the attempt count, remember the progress, send the rest next start
        if (sent > d.sentParts)
          await store.recordDelivery({ id: d.id, runId: d.runId, attempts: d.attempts, at: clock(), status: 'pending', nextAttemptAt: clock(), error: d.lastError, sentParts: sent });
        log.info('delivery interrupted by shutdown; left pending');
        return;
      }
      const retryable = err instanceof ChannelError ? err.retryable : true;
      const reason = oneLine(err instanceof Error ? err.message : String(err), 300);
      if (retryable && attempts < MAX_ATTEMPTS) {
        const hinted = err instanceof ChannelError ? Math.min(err.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS) : 0;
        const delay = Math.max(backoff(attempts), hinted);
        const next = clock() + delay;
        await store.recordDelivery({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'pending', nextAttemptAt: next, error: reason, sentParts: sent });
        log.warn({ reason, retryInMs: delay }, 'delivery failed; will retry');
        schedule(next);
      } else {
        await store.recordDelivery({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'failed', error: reason, sentParts: sent });
        log.error({ reason, retryable }, 'delivery failed');
      }
    }
  }

  return {
    notify: () => void pump(),
    start: () => void pump(),
    async stop(deadlineMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (!inFlight.size) return;
      const all = Promise.allSettled([...inFlight.values()]);
      let t: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([all.then(() => false), new Promise<boolean>((r) => (t = setTimeout(() => r(true), deadlineMs)))]);
      clearTimeout(t);
      if (timedOut) {
        shutdown.abort(new Error('service shutting down'));
        await all;
      }
    },
    idle() {
      return new Promise((r) => {
        idleWaiters.push(r);
        void settle();
      });
    },
  };
}
