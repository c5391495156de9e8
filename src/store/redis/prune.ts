/**
 * Retention on Redis (`Store.prune`, `Store.countPrunable`): a batch is one short script
 * (lua/prune.ts, which describes the time indexes); nothing is kept in memory between batches, so
 * several instances may prune at once. The dry run reads the same indexes from here, a slice at a
 * time, so it never holds the server either.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { PruneBefore, PruneCounts } from '../types.ts';
import type { RunScript } from './scripts.ts';

/** Members read per command by the dry run. */
const SLICE = 1000;
const FINAL = new Set(['ok', 'error', 'timeout']);

export class RedisPruner {
  private readonly client: Redis;
  private readonly run: RunScript;
  private readonly p: string;

  constructor(client: Redis, run: RunScript, prefix: string) {
    this.client = client;
    this.run = run;
    this.p = prefix;
  }

  async batch(before: PruneBefore, limit: number): Promise<PruneCounts & { more: boolean }> {
    const r = (await this.run('hiPrune', [this.p, before.runs, before.events, before.requests, limit])) as number[];
    return { runs: r[0]!, events: r[1]!, messages: r[2]!, deliveries: r[3]!, requests: r[4]!, more: r[5] === 1 };
  }

  /** The rules of the script, over each index below its cutoff. */
  async count(before: PruneBefore): Promise<PruneCounts> {
    const below = (set: string, cut: number) => this.client.zcount(`${this.p}${set}`, '-inf', `(${cut}`);
    const [runs, messages, events, deliveries, requests] = await Promise.all([
      this.sum('runs:done', before.runs, (ids) => this.finishedRuns(ids)),
      this.sum('sessions', before.runs, async (keys) => (await this.each(keys, (p, key) => p.llen(`${this.p}m:${key}`))).reduce<number>((a, n) => a + Number(n), 0)),
      below('events:done', before.events),
      below('outbox:done', before.runs),
      below('reqs:at', before.requests),
    ]);
    return { runs, events, messages, deliveries, requests };
  }

  /** How many of `ids` are finished runs whose reply is not pending. */
  private async finishedRuns(ids: string[]): Promise<number> {
    const runs = (await this.each(ids, (p, id) => p.hmget(`${this.p}r:${id}`, 'status', 'dlv'))) as [string | null, string | null][];
    const done = runs.filter(([status]) => status !== null && FINAL.has(status));
    const replies = await this.each(done, (p, [, dlv]) => (dlv === null ? p.echo('') : p.hget(`${this.p}d:${dlv}`, 'status')));
    return replies.filter((status) => status !== 'pending').length;
  }

  /** Adds what `count` gives for each slice of the members of `set` below `cut`. */
  private async sum(set: string, cut: number, count: (members: string[]) => Promise<number>): Promise<number> {
    let total = 0;
    for (let from = 0; ; from += SLICE) {
      const members = await this.client.zrangebyscore(`${this.p}${set}`, '-inf', `(${cut}`, 'LIMIT', from, SLICE);
      if (members.length > 0) total += await count(members);
      if (members.length < SLICE) return total;
    }
  }

  /** One command per item, in one round trip; the replies in order. */
  private async each<T>(items: T[], command: (p: ChainableCommander, item: T) => unknown): Promise<unknown[]> {
    if (items.length === 0) return [];
    const pipe = this.client.pipeline();
    for (const item of items) command(pipe, item);
    return (await pipe.exec())!.map(([err, v]) => {
      if (err) throw err;
      return v;
    });
  }
}
