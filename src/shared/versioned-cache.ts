/**
 * The one cache seam of the lookup path: entries by key, valid while the storage change counter
 * stays where it was, dropped at once by `invalidate`/`clear` when this process (or a change feed)
 * knows better. The account cache, the test plates and the record cache are all one of these.
 *
 * - `peek` answers at once, without a promise: the lookup path's common case (see MaybePromise).
 *   It first compares the change counter (ChangeSnapshot.current, read once per lookup): when it
 *   moved, another connection or process committed, and everything is dropped.
 * - A value read from the store is stored with `set(key, value, mark)`, `mark` taken with `mark()`
 *   before the read started: it is kept only if nothing was invalidated meanwhile, so a read that
 *   raced a change (PostgreSQL reads asynchronously) never brings back what the change replaced.
 * - At most `maxEntries` are kept; the oldest is dropped first. Misses are not kept, so something
 *   newly written is found at once.
 */
export class VersionedCache<V> {
  private readonly entries = new Map<string, V>();
  private counter: number | undefined;
  /** Moves on every invalidation; a read keeps its value only if it has not moved since its mark. */
  private generation = 0;

  constructor(
    private readonly changeCounter: () => number,
    private readonly maxEntries: number,
  ) {}

  /** The entry, if still valid; no promise and no allocation (the lookup path calls it per request). */
  peek(key: string): V | undefined {
    const now = this.changeCounter();
    if (now !== this.counter) {
      this.counter = now;
      this.clear();
    }
    return this.entries.get(key);
  }

  /** Take before a read whose value will be `set`. */
  mark(): number {
    return this.generation;
  }

  /** Keeps `value` unless something was invalidated since `mark` (default: now, for a value just written). */
  set(key: string, value: V, mark = this.generation): void {
    if (mark !== this.generation) return;
    // Kept before any peek: valid under the counter as it is now, not dropped by the first peek.
    this.counter ??= this.changeCounter();
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, value);
  }

  /** Drops one entry, and any read in flight (it may have read what changed). */
  invalidate(key: string): void {
    this.entries.delete(key);
    this.generation += 1;
  }

  /** Drops every entry and any read in flight. */
  clear(): void {
    this.entries.clear();
    this.generation += 1;
  }
}
