/**
 * The delivery outbox. Entries are written in the same transaction that
 * finishes a run, so a reply is never lost between "run done" and "sent".
 * A failed send is retried with exponential backoff (`delivery.*` config,
 * honouring a channel's Retry-After), at most `MAX_ATTEMPTS` times; the
 * outcome is recorded on the run.
 *
 * Sends to one route (channel + recipient) go one at a time, so the parts
 * and replies a chat receives arrive in order. A reply split into parts
 * remembers how many were accepted, and a retry resumes after them.
 *
 * A channel's error says how to go on: rate limited (retry after its hint),
 * transient (retry with backoff), permanent (fail now with its message as the
 * reason) or ambiguous (it may have been posted: that part is retried once).
 */
import type { Logger } from 'pino';
import type { Generation, GenerationRef } from './generation.ts';
import type { Delivery, DeliveryAttempt, NewDelivery, Store } from '../store/types.ts';
import { ChannelError, type Channel } from '../plugins/define.ts';
import { oneLine } from './agent-call.ts';
import { chunkText } from './chunk.ts';
import { RecycledMap, RecycledSet } from '../util/recycled.ts';
import { untilStored } from './until-stored.ts';
import { stopWithin } from '../util/deadline.ts';

export const MAX_ATTEMPTS = 5;
/** A Retry-After longer than this is treated as this long. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

export interface OutboxDeps {
  store: Store;
  generations: GenerationRef;
  logger: Logger;
  clock?: () => number;
  /** Delay before attempt n+1 after n failures (n ≥ 1); default from `delivery.*` with ±20 % jitter. */
  backoffMs?: (failures: number) => number;
}

export interface Outbox {
  /**
   * A delivery is waiting. With the entry a run just committed, it is sent
   * without reading the store; without one, the store is scanned for due entries.
   */
  notify(entry?: NewDelivery): void;
  /** Sends what the store holds: entries left pending by an earlier process (recovery). */
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

/** A store failure while recording progress: not the channel's, so not a failed send. */
class Bookkeeping extends Error {}

/**
 * The reply as the channel's messages: its own rendering, else the text split at its limit.
 * Empty when the reply renders to nothing (only a link definition, say); undefined when the
 * channel's renderer fails or gives something other than texts.
 */
function renderParts(channel: Channel, text: string): string[] | undefined {
  try {
    const parts = channel.render ? channel.render(text) : chunkText(text, channel.limits?.maxTextLength);
    return Array.isArray(parts) && parts.every((p) => typeof p === 'string') ? parts : undefined;
  } catch {
    // the renderer's error may quote the reply: it is not logged
    return undefined;
  }
}

/** Config keys whose values are credentials (`botToken`, `appPassword`, `secret`, `apiKey`, …). */
const SECRET_KEY = /token|secret|password|key|auth|credential/i;
/** Shorter values are not searched for (a stray match would blank unrelated words). */
const SHORTEST_SECRET = 8;

/**
 * A channel's error message without its credentials (a token in a URL it
 * quotes) or the part it was sending: the channel should leave them out, and
 * this makes sure, since the message becomes the delivery's reason and is logged.
 */
function scrub(message: string, config: unknown, part: string | undefined): string {
  let out = message;
  for (const s of secrets(config)) if (s.length >= SHORTEST_SECRET) out = out.replaceAll(s, '[redacted]');
  if (part && part.length >= SHORTEST_SECRET) out = out.replaceAll(part, '[reply text]');
  return out;
}

/** The string values under credential-like keys, at any depth. */
function secrets(v: unknown, secretKey = false): string[] {
  if (typeof v === 'string') return secretKey ? [v] : [];
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => secrets(x, secretKey || SECRET_KEY.test(k)));
  return [];
}

const routeKey = (d: Pick<Delivery, 'channel' | 'to'>) => `${d.channel}\u0000${d.to ?? ''}`;
const SCAN_ALL = Number.MAX_SAFE_INTEGER;
const SCAN_LIMIT = 100_000;

/**
 * Scheduling is in memory and costs the same whatever the backlog: entries
 * wait in a queue per route, the head of each idle route is sent, a retry
 * waits on its own timer. The store is read only when an entry is not known
 * in memory (at start, or a `notify()` without an entry).
 */
export function createOutbox(deps: OutboxDeps): Outbox {
  const { store, generations, logger } = deps;
  const clock = deps.clock ?? Date.now;
  const backoff =
    deps.backoffMs ??
    ((n: number) => {
      const d = generations.current.config.delivery;
      return backoffFor(n, d.initialBackoffMs, d.maxBackoffMs);
    });
  /** Every entry this process is handling: queued, in flight or waiting to retry. */
  const known = new RecycledSet<string>();
  const queues = new RecycledMap<string, Delivery[]>();
  const inFlight = new RecycledMap<string, Promise<void>>();
  const retries = new RecycledMap<string, NodeJS.Timeout>();
  const shutdown = new AbortController();
  let stopped = false;
  let scanning: Promise<void> | undefined;
  let scanAgain = false;
  let idleWaiters: (() => void)[] = [];

  /** When each entry waiting to retry is due. */
  const retryDue = new RecycledMap<string, number>();
  /**
   * Records waiting for the store to write again (a full disk): while any waits, no send starts, so
   * the attempts on disk keep up with the sends and a restart cannot send past the attempt cap.
   */
  let waitingForStore = 0;

  const settle = () => {
    if (!idleWaiters.length || inFlight.size || scanning || [...queues.values()].some((q) => q.length)) return;
    // a retry due within the next moment counts as work still to do
    for (const d of retryDue.values()) if (d <= clock() + 50) return;
    const w = idleWaiters;
    idleWaiters = [];
    for (const r of w) r();
  };

  function enqueue(d: Delivery): void {
    if (stopped || known.has(d.id)) return;
    known.add(d.id);
    const key = routeKey(d);
    let q = queues.get(key);
    if (!q) queues.set(key, (q = []));
    q.push(d);
    if (q.length === 1) sendHead(key);
  }

  /** Sends the head of a route's queue; the next one goes when it is done. */
  function sendHead(key: string): void {
    const q = queues.get(key);
    const d = q?.[0];
    if (!q || !d || stopped || waitingForStore || inFlight.has(d.id)) return;
    const p = attempt(d).then(
      ({ retry, recorded }) => {
        // the route moves on now; the entry counts as in flight until its record is committed
        inFlight.set(
          d.id,
          recorded.then(
            () => {
              inFlight.delete(d.id);
              if (!retry) known.delete(d.id);
              // a retry that came due while this record was committing waits at the head of its route
              sendHead(key);
              settle();
            },
            (err) => {
              // only a stop gives up on a storage failure; any other error here is a bug
              logger.error({ err, runId: d.runId }, 'recording a delivery failed; it is sent again after a restart');
              inFlight.delete(d.id);
              sendHead(key);
              settle();
            },
          ),
        );
        q.shift();
        if (!q.length) queues.delete(key);
        if (retry) waitToRetry(retry.delivery, retry.at);
        sendHead(key);
      },
      (err) => {
        // a store failure while recording: leave it to the next start, keep the route moving
        logger.error({ err, runId: d.runId }, 'delivery bookkeeping failed');
        inFlight.delete(d.id);
        q.shift();
        if (!q.length) queues.delete(key);
        sendHead(key);
        settle();
      },
    );
    inFlight.set(d.id, p);
  }

  function waitToRetry(d: Delivery, at: number): void {
    known.add(d.id);
    retryDue.set(d.id, at);
    const t = setTimeout(() => {
      retries.delete(d.id);
      retryDue.delete(d.id);
      known.delete(d.id);
      enqueue(d);
    }, Math.max(0, at - clock()));
    retries.set(d.id, t);
  }

  /** Reads the store for pending entries this process does not know yet. */
  function scan(): Promise<void> {
    if (scanning) {
      scanAgain = true;
      return scanning;
    }
    scanning = (async () => {
      do {
        scanAgain = false;
        const due = await untilStored(() => store.dueDeliveries(SCAN_ALL, SCAN_LIMIT), { signal: shutdown.signal, logger, what: 'read the outbox' });
        const now = clock();
        for (const d of due) {
          if (known.has(d.id)) continue;
          if (d.nextAttemptAt <= now) enqueue(d);
          else waitToRetry(d, d.nextAttemptAt);
        }
      } while (scanAgain && !stopped);
    })()
      .catch((err) => logger.error({ err }, 'outbox scan failed'))
      .finally(() => {
        scanning = undefined;
        settle();
      });
    return scanning;
  }

  /** Records an attempt, again and again while the store cannot write, until it can or the outbox stops. */
  function record(a: DeliveryAttempt, log: Logger): Promise<void> {
    return untilStored(() => store.recordDelivery(a), {
      signal: shutdown.signal,
      logger: log,
      what: 'record a delivery attempt',
      onWait: () => waitingForStore++,
      onResume: () => {
        // the sends held meanwhile go now, each route's head first
        if (--waitingForStore === 0) for (const key of [...queues.keys()]) sendHead(key);
      },
    });
  }

  type Retry = { delivery: Delivery; at: number } | undefined;
  /** What one attempt did: when to try again (if at all), and the commit of its record. */
  type Outcome = { retry: Retry; recorded: Promise<void> };

  /** Holds its generation while it runs: a reload does not dispose what it is using. */
  function attempt(d: Delivery): Promise<Outcome> {
    return generations.use((gen) => attemptOn(gen, d));
  }

  /**
   * One attempt. Resolves once the channel has answered, with the commit of
   * the record still under way: the route's next entry need not wait for it
   * (writes commit in order, and a crash before it means the entry is sent
   * again, as after any crash between send and record).
   *
   * The reply's parts are fixed at the first attempt. A reply of several parts
   * has them stored before the first is sent, and the count of parts sent
   * stored after each one before the next goes, so a retry or a restart
   * resumes at the first unsent part. A reply of one part is not written
   * before its send (the common case costs no extra write): until that part is
   * accepted nothing has been posted, so its outcome's record carries it.
   */
  async function attemptOn(gen: Generation, d: Delivery): Promise<Outcome> {
    const entry = gen.channels.get(d.channel);
    const attempts = d.attempts + 1;
    const log = logger.child({ runId: d.runId, channel: d.channel, attempt: attempts });
    const fail = (error: string, more: Partial<DeliveryAttempt> = {}) =>
      record({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'failed', error, ...more }, log);
    if (!entry) {
      const recorded = fail(`channel "${d.channel}" is not configured`);
      log.warn('delivery failed: channel not configured');
      return { retry: undefined, recorded };
    }
    const parts = d.parts ?? renderParts(entry.channel, d.text);
    if (!parts) {
      log.error('delivery failed: the channel could not render the reply');
      return { retry: undefined, recorded: fail(`channel "${d.channel}" could not render the reply`) };
    }
    if (parts.length === 0) {
      // nothing to send is not a send: the delivery says so instead of claiming the reply arrived
      log.info('delivery skipped: the reply renders to nothing');
      return { retry: undefined, recorded: record({ id: d.id, runId: d.runId, attempts: d.attempts, at: clock(), status: 'skipped', error: 'empty reply' }, log) };
    }
    /** Parts rendered by this attempt and not stored yet (a reply of one part). */
    const unstored = !d.parts && parts.length === 1 ? parts : undefined;
    let sent = Math.min(d.sentParts, parts.length);
    /** Stores progress within this attempt; the attempt is counted by its outcome. */
    const progress = (more: Partial<DeliveryAttempt>) =>
      record({ id: d.id, runId: d.runId, attempts: d.attempts, at: clock(), status: 'pending', nextAttemptAt: clock(), error: d.lastError, ...more }, log).catch(
        (err: unknown) => {
          throw new Bookkeeping('recording progress failed', { cause: err });
        },
      );
    try {
      if (!d.parts && !unstored) await progress({ parts });
      for (; sent < parts.length; sent++) {
        shutdown.signal.throwIfAborted();
        if (sent > d.sentParts) await progress({ sentParts: sent });
        shutdown.signal.throwIfAborted();
        await entry.channel.send({
          runId: d.runId,
          to: d.to,
          text: parts[sent]!,
          deliveryId: d.id,
          part: sent + 1,
          parts: parts.length,
          signal: shutdown.signal,
          attempt: attempts,
        });
      }
      const route = d.mainSession ? { channel: d.channel, to: d.to } : undefined;
      const recorded = record({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'sent', sentParts: sent, ...(route ? { route } : {}) }, log);
      log.info({ parts: parts.length }, 'delivered');
      return { retry: undefined, recorded };
    } catch (err) {
      if (err instanceof Bookkeeping) throw err.cause;
      if (shutdown.signal.aborted) {
        // not the channel's fault: the attempt is not counted, the parts sent are stored already; the rest goes next start,
        // with the part it was sending kept (it may have been posted: the next start sends the same text)
        log.info('delivery interrupted by shutdown; left pending');
        return { retry: undefined, recorded: unstored ? progress({ parts: unstored }).catch(() => undefined) : Promise.resolve() };
      }
      const e = err instanceof ChannelError ? err : undefined;
      const retryable = e ? e.retryable : true;
      const ambiguous = e?.ambiguous === true;
      let reason = oneLine(scrub(err instanceof Error ? err.message : String(err), gen.config.channels[d.channel], parts[sent]), 300);
      // an ambiguous failure may have posted the part: one retry of it at most, since each may post it again
      const again = ambiguous && d.ambiguousPart === sent;
      const kept: Partial<DeliveryAttempt> = { sentParts: sent, ...(unstored ? { parts: unstored } : {}), ...(ambiguous ? { ambiguousPart: sent } : {}) };
      if (retryable && !again && attempts < MAX_ATTEMPTS) {
        const hinted = e ? Math.min(e.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS) : 0;
        const delay = Math.max(backoff(attempts), hinted);
        const next = clock() + delay;
        const recorded = record({ id: d.id, runId: d.runId, attempts, at: clock(), status: 'pending', nextAttemptAt: next, error: reason, ...kept }, log);
        log.warn({ reason, retryInMs: delay, ambiguous }, 'delivery failed; will retry');
        const retried: Delivery = { ...d, attempts, nextAttemptAt: next, lastError: reason, sentParts: sent, parts, ambiguousPart: ambiguous ? sent : d.ambiguousPart };
        return { retry: { delivery: retried, at: next }, recorded };
      }
      if (ambiguous) reason = `${reason}; ${parts.length > 1 ? `part ${sent + 1} of ${parts.length}` : 'the reply'} may or may not have been delivered`;
      const recorded = fail(reason, kept);
      log.error({ reason, retryable, ambiguous }, 'delivery failed');
      return { retry: undefined, recorded };
    }
  }

  return {
    notify(entry) {
      if (!entry) return void scan();
      const at = entry.createdAt;
      enqueue({
        ...entry,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: at,
        lastError: null,
        createdAt: at,
        updatedAt: at,
        parts: null,
        sentParts: 0,
        ambiguousPart: null,
        mainSession: entry.mainSession === true,
      });
    },
    start: () => void scan(),
    async stop(deadlineMs) {
      stopped = true;
      for (const t of retries.values()) clearTimeout(t);
      retries.clear();
      if (!inFlight.size) return;
      await stopWithin(Promise.allSettled([...inFlight.values()]), deadlineMs, () => shutdown.abort(new Error('service shutting down')));
    },
    idle() {
      return new Promise((r) => {
        idleWaiters.push(r);
        settle();
      });
    },
  };
}
