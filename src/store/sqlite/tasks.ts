/**
 * The queue of tasks (`TaskQueue`): work the runtime enqueues itself, such as a session's heartbeat. One process owns the file, so they live in its memory and nothing of them is
 * written: after a restart no task is waiting, and the runtime enqueues what it needs again (the
 * heartbeat's timer does; the events a heartbeat would have shown stay pending in the store).
 *
 * A kind and key has at most two tasks: the one at its head (claimed, or waiting) and, while the head
 * is claimed, one waiting behind it, into which later enqueues coalesce.
 */
import type { TaskQueue } from '../roles.ts';
import type { Claim, Task } from '../types.ts';

interface Entry {
  id: string;
  task: Task;
  /** Holding the lease; null while waiting. */
  worker: string | null;
  /** The lease's end while claimed; when due while waiting. */
  until: number;
  attempts: number;
  lastError: string | null;
}

export class SqliteTaskQueue implements TaskQueue {
  private readonly clock: () => number;
  private seq = 0;
  /** The tasks of each kind and key, the head first. */
  private readonly lines = new Map<string, Entry[]>();
  private readonly byId = new Map<string, Entry>();

  constructor(clock: () => number) {
    this.clock = clock;
  }

  async enqueue(task: Task, runAt: number): Promise<number> {
    const key = `${task.kind}\u0000${task.key}`;
    let line = this.lines.get(key);
    if (!line) this.lines.set(key, (line = []));
    const last = line.at(-1);
    if (last && last.worker === null) {
      last.until = Math.min(last.until, runAt);
      return last.until;
    }
    const e: Entry = {
      id: `task-${++this.seq}`,
      task: { kind: task.kind, key: task.key },
      worker: null,
      until: runAt,
      attempts: 0,
      lastError: null,
    };
    line.push(e);
    this.byId.set(e.id, e);
    return runAt;
  }

  async claim(kind: Task['kind'], worker: string, leaseMs: number, limit: number): Promise<Claim<Task>[]> {
    const now = this.clock();
    const out: Claim<Task>[] = [];
    for (const line of this.lines.values()) {
      const h = line[0]!;
      if (out.length >= limit) break;
      if (h.task.kind !== kind || h.until > now) continue;
      // a lease that ran out counts as an attempt
      if (h.worker !== null) h.attempts++;
      h.worker = worker;
      h.until = now + leaseMs;
      out.push({ id: h.id, key: h.task.key, attempts: h.attempts, lastError: h.lastError, leaseUntil: h.until, item: { ...h.task } });
    }
    return out;
  }

  async nextAt(kind: Task['kind']): Promise<number | undefined> {
    let next: number | undefined;
    for (const line of this.lines.values()) {
      const h = line[0]!;
      if (h.task.kind === kind && (next === undefined || h.until < next)) next = h.until;
    }
    return next;
  }

  /** The entry `worker` holds under `id`, if its lease was not taken over. */
  private held(id: string, worker: string): Entry | undefined {
    const e = this.byId.get(id);
    return e && e.worker === worker ? e : undefined;
  }

  async complete(id: string, worker: string): Promise<boolean> {
    const e = this.held(id, worker);
    if (!e) return false;
    this.byId.delete(id);
    const key = `${e.task.kind}\u0000${e.task.key}`;
    const line = this.lines.get(key)!;
    line.shift();
    if (!line.length) this.lines.delete(key);
    return true;
  }

  async fail(id: string, worker: string, opts: { retryAt?: number; error: string }): Promise<boolean> {
    const e = this.held(id, worker);
    if (!e) return false;
    e.worker = null;
    e.until = opts.retryAt ?? this.clock();
    e.attempts++;
    e.lastError = opts.error;
    return true;
  }

  async release(id: string, worker: string): Promise<boolean> {
    const e = this.held(id, worker);
    if (!e) return false;
    e.worker = null;
    e.until = this.clock();
    return true;
  }

  async extend(id: string, worker: string, leaseMs: number): Promise<boolean> {
    const e = this.held(id, worker);
    if (!e) return false;
    e.until = this.clock() + leaseMs;
    return true;
  }
}
