/**
 * The intake pipeline: the one way a hook request becomes stored work (docs/development.md, "The intake
 * pipeline"). Its adapters — the `/hooks` listener, a replay of a kept request, a dry run (`try`, the
 * console's tester) — build a `HookRequest` and call its steps; none stores anything another way.
 *
 *   credential → idempotency (a repeat gets the first answer) → event → rate limit → resolve → keep → dispatch
 *
 * The credential step reads nothing stored, and everything after it runs once per idempotency key.
 * The event step names the request's event type when its mapping says how (a preset does), and skips
 * one its `events` do not take: answered 204 and kept with the reason.
 */
import type { Logger } from 'pino';
import { errors } from '../errors.ts';
import type { Generation } from '../generation/types.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import { authorize } from './credential.ts';
import type { Dispatcher } from './dispatch.ts';
import { boundedKey, type IdempotencyGuard, idempotencyKey, idempotencyScope } from './idempotency.ts';
import { keptRequest } from './keep.ts';
import { renderOverRequest } from '../mapping/run.ts';
import { eventStep } from './event.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { HookRequest } from './request.ts';
import { resolve } from './resolve.ts';
import { StoreWait } from './store-wait.ts';

export interface IntakeDeps {
  dispatcher: Dispatcher;
  idempotency: IdempotencyGuard;
  /** Counts requests of mappings with `rateLimit` (shared by the instances of a shared store). */
  rateLimiter: RateLimiter;
  logger: Logger;
}

/** What the request is answered: its status and body, and the id of the kept request when one was kept. */
export interface IntakeAnswer {
  status: number;
  body: Record<string, unknown>;
  requestId?: string;
}

export class Intake {
  private readonly deps: IntakeDeps;

  constructor(deps: IntakeDeps) {
    this.deps = deps;
  }

  /** The credential step: the owning mapping (undefined for `/wake` and `/agent`), or 401 / 404 (credential.ts). */
  authorize(gen: Generation, req: HookRequest): Pipeline | undefined {
    return authorize(gen, req, this.deps.logger);
  }

  /**
   * Everything after the credential: once per idempotency key, the mapping's rate limit, resolve, and
   * the actions stored with the request kept beside them in one commit. `idempotent: false` (a replay)
   * does not apply the request's idempotency key, or it would get the first answer back. All of its
   * store calls together wait at most `storage.timeoutSeconds` (store-wait.ts).
   */
  accept(gen: Generation, req: HookRequest, owner: Pipeline | undefined, idempotent = true): Promise<IntakeAnswer> {
    const wait = new StoreWait(gen.config.storage.timeoutSeconds);
    const key = idempotent ? requestKey(gen, req, owner) : undefined;
    if (key === undefined) return this.store(gen, req, owner, undefined, wait);
    const scoped = idempotencyScope(req.name, key);
    return this.deps.idempotency.once(scoped, req.receivedAt, () => this.store(gen, req, owner, scoped, wait), wait);
  }

  private async store(
    gen: Generation,
    req: HookRequest,
    owner: Pipeline | undefined,
    scoped: string | undefined,
    wait: StoreWait,
  ): Promise<IntakeAnswer> {
    const { dispatcher } = this.deps;
    const hc = gen.config.hooks;
    const skipped = owner?.event ? eventStep(gen, req, owner) : undefined;
    if (skipped) return this.skip(gen, req, owner, skipped, wait);
    if (owner?.rateLimit) await this.rateLimit(owner, owner.rateLimit, req.receivedAt, wait);
    const resolution = await resolve(gen, req, owner, this.deps.logger);
    if (resolution.kind === 'skip') return this.skip(gen, req, owner, resolution.reason, wait);
    const keep = keptRequest(gen, req, owner);
    return wait.within((deadline) =>
      dispatcher.dispatch(resolution.actions, {
        agentStatus: hc.agentStatus,
        maxQueuedRuns: hc.maxQueuedRuns,
        deadline,
        ...(scoped !== undefined ? { idempotency: { key: scoped, ttlSeconds: hc.idempotencyTtlSeconds } } : {}),
        ...(keep ? { keep } : {}),
      }),
    );
  }

  /** A request that runs nothing: answered 204, kept with the reason when the request log is on. */
  private async skip(
    gen: Generation,
    req: HookRequest,
    owner: Pipeline | undefined,
    reason: string,
    wait: StoreWait,
  ): Promise<IntakeAnswer> {
    const keep = keptRequest(gen, req, owner);
    if (!keep) return { status: 204, body: {} };
    return { status: 204, body: {}, requestId: await wait.within(() => this.deps.dispatcher.keepSkipped(keep, reason)) };
  }

  /** `429 RATE_LIMITED` past the mapping's `rateLimit` (docs/mappings.md). */
  private async rateLimit(p: Pipeline, limit: { max: number; perSeconds: number }, now: number, wait: StoreWait): Promise<void> {
    const retry = await wait.within(() => this.deps.rateLimiter.take(p.id, limit, now));
    if (retry !== undefined) throw errors.rateLimited(retry, `hook "${p.id}" takes at most ${limit.max} requests per ${limit.perSeconds}s`);
  }
}

/**
 * The request's idempotency key: the sender's delivery id as its mapping names it (`idempotencyKey`, a
 * preset's), else the first of the idempotency headers (idempotency.ts).
 */
function requestKey(gen: Generation, req: HookRequest, owner: Pipeline | undefined): string | undefined {
  if (owner?.idempotencyKey) {
    const key = renderOverRequest(owner.idempotencyKey, req, gen.credentialHeaders).trim();
    if (key) return boundedKey(key);
  }
  return idempotencyKey(req.headers);
}
