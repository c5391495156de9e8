/**
 * The task queue on Redis (`TaskQueue`): a session's heartbeat, one task per kind and key at a time
 * across instances, with the one asked for while it runs waiting behind it (lua/tasks/).
 */
import type { TaskQueue } from '../roles.ts';
import type { Claim, Task } from '../types.ts';
import type { RedisQueueDeps } from './queue.ts';
import type { Arg } from './scripts.ts';

export class RedisTaskQueue implements TaskQueue {
  private readonly d: RedisQueueDeps;

  constructor(deps: RedisQueueDeps) {
    this.d = deps;
  }

  async enqueue(task: Task, runAt: number): Promise<number> {
    return Number(await this.d.run('enqueueTask', [this.d.prefix, task.kind, task.key, runAt]));
  }

  async claim(kind: Task['kind'], worker: string, leaseMs: number, limit: number): Promise<Claim<Task>[]> {
    const { run, prefix, instance, clock } = this.d;
    const r = (await run('claimTasks', [prefix, kind, worker, instance, clock(), leaseMs, limit])) as (string | null)[];
    const out: Claim<Task>[] = [];
    for (let i = 0; i < r.length; i += 5)
      out.push({
        id: r[i]!,
        key: r[i + 1]!,
        attempts: Number(r[i + 2]),
        lastError: r[i + 3] ?? null,
        leaseUntil: Number(r[i + 4]),
        item: { kind, key: r[i + 1]! },
      });
    return out;
  }

  async nextAt(kind: Task['kind']): Promise<number | undefined> {
    // tq:<kind> scores each key by when its task is due, or when its claim's lease runs out
    const first = await this.d.client.zrange(`${this.d.prefix}tq:${kind}`, '0', '0', 'WITHSCORES');
    return first[1] === undefined ? undefined : Number(first[1]);
  }

  private async end(op: 'complete' | 'fail' | 'release' | 'extend', id: string, worker: string, more: Arg[] = []): Promise<boolean> {
    return Number(await this.d.run('endTask', [this.d.prefix, op, id, worker, this.d.clock(), ...more])) === 1;
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
}
