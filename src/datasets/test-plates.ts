import type { RecordRepository } from './record.repository.js';

/**
 * The free test plates (issue 2: they answer and cost 0), held in memory: a handful of rows read on
 * every lookup. Reloaded when the storage change counter moves (another process wrote) or when they
 * are changed through this object.
 */
export class TestPlates {
  private plates: Set<string> | undefined;
  private counter: number | undefined;
  private loading: Promise<Set<string>> | undefined;
  /** Moves on every invalidation; a load keeps its result only if it has not moved meanwhile. */
  private generation = 0;
  private loadingGeneration = -1;

  constructor(
    private readonly records: RecordRepository,
    private readonly changeCounter: () => number,
  ) {}

  /** Answered at once, without a promise, while the list is loaded (the lookup path's common case). */
  isTestPlate(operation: string, lookupKey: string): boolean | Promise<boolean> {
    const now = this.changeCounter();
    if (now !== this.counter) {
      this.counter = now;
      this.forget();
    }
    const key = `${operation}\u0000${lookupKey}`;
    if (this.plates) return this.plates.has(key);
    return this.load().then((plates) => plates.has(key));
  }

  async add(operation: string, lookupKey: string, createdAt: string): Promise<void> {
    await this.records.addTestPlate(operation, lookupKey, createdAt);
    this.forget();
  }

  async remove(operation: string, lookupKey: string): Promise<boolean> {
    const removed = await this.records.removeTestPlate(operation, lookupKey);
    this.forget();
    return removed;
  }

  list(): Promise<Array<{ operation: string; lookupKey: string }>> {
    return this.records.listTestPlates();
  }

  /** After a change: neither the set nor a load in flight may be kept. */
  private forget(): void {
    this.plates = undefined;
    this.loading = undefined;
    this.generation += 1;
  }

  private load(): Promise<Set<string>> {
    const generation = this.generation;
    // A load started before the last invalidation may miss what caused it: start afresh.
    if (this.loading && this.loadingGeneration === generation) return this.loading;
    const loading = this.records.listTestPlates().then((list) => {
      const set = new Set(list.map((p) => `${p.operation}\u0000${p.lookupKey}`));
      // Kept only if nothing changed while it was read (PostgreSQL reads asynchronously).
      if (this.generation === generation) this.plates = set;
      return set;
    });
    this.loading = loading;
    this.loadingGeneration = generation;
    void loading.finally(() => {
      if (this.loading === loading) this.loading = undefined;
    });
    return loading;
  }

}
