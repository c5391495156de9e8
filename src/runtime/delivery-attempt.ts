/**
 * One attempt at a delivery: the reply rendered into the channel's parts, the parts not yet accepted
 * sent in order, and what to record. The outbox (outbox.ts) decides when attempts happen.
 *
 * An attempt resolves once the channel has answered, with the commit of its record still under way:
 * the route's next entry need not wait for it (writes commit in order, and a crash before it means
 * the entry is sent again, as after any crash between send and record).
 *
 * The reply's parts are fixed at the first attempt. A reply of several parts has them stored before
 * the first is sent, and the count of parts sent stored after each one before the next goes, so a
 * retry or a restart resumes at the first unsent part. A reply of one part is not written before its
 * send (the common case costs no extra write): until that part is accepted nothing has been posted,
 * so its outcome's record carries it.
 */
import type { Logger } from 'pino';
import type { Generation } from '../generation/types.ts';
import type { Delivery, DeliveryAttempt } from '../store/types.ts';
import { ChannelError, type Channel } from '../plugins/define.ts';
import { oneLine } from './agent-call.ts';
import { chunkText } from './chunk.ts';

export const MAX_ATTEMPTS = 5;
/** A Retry-After longer than this is treated as this long. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

/** When to try again, with the delivery as it then is; undefined when it is done with (sent, failed, skipped). */
export type Retry = { delivery: Delivery; at: number } | undefined;
/** What one attempt did: when to try again (if at all), and the commit of its record. */
export interface AttemptOutcome {
  retry: Retry;
  recorded: Promise<void>;
}

export interface AttemptContext {
  clock: () => number;
  /** Delay before attempt n+1 after n failures. */
  backoff: (failures: number) => number;
  /** Aborted when the service stops: the attempt ends without counting. */
  signal: AbortSignal;
  /** Records an attempt or progress; resolves once committed. */
  record: (a: DeliveryAttempt, log: Logger) => Promise<void>;
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

/** One attempt at `d` with the generation `gen`; see the top of this file. */
export async function attemptDelivery(gen: Generation, d: Delivery, log: Logger, ctx: AttemptContext): Promise<AttemptOutcome> {
  const entry = gen.channels.get(d.channel);
  const attempts = d.attempts + 1;
  const fail = (error: string, more: Partial<DeliveryAttempt> = {}) =>
    ctx.record({ id: d.id, runId: d.runId, attempts, at: ctx.clock(), status: 'failed', error, ...more }, log);
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
    return {
      retry: undefined,
      recorded: ctx.record(
        { id: d.id, runId: d.runId, attempts: d.attempts, at: ctx.clock(), status: 'skipped', error: 'empty reply' },
        log,
      ),
    };
  }
  return new PartSender(gen, d, log, ctx, entry.channel, parts).run();
}

/** Sends the parts of one attempt not yet accepted, and says what the attempt did. */
class PartSender {
  private readonly gen: Generation;
  private readonly d: Delivery;
  private readonly log: Logger;
  private readonly ctx: AttemptContext;
  private readonly channel: Channel;
  private readonly parts: string[];
  private readonly attempts: number;
  /** Parts rendered by this attempt and not stored yet (a reply of one part). */
  private readonly unstored: string[] | undefined;
  /** Parts the channel has accepted. */
  private sent: number;

  constructor(gen: Generation, d: Delivery, log: Logger, ctx: AttemptContext, channel: Channel, parts: string[]) {
    this.gen = gen;
    this.d = d;
    this.log = log;
    this.ctx = ctx;
    this.channel = channel;
    this.parts = parts;
    this.attempts = d.attempts + 1;
    this.unstored = !d.parts && parts.length === 1 ? parts : undefined;
    this.sent = Math.min(d.sentParts, parts.length);
  }

  async run(): Promise<AttemptOutcome> {
    const { d, ctx, parts } = this;
    try {
      await this.sendAll();
      const route = d.mainSession ? { channel: d.channel, to: d.to } : undefined;
      const recorded = ctx.record(
        {
          id: d.id,
          runId: d.runId,
          attempts: this.attempts,
          at: ctx.clock(),
          status: 'sent',
          sentParts: this.sent,
          ...(route ? { route } : {}),
        },
        this.log,
      );
      this.log.info({ parts: parts.length }, 'delivered');
      return { retry: undefined, recorded };
    } catch (err) {
      if (err instanceof Bookkeeping) throw err.cause;
      if (ctx.signal.aborted) {
        // not the channel's fault: the attempt is not counted, the parts sent are stored already; the rest goes next start,
        // with the part it was sending kept (it may have been posted: the next start sends the same text)
        this.log.info('delivery interrupted by shutdown; left pending');
        return {
          retry: undefined,
          recorded: this.unstored ? this.progress({ parts: this.unstored }).catch(() => undefined) : Promise.resolve(),
        };
      }
      return this.failed(err);
    }
  }

  /** Stores progress within this attempt; the attempt is counted by its outcome. */
  private progress(more: Partial<DeliveryAttempt>): Promise<void> {
    const { d, ctx } = this;
    return ctx
      .record(
        {
          id: d.id,
          runId: d.runId,
          attempts: d.attempts,
          at: ctx.clock(),
          status: 'pending',
          nextAttemptAt: ctx.clock(),
          error: d.lastError,
          ...more,
        },
        this.log,
      )
      .catch((err: unknown) => {
        throw new Bookkeeping('recording progress failed', { cause: err });
      });
  }

  private async sendAll(): Promise<void> {
    const { d, parts, ctx } = this;
    if (!d.parts && !this.unstored) await this.progress({ parts });
    for (; this.sent < parts.length; this.sent++) {
      ctx.signal.throwIfAborted();
      if (this.sent > d.sentParts) await this.progress({ sentParts: this.sent });
      ctx.signal.throwIfAborted();
      await this.channel.send({
        runId: d.runId,
        to: d.to,
        text: parts[this.sent]!,
        deliveryId: d.id,
        part: this.sent + 1,
        parts: parts.length,
        signal: ctx.signal,
        attempt: this.attempts,
      });
    }
  }

  /** The channel refused or failed: a retry while the error allows one and attempts are left, else failed. */
  private failed(err: unknown): AttemptOutcome {
    const { d, ctx, parts, sent, attempts } = this;
    const e = err instanceof ChannelError ? err : undefined;
    const retryable = e ? e.retryable : true;
    const ambiguous = e?.ambiguous === true;
    let reason = oneLine(scrub(err instanceof Error ? err.message : String(err), this.gen.config.channels[d.channel], parts[sent]), 300);
    // an ambiguous failure may have posted the part: one retry of it at most, since each may post it again
    const again = ambiguous && d.ambiguousPart === sent;
    const kept: Partial<DeliveryAttempt> = {
      sentParts: sent,
      ...(this.unstored ? { parts: this.unstored } : {}),
      ...(ambiguous ? { ambiguousPart: sent } : {}),
    };
    if (retryable && !again && attempts < MAX_ATTEMPTS) {
      const hinted = e ? Math.min(e.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS) : 0;
      const delay = Math.max(ctx.backoff(attempts), hinted);
      const next = ctx.clock() + delay;
      const recorded = ctx.record(
        { id: d.id, runId: d.runId, attempts, at: ctx.clock(), status: 'pending', nextAttemptAt: next, error: reason, ...kept },
        this.log,
      );
      this.log.warn({ reason, retryInMs: delay, ambiguous }, 'delivery failed; will retry');
      const retried: Delivery = {
        ...d,
        attempts,
        nextAttemptAt: next,
        lastError: reason,
        sentParts: sent,
        parts,
        ambiguousPart: ambiguous ? sent : d.ambiguousPart,
      };
      return { retry: { delivery: retried, at: next }, recorded };
    }
    if (ambiguous)
      reason = `${reason}; ${parts.length > 1 ? `part ${sent + 1} of ${parts.length}` : 'the reply'} may or may not have been delivered`;
    const recorded = ctx.record(
      { id: d.id, runId: d.runId, attempts, at: ctx.clock(), status: 'failed', error: reason, ...kept },
      this.log,
    );
    this.log.error({ reason, retryable, ambiguous }, 'delivery failed');
    return { retry: undefined, recorded };
  }
}
