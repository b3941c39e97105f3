import { VersionedCache } from '../shared/versioned-cache.js';
import type { MaybePromise } from '../shared/maybe-promise.js';
import type { RecordRepository } from './record.repository.js';

/** The one entry of the cache: the whole list, as `operation\0lookupKey` strings. */
const ALL = '';

/**
 * The free test plates (issue 2: they answer and cost 0), held in memory: a handful of rows read on
 * every lookup. Reloaded when the storage change counter moves (another process wrote) or when they
 * are changed through this object (VersionedCache).
 */
export class TestPlates {
  private readonly cache: VersionedCache<ReadonlySet<string>>;
  /** The read in flight and the cache mark it started under: shared by lookups until a change. */
  private loading: { readonly mark: number; readonly plates: Promise<ReadonlySet<string>> } | undefined;

  constructor(
    private readonly records: RecordRepository,
    changeCounter: () => number,
  ) {
    this.cache = new VersionedCache(changeCounter, 1);
  }

  /** Answered at once, without a promise, while the list is loaded (the lookup path's common case). */
  isTestPlate(operation: string, lookupKey: string): MaybePromise<boolean> {
    const key = `${operation}\u0000${lookupKey}`;
    const plates = this.cache.peek(ALL);
    if (plates) return plates.has(key);
    return this.load().then((loaded) => loaded.has(key));
  }

  async add(operation: string, lookupKey: string, createdAt: string): Promise<void> {
    await this.records.addTestPlate(operation, lookupKey, createdAt);
    this.cache.clear();
  }

  async remove(operation: string, lookupKey: string): Promise<boolean> {
    const removed = await this.records.removeTestPlate(operation, lookupKey);
    this.cache.clear();
    return removed;
  }

  list(): Promise<Array<{ operation: string; lookupKey: string }>> {
    return this.records.listTestPlates();
  }

  private load(): Promise<ReadonlySet<string>> {
    const mark = this.cache.mark();
    // A read started before the last invalidation may miss what caused it: start afresh.
    if (this.loading?.mark === mark) return this.loading.plates;
    const plates = this.records.listTestPlates().then((list) => {
      const set: ReadonlySet<string> = new Set(list.map((p) => `${p.operation}\u0000${p.lookupKey}`));
      this.cache.set(ALL, set, mark);
      return set;
    });
    const loading = { mark, plates };
    this.loading = loading;
    // then(done, done) rather than finally: a failed read must not become an unhandled rejection
    // here (its lookup already reports it).
    const done = (): void => {
      if (this.loading === loading) this.loading = undefined;
    };
    plates.then(done, done);
    return plates;
  }
}
