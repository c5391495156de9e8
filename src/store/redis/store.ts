/**
 * The Redis store: every record, both queues, the counters and the console sessions on one Redis
 * server, shared by the instances that point at it (`capabilities.sharedByProcesses`). Writes that
 * touch several keys are Lua scripts (lua/, loaded by scripts.ts), atomic on the server; a write
 * resolves once the server has applied it, which is "on disk" only with the persistence settings
 * docs/redis.md describes (`hook-intake check` warns otherwise). Each role is handed out through
 * `atBoundary` (errors.ts), so that what leaves the driver fails with the contract's errors.
 *
 * Each store is one instance: it keeps a presence key (`alive:<id>`) alive while it runs, and the
 * others take over what it held (claims, pending deliveries, a heartbeat) once that key expires.
 */
import type { Redis } from 'ioredis';
import { uuidv7 } from '../../util/uuid7.ts';
import type { RunEnds, Store, StoreCapabilities } from '../roles.ts';
import type { StoreHistogram } from '../types.ts';
import { connectRedis } from './connect.ts';
import { redisDurability } from './durability.ts';
import { RedisRunEnds } from './ends.ts';
import { atBoundary } from './errors.ts';
import { RedisRunQueue } from './queue.ts';
import { RedisRecords } from './records.ts';
import { RedisKeptRequests } from './requests.ts';
import { defineScripts, scriptTexts, type RunScript } from './scripts.ts';
import { RedisCounters, RedisSessions } from './shared.ts';
import { RedisTaskQueue } from './tasks.ts';

export interface RedisStoreOptions {
  url: string;
  /** Prepended to every key, so several services can share a server (default `hook-intake:`). */
  prefix?: string;
  /** How long an instance that stops renewing its presence keeps its work before the others take it (default 10 s). */
  instanceTimeoutMs?: number;
  /** The queues' clock, for leases and retries (default Date.now). */
  clock?: () => number;
  /** How long opening waits for the server (default 5 s). */
  connectTimeoutMs?: number;
}

const GONE = 'interrupted: the instance running it stopped';

export class RedisStore implements Store {
  readonly driver = 'redis';
  readonly capabilities: StoreCapabilities = { sharedByProcesses: true };
  readonly instance = uuidv7();
  readonly shown: string;
  readonly records: RedisRecords;
  readonly runs: RedisRunQueue;
  readonly tasks: RedisTaskQueue;
  readonly counters: RedisCounters;
  readonly sessions: RedisSessions;
  readonly requests: RedisKeptRequests;
  readonly ends: RunEnds;
  private readonly runEnds: RedisRunEnds;
  private readonly client: Redis;
  private readonly run: RunScript;
  private readonly p: string;
  private readonly ttl: number;
  private readonly presence: NodeJS.Timeout;
  private readonly watchers = new Set<NodeJS.Timeout>();
  private closing: Promise<void> | undefined;

  static async open(opts: RedisStoreOptions): Promise<RedisStore> {
    const texts = await scriptTexts();
    const { client, shown } = await connectRedis(opts.url, opts.connectTimeoutMs);
    const store = new RedisStore(client, shown, defineScripts(client, texts), opts);
    await store.start();
    return store;
  }

  private constructor(client: Redis, shown: string, run: RunScript, opts: RedisStoreOptions) {
    this.client = client;
    this.shown = shown;
    const p = (this.p = opts.prefix ?? 'hook-intake:');
    this.ttl = opts.instanceTimeoutMs ?? 10_000;
    this.run = run;
    const deps = { client, run, prefix: p, instance: this.instance, clock: opts.clock ?? Date.now };
    const runs = new RedisRunQueue(deps);
    this.runs = atBoundary(runs);
    this.tasks = atBoundary(new RedisTaskQueue(deps));
    this.records = atBoundary(new RedisRecords({ ...deps, queue: runs }));
    this.counters = atBoundary(new RedisCounters(client, run, p));
    this.sessions = atBoundary(new RedisSessions(client, p));
    this.requests = atBoundary(new RedisKeptRequests(client, p));
    this.runEnds = new RedisRunEnds(client, p);
    this.ends = atBoundary(this.runEnds);
    this.presence = setInterval(() => void this.renew().catch(() => {}), Math.max(100, this.ttl / 3));
    this.presence.unref();
  }

  private renew(): Promise<unknown> {
    return this.client.set(`${this.p}alive:${this.instance}`, String(process.pid), 'PX', this.ttl);
  }

  private async start(): Promise<void> {
    await this.renew();
    await this.runs.refresh();
  }

  /**
   * Every half of the instance timeout: heartbeats left running by an instance that is gone are ended
   * as `error`, then `onWork` looks for work to take over (claims run out, deliveries left).
   */
  pollTakeovers(onWork: () => void): () => void {
    const t = setInterval(
      () => {
        void this.run('failHeartbeats', [this.p, Date.now(), GONE, this.instance, 1])
          .catch(() => 0)
          .then(() => this.closing || onWork());
      },
      Math.max(100, this.ttl / 2),
    );
    t.unref();
    this.watchers.add(t);
    return () => {
      clearInterval(t);
      this.watchers.delete(t);
    };
  }

  /** The server's persistence settings, as `check` reads them (durability.ts). */
  async startupWarnings(): Promise<string[]> {
    const get = async (name: string) => ((await this.client.config('GET', name).catch(() => [])) as string[])[1];
    return (await redisDurability(get, this.shown)).warnings;
  }

  histograms(): StoreHistogram[] {
    return [];
  }

  close(): Promise<void> {
    return (this.closing ??= (async () => {
      clearInterval(this.presence);
      for (const t of this.watchers) clearInterval(t);
      this.runEnds.close();
      // the others take over at once what this instance leaves, instead of after its timeout
      await this.client.del(`${this.p}alive:${this.instance}`).catch(() => {});
      await this.client.quit().catch(() => this.client.disconnect());
    })());
  }
}
