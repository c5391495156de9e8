/** The `meta` table: small values by key, read once and then served from memory. */
import type { Statements } from './statements.ts';

/** The meta key of the pending events' watermark (`Meta.pendingFrom`). */
const PENDING_FROM = 'eventsPendingFrom';

export class Meta {
  /** Values read or written, as committed or about to be (this process is the database's only writer). */
  private readonly cache = new Map<string, string | undefined>();
  private readonly q: Statements;

  constructor(q: Statements) {
    this.q = q;
  }

  get(key: string): string | undefined {
    if (this.cache.has(key)) return this.cache.get(key);
    const v = (this.q.getMeta.get(key) as { value: string } | undefined)?.value;
    this.cache.set(key, v);
    return v;
  }

  /** Inside a write: stores `value` unless it is already what is stored. */
  put(key: string, value: string): void {
    if (this.get(key) === value) return;
    this.q.setMeta.run(key, value);
    this.cache.set(key, value);
  }

  /** After a rollback: what a write put may not be stored. */
  forget(): void {
    this.cache.clear();
  }

  /**
   * The pending events' watermark: every event with a lower seq is consumed. It moves in the transaction
   * that consumes events, through `put`, so a rollback, which clears the cache, takes it back too.
   */
  pendingFrom(): number {
    return Number(this.get(PENDING_FROM) ?? 1);
  }

  /** Inside a write: moves the watermark. */
  setPendingFrom(seq: number): void {
    this.put(PENDING_FROM, String(seq));
  }
}
