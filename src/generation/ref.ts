/**
 * The current generation, swapped atomically on reload: requests in flight keep the generation they
 * started with, and a retired generation is disposed once its last request is done.
 */
import type { ConfigIssue } from '../errors.ts';
import type { Generation } from './types.ts';

/**
 * Holds the current generation. Requests `acquire` it and `release` it when
 * done; `swap` installs a new one and disposes the old once it is unused.
 */
export class GenerationRef {
  private gen: Generation;
  private readonly users = new Map<Generation, number>();
  private readonly retired = new Set<Generation>();
  lastReloadError: { at: number; issues: ConfigIssue[] } | undefined;

  constructor(initial: Generation) {
    this.gen = initial;
  }

  get current(): Generation {
    return this.gen;
  }

  acquire(): Generation {
    const g = this.gen;
    this.users.set(g, (this.users.get(g) ?? 0) + 1);
    return g;
  }

  /** Runs `fn` with the current generation held, so it is not disposed while `fn` runs. */
  async use<T>(fn: (g: Generation) => Promise<T>): Promise<T> {
    const g = this.acquire();
    try {
      return await fn(g);
    } finally {
      this.release(g);
    }
  }

  /**
   * The current generation keeps its entry at 0 users: deleting and adding it again as requests
   * come and go would make this long-lived Map's table churn (see util/recycled.ts).
   */
  release(g: Generation): void {
    const n = (this.users.get(g) ?? 1) - 1;
    if (n > 0 || (n === 0 && g === this.gen)) this.users.set(g, n);
    else {
      this.users.delete(g);
      if (this.retired.delete(g)) void g.dispose();
    }
  }

  swap(next: Generation): Generation {
    const prev = this.gen;
    this.gen = next;
    this.lastReloadError = undefined;
    if ((this.users.get(prev) ?? 0) > 0) this.retired.add(prev);
    else {
      this.users.delete(prev);
      void prev.dispose();
    }
    return prev;
  }

  /** Disposes the current generation and any retired ones (shutdown). */
  async disposeAll(): Promise<void> {
    const all = [this.gen, ...this.retired];
    this.retired.clear();
    await Promise.all(all.map((g) => g.dispose()));
  }
}
