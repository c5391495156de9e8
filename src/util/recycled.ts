/**
 * A Map and a Set for long-lived collections whose entries come and go with each request, run or
 * delivery (measured: docs/performance.md, "Ids, deadlines and collections").
 *
 * V8 keeps a Map's entries in a hash table that it replaces every few insertions once deletions
 * have filled it. Its `OrderedHashTable::Rehash` allocates the replacement in the generation of
 * the table it replaces, and leaves the replaced table's entries in place (it only points the
 * table at its successor, for iterators still on it). A Map that lives as long as the server
 * soon has its table in the old generation, and from then on every replacement is allocated
 * there too: each is garbage a few hundred microseconds later, and it is reclaimed only by a
 * full collection. Until then the young keys and values it still refers to are kept alive by
 * the scavenger as well, and promoted. In a script that sets and deletes keys, a few alive at a
 * time, in a Map already in the old generation, the old generation grew by tens of megabytes, with
 * full collections on the way; with this wrapper, by little more than the same work without a Map.
 *
 * These wrappers replace their Map or Set with a fresh copy every `RECYCLE_AFTER` deletions. The
 * copy's table is young, and under load each replacement of a young table is young too, so their
 * tables die in scavenges. A copy costs one pass over the live entries; the collections this is
 * for hold few.
 */
export const RECYCLE_AFTER = 1024;

export class RecycledMap<K, V> implements Iterable<[K, V]> {
  private map = new Map<K, V>();
  private deletions = 0;

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    if (!this.map.delete(key)) return false;
    if (++this.deletions >= RECYCLE_AFTER) {
      this.map = new Map(this.map);
      this.deletions = 0;
    }
    return true;
  }

  clear(): void {
    this.map = new Map();
    this.deletions = 0;
  }

  keys(): MapIterator<K> {
    return this.map.keys();
  }

  values(): MapIterator<V> {
    return this.map.values();
  }

  entries(): MapIterator<[K, V]> {
    return this.map.entries();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.map.entries();
  }
}

export class RecycledSet<T> implements Iterable<T> {
  private set = new Set<T>();
  private deletions = 0;

  get size(): number {
    return this.set.size;
  }

  has(value: T): boolean {
    return this.set.has(value);
  }

  add(value: T): this {
    this.set.add(value);
    return this;
  }

  delete(value: T): boolean {
    if (!this.set.delete(value)) return false;
    if (++this.deletions >= RECYCLE_AFTER) {
      this.set = new Set(this.set);
      this.deletions = 0;
    }
    return true;
  }

  clear(): void {
    this.set = new Set();
    this.deletions = 0;
  }

  values(): SetIterator<T> {
    return this.set.values();
  }

  [Symbol.iterator](): SetIterator<T> {
    return this.set.values();
  }
}
