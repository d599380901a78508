/**
 * A least-recently-used cache bounded by a total size (each entry's size is
 * given when it is stored, e.g. the length of the text it was made from) and a
 * number of entries. A Map keeps insertion order, so re-inserting on every hit
 * makes its first key the least recently used. (Hand-written rather than the
 * `lru-cache` package: this is the whole of what is needed, on the path that
 * draws every message, and it keeps the first bundle small.)
 */
export class Lru<K, V> {
  private readonly map = new Map<K, { value: V; size: number }>();
  private total = 0;

  constructor(
    private readonly maxSize: number,
    private readonly maxEntries = Number.POSITIVE_INFINITY,
  ) {}

  get(key: K): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }

  set(key: K, value: V, size: number): void {
    const old = this.map.get(key);
    if (old) {
      this.total -= old.size;
      this.map.delete(key);
    }
    // Larger than the whole budget: not kept (it would push out everything else).
    if (size > this.maxSize) return;
    this.map.set(key, { value, size });
    this.total += size;
    while (this.total > this.maxSize || this.map.size > this.maxEntries) {
      const first = this.map.keys().next();
      if (first.done) break;
      const gone = this.map.get(first.value);
      this.map.delete(first.value);
      this.total -= gone?.size ?? 0;
    }
  }

  /** The cached value for `key`, made (and kept) on a miss. */
  getOrMake(key: K, size: number, make: () => V): V {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = make();
    this.set(key, value, size);
    return value;
  }

  get size(): number {
    return this.map.size;
  }

  get weight(): number {
    return this.total;
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }
}
