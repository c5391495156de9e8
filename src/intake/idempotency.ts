/**
 * Idempotency keys (docs/http.md, "Idempotency"): the first of `Idempotency-Key`, `webhook-id`,
 * `X-GitHub-Delivery`. A repeat within the TTL gets the first answer with
 * `"duplicate": true` and starts nothing. Keys are scoped by hook name, and
 * only successful answers are remembered: a refused request did nothing, so
 * repeating it is safe. Concurrent repeats wait for the first to finish; on a
 * store shared by several instances, the store refuses the second write of a key.
 */
import { createHash } from 'node:crypto';
import type { IdempotencyRecords } from '../store/roles.ts';
import { errors } from '../errors.ts';
import { IdempotencyTakenError } from '../store/errors.ts';
import { RecycledMap } from '../util/recycled.ts';
import type { StoreWait } from './store-wait.ts';

export const IDEMPOTENCY_HEADERS = ['idempotency-key', 'webhook-id', 'x-github-delivery'] as const;
export const MAX_KEY_LENGTH = 256;

export function idempotencyKey(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  for (const h of IDEMPOTENCY_HEADERS) {
    const v = headers[h];
    if (v === undefined) continue;
    const key = (Array.isArray(v) ? v[0] : v)?.trim();
    if (!key) continue;
    if (key.length > MAX_KEY_LENGTH) throw errors.invalidPayload(h, `must be at most ${MAX_KEY_LENGTH} characters`);
    return key;
  }
  return undefined;
}

/** A key a mapping rendered from the payload, at most MAX_KEY_LENGTH characters: a longer one is named by its hash. */
export function boundedKey(key: string): string {
  return key.length <= MAX_KEY_LENGTH ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** The key's scope: a key is one hook's (the same key on two hooks names two requests). */
export function idempotencyScope(hook: string, key: string): string {
  return `${hook}\n${key}`;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export class IdempotencyGuard {
  private readonly inFlight = new RecycledMap<string, Promise<Answer | undefined>>();

  private readonly records: IdempotencyRecords;
  constructor(records: IdempotencyRecords) {
    this.records = records;
  }

  /** The stored answer to `scoped`, while it has not expired. */
  private async firstAnswer(scoped: string, now: number, wait: StoreWait | undefined): Promise<Answer | undefined> {
    const rec = await (wait ? wait.within(() => this.records.getIdempotency(scoped, now)) : this.records.getIdempotency(scoped, now));
    return rec ? { status: rec.status, body: JSON.parse(rec.body) as Record<string, unknown> } : undefined;
  }

  /**
   * Runs `work` unless `scoped` was already answered (or is being answered):
   * then returns the first answer marked as a duplicate. The in-flight entry is
   * registered before any await, so two concurrent requests cannot both run. Its reads wait on the store
   * within the request's `wait`.
   */
  async once(scoped: string, now: number, work: () => Promise<Answer>, wait?: StoreWait): Promise<Answer> {
    for (;;) {
      const pending = this.inFlight.get(scoped);
      if (pending) {
        const first = await pending;
        if (first) return duplicate(first);
        continue; // the first failed and did nothing: try again as a fresh request
      }
      let settle!: (a: Answer | undefined) => void;
      const mine = new Promise<Answer | undefined>((r) => (settle = r));
      this.inFlight.set(scoped, mine);
      try {
        const first = await this.firstAnswer(scoped, now, wait);
        if (first) {
          settle(first);
          return duplicate(first);
        }
        const answer = await work();
        settle(answer);
        return answer;
      } catch (err) {
        // another instance sharing the store answered the same key meanwhile: this one stored nothing
        const first = err instanceof IdempotencyTakenError ? await this.firstAnswer(scoped, now, wait) : undefined;
        settle(first);
        if (first) return duplicate(first);
        throw err;
      } finally {
        if (this.inFlight.get(scoped) === mine) this.inFlight.delete(scoped);
      }
    }
  }
}

function duplicate(a: Answer): Answer {
  return { status: a.status, body: { ...a.body, duplicate: true } };
}
