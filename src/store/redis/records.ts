/**
 * The Redis driver's records (`Records`): hashes, lists and sorted sets under the prefix
 * (docs/redis.md), read with plain commands and written by the Lua scripts (lua/records/,
 * lua/outbox/, lua/idempotency/, lua/retention/), each atomic on the server.
 */
import type { Redis } from 'ioredis';
import { uuidv7 } from '../../util/uuid7.ts';
import type { Records } from '../roles.ts';
import type {
  AcceptBatch,
  Accepted,
  Delivery,
  DeliveryAttempt,
  EventStatus,
  IdempotencyRecord,
  ListOptions,
  NewDelivery,
  NewRun,
  PendingBacklog,
  PruneBefore,
  PruneCounts,
  Run,
  RunListOptions,
  RunOutcome,
  RunStatus,
  SessionMessage,
  StoreCounts,
  SystemEvent,
} from '../types.ts';
import { deliveryJson, eventJson, messageJson, pairs, toDelivery, toEvent, toMessage, toRun, type Hash } from './codec.ts';
import { countPrunable } from './prune.ts';
import type { RedisRunQueue } from './queue.ts';
import { requestArgs } from './requests.ts';
import type { Arg, RunScript, ScriptName } from './scripts.ts';

const STATUSES: RunStatus[] = ['queued', 'running', 'ok', 'error', 'timeout'];
const pruneCounts = (r: number[]): PruneCounts => ({ runs: r[0]!, events: r[1]!, messages: r[2]!, deliveries: r[3]!, requests: r[4]! });

export interface RedisRecordsDeps {
  client: Redis;
  run: RunScript;
  prefix: string;
  /** This instance's id (its presence key): the owner of the deliveries and heartbeats it writes. */
  instance: string;
  /** The run queue, whose figures `accept` brings up to date. */
  queue: RedisRunQueue;
}

/** A run by id (a plain read: the store reader uses it too, reader.ts). */
export async function readRun(client: Redis, p: string, id: string): Promise<Run | undefined> {
  const h = await client.hgetall(`${p}r:${id}`);
  return Object.keys(h).length ? toRun(h) : undefined;
}

/** An event by id, as `readRun`. */
export async function readEvent(client: Redis, p: string, id: string): Promise<SystemEvent | undefined> {
  const h = await client.hgetall(`${p}e:${id}`);
  return Object.keys(h).length ? toEvent(h) : undefined;
}

export class RedisRecords implements Records {
  private readonly client: Redis;
  private readonly run: RunScript;
  private readonly p: string;
  private readonly instance: string;
  private readonly queue: RedisRunQueue;

  constructor(deps: RedisRecordsDeps) {
    this.client = deps.client;
    this.run = deps.run;
    this.p = deps.prefix;
    this.instance = deps.instance;
    this.queue = deps.queue;
  }

  private script(name: ScriptName, ...args: Arg[]): Promise<unknown> {
    return this.run(name, [this.p, ...args]);
  }

  async accept(batch: AcceptBatch): Promise<Accepted> {
    const co = batch.coalesce;
    const args: Arg[] = [batch.events.length, batch.runs.length, batch.idempotency ? 1 : 0, batch.request ? 1 : 0, co ? 1 : 0];
    for (const e of batch.events) args.push(e.id, e.source, eventJson(e), e.coalesceKey ?? '');
    for (const r of batch.runs) args.push(r.id, r.sessionKey, JSON.stringify(r));
    const i = batch.idempotency;
    if (i) args.push(i.key, i.status, i.body, i.createdAt, i.expiresAt);
    if (i && co) args.push(co.idempotencyBody ?? i.body);
    // named here: the key of its hash, made before the script so that the script stays deterministic
    const requestId = batch.request ? uuidv7(batch.request.receivedAt) : undefined;
    if (batch.request) args.push(...requestArgs(requestId!, batch.request));
    this.pushCallbacks(args, batch.callbacks);
    // a key stored first by another request fails the script: IdempotencyTakenError (errors.ts)
    const [total, claimed, into] = (await this.script('accept', ...args)) as [unknown, unknown, string | null];
    this.queue.counted(total, claimed);
    const accepted: Accepted = requestId === undefined ? {} : { requestId };
    if (into) accepted.coalescedInto = into;
    return accepted;
  }

  async getIdempotency(key: string, now: number): Promise<IdempotencyRecord | undefined> {
    const h = await this.client.hgetall(`${this.p}i:${key}`);
    if (h.expiresAt === undefined || Number(h.expiresAt) <= now) return undefined;
    return { key, status: Number(h.status), body: h.body!, createdAt: Number(h.createdAt), expiresAt: Number(h.expiresAt) };
  }

  async pruneIdempotency(now: number): Promise<number> {
    return Number(await this.script('pruneIdempotency', now));
  }

  /** The hashes of `ids` (prefix `kind`), in order; ids without one are left out. */
  private async hashes(kind: string, ids: string[]): Promise<Hash[]> {
    const all = await Promise.all(ids.map((id) => this.client.hgetall(`${this.p}${kind}${id}`)));
    return all.filter((h) => Object.keys(h).length > 0);
  }

  getRun(id: string): Promise<Run | undefined> {
    return readRun(this.client, this.p, id);
  }

  async queuedRun(id: string): Promise<NewRun | undefined> {
    const [status, n] = await this.client.hmget(`${this.p}r:${id}`, 'status', 'n');
    return status === 'queued' && n ? (JSON.parse(n) as NewRun) : undefined;
  }

  async listRuns(opts: RunListOptions): Promise<Run[]> {
    const index = `${this.p}runs${opts.status ? `:${opts.status}` : ''}`;
    const hook = opts.hook?.toLowerCase();
    const { session } = opts;
    if (hook === undefined && session === undefined) {
      const ids = await this.client.zrevrange(index, 0, opts.limit - 1);
      return (await this.hashes('r:', ids)).map(toRun);
    }
    // the other filters applied here, a page of the index at a time
    const out: Run[] = [];
    const page = Math.max(opts.limit, 100);
    for (let offset = 0; out.length < opts.limit; offset += page) {
      const ids = await this.client.zrevrange(index, offset, offset + page - 1);
      for (const run of (await this.hashes('r:', ids)).map(toRun)) {
        if (
          (hook !== undefined && !run.hookName.toLowerCase().includes(hook)) ||
          (session !== undefined && !run.sessionKey.includes(session))
        )
          continue;
        out.push(run);
        if (out.length >= opts.limit) break;
      }
      if (ids.length < page) break;
    }
    return out;
  }

  async listMessages(sessionKey: string, opts: ListOptions): Promise<SessionMessage[]> {
    const entries = await this.client.lrange(`${this.p}m:${sessionKey}`, -opts.limit, -1);
    return entries.reverse().map((e) => toMessage(sessionKey, e));
  }

  /** The sizes first (a list beside the transcript, `ms:<key>`), then only the lines that fit. */
  async transcript(sessionKey: string, limit: number, maxBytes = Infinity): Promise<SessionMessage[]> {
    const sizes = await this.client.lrange(`${this.p}ms:${sessionKey}`, -limit, -1);
    // newest first: keep messages while the total stays within maxBytes (the newest always)
    let total = 0;
    let n = 0;
    for (let i = sizes.length - 1; i >= 0; i--) {
      const b = Number(sizes[i]);
      if (n > 0 && total + b > maxBytes) break;
      total += b;
      n++;
    }
    if (n === 0) return [];
    return (await this.client.lrange(`${this.p}m:${sessionKey}`, -n, -1)).map((e) => toMessage(sessionKey, e));
  }

  getEvent(id: string): Promise<SystemEvent | undefined> {
    return readEvent(this.client, this.p, id);
  }

  async listEvents(opts: ListOptions & { status?: EventStatus }): Promise<SystemEvent[]> {
    const ids = await this.client.zrevrange(`${this.p}events${opts.status ? `:${opts.status}` : ''}`, 0, opts.limit - 1);
    return (await this.hashes('e:', ids)).map(toEvent);
  }

  async pendingEvents(limit: number): Promise<SystemEvent[]> {
    const ids = await this.client.zrange(`${this.p}events:pending`, '0', String(limit - 1));
    return (await this.hashes('e:', ids)).map(toEvent);
  }

  /**
   * The newest `limit` pending events, and the older ones counted from the per-source tally of pending
   * events less those shown; their first and last times are those of the oldest pending event and of
   * the one just before those shown.
   */
  async pendingBacklog(limit: number): Promise<PendingBacklog> {
    const ids = (await this.client.zrevrange(`${this.p}events:pending`, 0, limit - 1)).reverse();
    const events = (await this.hashes('e:', ids)).map(toEvent);
    const older: PendingBacklog['older'] = { count: 0, bySource: {}, firstAt: null, lastAt: null };
    if (events.length < limit) return { events, older };
    const [bySource, [first], [last]] = await Promise.all([
      this.client.hgetall(`${this.p}events:src`),
      this.client.zrange(`${this.p}events:pending`, '0', '0'),
      this.client.zrevrange(`${this.p}events:pending`, limit, limit),
    ]);
    for (const [source, n] of Object.entries(bySource)) {
      const left = Number(n) - events.filter((e) => e.source === source).length;
      if (left > 0) older.bySource[source] = left;
      older.count += Math.max(0, left);
    }
    if (!older.count || !first || !last) return { events, older: { count: 0, bySource: {}, firstAt: null, lastAt: null } };
    const [a, b] = (await this.hashes('e:', [first, last])).map(toEvent);
    older.firstAt = a?.createdAt ?? null;
    older.lastAt = (b ?? a)?.createdAt ?? null;
    return { events, older };
  }

  async counts(): Promise<StoreCounts> {
    const p = this.p;
    const keys = [...STATUSES.map((s) => `${p}runs:${s}`), `${p}events:pending`, `${p}events:consumed`, `${p}outbox`, `${p}outbox:failed`];
    const n = await Promise.all(keys.map((k) => this.client.zcard(k)));
    return {
      runs: Object.fromEntries(STATUSES.map((s, i) => [s, n[i]!])) as Record<RunStatus, number>,
      events: { pending: n[5]!, consumed: n[6]! },
      outbox: { pending: n[7]!, failed: n[8]! },
    };
  }

  async unfinishedRuns(): Promise<Run[]> {
    const [q, r] = await Promise.all(['queued', 'running'].map((s) => this.client.zrange(`${this.p}runs:${s}`, '0', '-1', 'WITHSCORES')));
    const seqs: [string, number][] = [];
    for (const l of [q!, r!]) for (let i = 0; i < l.length; i += 2) seqs.push([l[i]!, Number(l[i + 1])]);
    seqs.sort((x, y) => x[1] - y[1]);
    return (
      await this.hashes(
        'r:',
        seqs.map(([id]) => id),
      )
    )
      .map(toRun)
      .filter((run) => run.kind !== 'heartbeat');
  }

  async insertHeartbeat(run: NewRun, startedAt: number): Promise<void> {
    await this.script('insertHeartbeat', run.id, JSON.stringify(run), startedAt, this.instance);
  }

  async startRun(id: string, at: number): Promise<void> {
    await this.script('startRun', id, at);
  }

  async requeueRun(id: string, opts: { refundAttempt: boolean }): Promise<void> {
    await this.script('requeueRun', id, opts.refundAttempt ? 1 : 0);
  }

  async finishRun(o: RunOutcome): Promise<void> {
    const args: Arg[] = [
      o.id,
      o.status,
      o.finishedAt,
      // token counts as strings, so the script stores them as written
      JSON.stringify({
        reply: o.reply,
        summary: o.summary,
        error: o.error,
        inTok: o.usage ? String(o.usage.inputTokens) : null,
        outTok: o.usage ? String(o.usage.outputTokens) : null,
        forwarded: o.forwarded ? JSON.stringify(o.forwarded) : null,
      }),
      o.messages.length,
    ];
    for (const m of o.messages) args.push(m.sessionKey, Buffer.byteLength(m.content), messageJson(m));
    const e = o.event;
    args.push(...(e ? [1, e.id, e.source, eventJson(e)] : [0, '', '', '']));
    const d = o.delivery;
    if (d.kind === 'outbox')
      args.push(
        JSON.stringify({ kind: 'outbox', id: d.entry.id, channel: d.entry.channel, to: d.entry.to }),
        deliveryJson(d.entry),
        d.entry.createdAt,
        this.instance,
      );
    else args.push(JSON.stringify({ kind: 'skipped', reason: d.reason, channel: d.channel ?? null, to: d.to ?? null }), '', '', '');
    const ids = o.consumedEventIds ?? [];
    args.push(ids.length, o.finishedAt, o.consumeOlder ? 1 : 0, ...ids);
    this.pushCallbacks(args, o.callbacks);
    await this.script('finishRun', ...args);
  }

  /** The arguments of callback entries (lua/includes/callbacks.lua): their count, then each one's, owned by this instance. */
  private pushCallbacks(args: Arg[], entries: readonly NewDelivery[] | undefined): void {
    args.push(entries?.length ?? 0);
    for (const e of entries ?? []) args.push(e.id, e.runId, deliveryJson(e), e.createdAt, this.instance);
  }

  async runCallbacks(runId: string): Promise<Delivery[]> {
    const ids = await this.client.zrange(`${this.p}rcb:${runId}`, '0', '-1');
    return (await this.hashes('d:', ids)).map(toDelivery);
  }

  async failInterruptedHeartbeats(at: number, reason: string): Promise<number> {
    return Number(await this.script('failHeartbeats', at, reason, this.instance, 0));
  }

  async dueDeliveries(now: number, limit: number): Promise<Delivery[]> {
    const r = (await this.script('dueDeliveries', now, limit, this.instance)) as string[][];
    return r.map((flat) => toDelivery(pairs(flat)));
  }

  async nextDeliveryAt(after?: number): Promise<number | undefined> {
    const r = await this.client.zrangebyscore(
      `${this.p}outbox`,
      after === undefined ? '-inf' : `(${after}`,
      '+inf',
      'WITHSCORES',
      'LIMIT',
      0,
      1,
    );
    return r.length ? Number(r[1]) : undefined;
  }

  async recordDelivery(a: DeliveryAttempt): Promise<void> {
    const fields: Record<string, unknown> = { error: a.error ?? null };
    if (a.sentParts !== undefined) fields.sentParts = a.sentParts;
    if (a.parts !== undefined) fields.parts = JSON.stringify(a.parts);
    if (a.ambiguousPart !== undefined) fields.ambiguousPart = a.ambiguousPart;
    if (a.route) fields.route = JSON.stringify(a.route);
    const args: Arg[] = [a.id, a.status, a.attempts, a.nextAttemptAt ?? a.at, a.at, JSON.stringify(fields), a.runId];
    this.pushCallbacks(args, a.callbacks);
    await this.script('recordDelivery', ...args);
  }

  async redeliver(entry: NewDelivery): Promise<void> {
    await this.script(
      'redeliver',
      entry.id,
      entry.runId,
      deliveryJson(entry),
      entry.createdAt,
      JSON.stringify({ channel: entry.channel, to: entry.to }),
      this.instance,
    );
  }

  async prune(before: PruneBefore, limit: number): Promise<PruneCounts & { more: boolean }> {
    const r = (await this.script('prune', before.runs, before.events, before.requests, limit, before.sessionLines)) as number[];
    return { ...pruneCounts(r), more: r[5] === 1 };
  }

  countPrunable(before: PruneBefore): Promise<PruneCounts> {
    return countPrunable(this.client, this.p, before);
  }

  async getMeta(key: string): Promise<string | undefined> {
    return (await this.client.hget(`${this.p}meta`, key)) ?? undefined;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.client.hset(`${this.p}meta`, key, value);
  }

  /** The server's persistence settings, as `check` reads them (durability.ts). */
}
