/**
 * Refused hook requests in the request log (docs/http.md, "Kept requests"): so an operator can see why a
 * sender fails, a refusal is kept with its status and code, its headers without credentials and its
 * size — its body only when its credential had passed (an unauthenticated sender's bytes are not
 * kept). Kept after the answer, bounded: at most `REFUSALS_PER_MINUTE` a minute per process, the rest
 * counted in one log line a minute, so a flood of 401s cannot fill the disk.
 */
import type { Logger } from 'pino';
import type { HookError } from '../errors.ts';
import type { Generation } from '../generation/types.ts';
import type { Dispatcher, KeepRequest } from './dispatch.ts';
import { keptHeaders } from './keep.ts';

export const REFUSALS_PER_MINUTE = 60;
const MINUTE = 60_000;

/** Refusals not worth a row: the method (no hook is involved) and the store's own outage or a stop (it cannot write). */
const NOT_KEPT = new Set(['METHOD_NOT_ALLOWED', 'STORAGE_UNAVAILABLE', 'SHUTTING_DOWN', 'NOT_FOUND']);

/** What the listener knows of a refused request when it keeps it. */
export interface Refused {
  hook: string;
  mappingId: string | null;
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body, when it was read and the request's credential passed; else undefined. */
  body: Buffer | undefined;
  /** The size of the body as received (read or declared), 0 when unknown. */
  bodyBytes: number;
  receivedAt: number;
}

export class RefusalLog {
  private readonly dispatcher: Dispatcher;
  private readonly logger: Logger;
  private windowStart = -Infinity;
  private kept = 0;
  private dropped = 0;

  constructor(dispatcher: Dispatcher, logger: Logger) {
    this.dispatcher = dispatcher;
    this.logger = logger;
  }

  /** Keeps `r` refused with `e` (after the answer was sent: a failure to keep it is logged, never answered). */
  keep(gen: Generation, r: Refused, e: HookError): void {
    if (gen.config.retention.requestsDays <= 0 || NOT_KEPT.has(e.code) || e.status < 400) return;
    if (!this.take(r.receivedAt)) return;
    const keep: KeepRequest = {
      hook: r.hook,
      mappingId: r.mappingId,
      url: r.url,
      headers: keptHeaders(r.headers, gen.credentialHeaders),
      body: r.body ?? new Uint8Array(0),
      bodyBytes: r.body?.byteLength ?? r.bodyBytes,
      receivedAt: r.receivedAt,
      replayOf: null,
    };
    this.dispatcher.keepRefused(keep, e.status, e.code).catch((err: unknown) => {
      this.logger.debug({ err: { message: (err as Error).message }, code: e.code }, 'a refused request was not kept');
    });
  }

  /** One more refusal this minute, while the minute's budget lasts; the dropped are logged when it turns. */
  private take(now: number): boolean {
    if (now - this.windowStart >= MINUTE) {
      if (this.dropped)
        this.logger.warn({ notKept: this.dropped, perMinute: REFUSALS_PER_MINUTE }, 'refused requests over the budget were not kept');
      this.windowStart = now;
      this.kept = 0;
      this.dropped = 0;
    }
    if (this.kept < REFUSALS_PER_MINUTE) {
      this.kept++;
      return true;
    }
    this.dropped++;
    return false;
  }
}
