/**
 * The run queue on Redis (`RunQueue`): runs claimed with a lease, shared by every instance on the
 * server. The scripts (lua/runs/) keep one session key's runs in order, one at a time across
 * instances, and take back a claim whose lease ran out or whose instance is gone.
 *
 * `size()` must answer at once: it gives the figures of the whole queue (every instance's runs) as the
 * last script call returned them.
 */
import type { RunQueue } from '../roles.ts';
import type { Claim, NewRun } from '../types.ts';
import type { Redis } from 'ioredis';
import type { Arg, RunScript } from './scripts.ts';

export interface RedisQueueDeps {
  client: Redis;
  run: RunScript;
  prefix: string;
  /** This instance's id (its presence key). */
  instance: string;
  clock: () => number;
}

export class RedisRunQueue implements RunQueue {
  private readonly d: RedisQueueDeps;
  private total = 0;
  private claimed = 0;

  constructor(deps: RedisQueueDeps) {
    this.d = deps;
  }

  /** The queue's figures, from a script's reply (items in the queue, items claimed). */
  counted(total: unknown, claimed: unknown): void {
    this.total = Number(total);
    this.claimed = Number(claimed);
  }

  /** Reads the figures (at open). */
  async refresh(): Promise<void> {
    const [n, c] = await Promise.all([this.d.client.get(`${this.d.prefix}q:n`), this.d.client.zcard(`${this.d.prefix}q:claimed`)]);
    this.counted(n ?? 0, c);
  }

  async claim(worker: string, leaseMs: number, limit: number): Promise<Claim<NewRun>[]> {
    const { run, prefix, instance, clock } = this.d;
    const r = (await run('claimRuns', [prefix, clock(), leaseMs, limit, worker, instance])) as (string | null)[];
    this.counted(r[0], r[1]);
    const out: Claim<NewRun>[] = [];
    for (let i = 2; i < r.length; i += 6)
      out.push({
        id: r[i]!,
        key: r[i + 1]!,
        attempts: Number(r[i + 2]),
        lastError: r[i + 3] ?? null,
        leaseUntil: Number(r[i + 4]),
        item: JSON.parse(r[i + 5]!) as NewRun,
      });
    return out;
  }

  private async end(op: 'complete' | 'fail' | 'release' | 'extend', id: string, worker: string, more: Arg[] = []): Promise<boolean> {
    const r = (await this.d.run('endClaim', [this.d.prefix, op, id, worker, this.d.clock(), ...more])) as number[];
    this.counted(r[1], r[2]);
    return r[0] === 1;
  }

  complete(id: string, worker: string): Promise<boolean> {
    return this.end('complete', id, worker);
  }

  fail(id: string, worker: string, opts: { retryAt?: number; error: string }): Promise<boolean> {
    return this.end('fail', id, worker, [opts.retryAt ?? this.d.clock(), opts.error]);
  }

  release(id: string, worker: string): Promise<boolean> {
    return this.end('release', id, worker);
  }

  extend(id: string, worker: string, leaseMs: number): Promise<boolean> {
    return this.end('extend', id, worker, [leaseMs]);
  }

  size(): { waiting: number; claimed: number } {
    return { waiting: Math.max(0, this.total - this.claimed), claimed: this.claimed };
  }

  async nextAt(): Promise<number | undefined> {
    const p = this.d.prefix;
    const [wait, lease] = await Promise.all([
      this.d.client.zrange(`${p}q:wait`, '0', '0', 'WITHSCORES'),
      this.d.client.zrange(`${p}q:claimed`, '0', '0', 'WITHSCORES'),
    ]);
    const times = [wait[1], lease[1]].filter((t) => t !== undefined).map(Number);
    return times.length ? Math.min(...times) : undefined;
  }
}
