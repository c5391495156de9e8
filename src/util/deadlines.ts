/**
 * Deadlines for many short-lived things under one timer. `add` only compares
 * the new deadline with the one the timer is set for (when all share one
 * timeout, a later deadline never moves the timer), and `delete` unlinks an
 * entry from a list and leaves the timer as it is: a timer set and cleared per
 * request, and to a lesser degree a `Set` of entries, were a visible share of
 * the main thread under load (measured: docs/performance.md, "Ids, deadlines
 * and collections"). When the timer fires,
 * every entry past its deadline expires and the timer is set for the earliest
 * deadline left.
 *
 * The timer does not keep the process alive: what waits on a deadline (a
 * socket, a worker) does that. Deadlines are `performance.now()` times.
 */

/** One item being watched; `delete` it when the item is done before its deadline. */
export interface Entry<T> {
  readonly item: T;
  readonly deadline: number;
  /** Neighbours in the list; both undefined, and not the head, once deleted. */
  prev: Entry<T> | undefined;
  next: Entry<T> | undefined;
}

export class Deadlines<T> {
  private head: Entry<T> | undefined;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;
  private readonly onExpire: (item: T) => void;

  /** `onExpire` runs for each item past its deadline, after its entry was deleted. */
  constructor(onExpire: (item: T) => void) {
    this.onExpire = onExpire;
  }

  get size(): number {
    return this.count;
  }

  add(item: T, deadline: number): Entry<T> {
    const e: Entry<T> = { item, deadline, prev: undefined, next: this.head };
    if (this.head) this.head.prev = e;
    this.head = e;
    this.count++;
    if (deadline < this.armedFor) this.arm(deadline);
    return e;
  }

  /** An entry done before its deadline; deleting it again does nothing. */
  delete(e: Entry<T>): void {
    if (e.prev) e.prev.next = e.next;
    else if (this.head === e) this.head = e.next;
    else return; // already deleted
    if (e.next) e.next.prev = e.prev;
    e.prev = undefined;
    e.next = undefined;
    this.count--;
  }

  /** Forgets every entry and stops the timer. */
  clear(): void {
    while (this.head) this.delete(this.head);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(this.sweep, Math.max(1, Math.ceil(at - performance.now())));
    this.timer.unref();
  }

  private readonly sweep = (): void => {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = performance.now();
    const expired: T[] = [];
    for (let e = this.head; e; ) {
      const next = e.next;
      if (e.deadline <= now) {
        this.delete(e);
        expired.push(e.item);
      }
      e = next;
    }
    // a timer may fire a little early (the event loop reads its clock once a turn): those wait for the next
    let earliest = Infinity;
    for (let e = this.head; e; e = e.next) if (e.deadline < earliest) earliest = e.deadline;
    if (earliest !== Infinity) this.arm(earliest);
    for (const item of expired) this.onExpire(item);
  };
}
