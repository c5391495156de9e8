/**
 * A first-in first-out queue of numbers in a growable ring of 64-bit floats.
 * A backlog of a million entries is one 8 MB buffer outside the JavaScript
 * heap: nothing for the garbage collector to walk, unlike a Map or an array of
 * strings.
 */
const MIN_CAPACITY = 1024;

export class NumberFifo {
  private buf = new Float64Array(MIN_CAPACITY);
  private head = 0;
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(n: number): void {
    if (this.size === this.buf.length) this.resize(this.buf.length * 2);
    this.buf[(this.head + this.size) % this.buf.length] = n;
    this.size++;
  }

  shift(): number | undefined {
    if (this.size === 0) return undefined;
    const n = this.buf[this.head]!;
    this.head = (this.head + 1) % this.buf.length;
    this.size--;
    // memory follows the live length once a long backlog has been worked off
    if (this.buf.length > MIN_CAPACITY && this.size * 4 < this.buf.length) this.resize(this.buf.length / 2);
    return n;
  }

  private resize(capacity: number): void {
    const next = new Float64Array(capacity);
    for (let i = 0; i < this.size; i++) next[i] = this.buf[(this.head + i) % this.buf.length]!;
    this.buf = next;
    this.head = 0;
  }

  /** The buffer's size in entries (tests). */
  get capacity(): number {
    return this.buf.length;
  }
}
