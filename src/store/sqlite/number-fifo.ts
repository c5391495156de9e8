/**
 * A first-in first-out queue of non-negative integers (rowids) in a growable
 * ring of 64-bit floats, outside the JavaScript heap: nothing for the garbage
 * collector to walk, unlike a Map or an array of strings.
 *
 * Consecutive integers pushed one after another are kept as one range: the
 * first of them, then a slot holding minus the range's length. The queue of
 * runs (queue.ts) keeps the seqs of accepted runs here, and those are
 * consecutive whenever nothing else was inserted in between, so a backlog of a
 * million runs is two slots rather than an 8 MB buffer (16 MB once the ring
 * has doubled past it). An integer that does not follow the previous one costs one
 * slot, as it would without ranges.
 */
export class NumberFifo {
  private readonly minCapacity: number;
  private buf: Float64Array;
  private head = 0;
  /** Slots in use: a value each, plus one per range for its length. */
  private slots = 0;
  /** Integers queued. */
  private size = 0;
  /** The integer pushed last (meaningful while `size > 0`). */
  private last = 0;

  /** `minCapacity`: the slots it starts with and never shrinks below (a power of two). */
  constructor(minCapacity = 1024) {
    this.minCapacity = minCapacity;
    this.buf = new Float64Array(minCapacity);
  }

  get length(): number {
    return this.size;
  }

  push(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`NumberFifo holds non-negative integers, not ${n}`);
    if (this.size > 0 && n === this.last + 1) {
      const tail = (this.head + this.slots - 1) % this.buf.length;
      // the tail is a range's length (negative): one longer; else the tail value starts a range of two
      if (this.buf[tail]! < 0) this.buf[tail]! -= 1;
      else this.append(-2);
    } else this.append(n);
    this.last = n;
    this.size++;
  }

  shift(): number | undefined {
    if (this.size === 0) return undefined;
    const cap = this.buf.length;
    const n = this.buf[this.head]!;
    const next = (this.head + 1) % cap;
    if (this.slots > 1 && this.buf[next]! < 0) {
      const left = -this.buf[next]! - 1;
      if (left === 1) {
        // one integer left of the range: it takes the length's slot, as a plain value
        this.buf[next] = n + 1;
        this.head = next;
        this.slots--;
      } else {
        this.buf[this.head] = n + 1;
        this.buf[next] = -left;
      }
    } else {
      this.head = next;
      this.slots--;
    }
    this.size--;
    // memory follows the live length once a long backlog has been worked off
    if (cap > this.minCapacity && this.slots * 4 < cap) this.resize(cap / 2);
    return n;
  }

  private append(v: number): void {
    if (this.slots === this.buf.length) this.resize(this.buf.length * 2);
    this.buf[(this.head + this.slots) % this.buf.length] = v;
    this.slots++;
  }

  private resize(capacity: number): void {
    const next = new Float64Array(capacity);
    for (let i = 0; i < this.slots; i++) next[i] = this.buf[(this.head + i) % this.buf.length]!;
    this.buf = next;
    this.head = 0;
  }

  /** The buffer's size in slots (tests). */
  get capacity(): number {
    return this.buf.length;
  }
}
