import type { Actor, AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../shared/clock.js';
import { VersionedCache } from '../shared/versioned-cache.js';
import type { MaybePromise } from '../shared/maybe-promise.js';
import type { Storage } from '../storage/create-database.js';
import type { RecordRepository } from './record.repository.js';

/** The one entry of the cache: the whole list, as `operation\0lookupKey` strings. */
const ALL = '';

/**
 * The free test plates (issue 2: they answer and cost 0), held in memory: a handful of rows read on
 * every lookup. Reloaded when the storage change counter moves (another process wrote) or when they
 * are changed through this object (VersionedCache). The API, the console and the CLI change them
 * through `add` and `remove`, which write the change and its audit row in one transaction.
 */
export class TestPlates {
  private readonly cache: VersionedCache<ReadonlySet<string>>;
  /** The read in flight and the cache mark it started under: shared by lookups until a change. */
  private loading: { readonly mark: number; readonly plates: Promise<ReadonlySet<string>> } | undefined;

  constructor(
    private readonly records: RecordRepository,
    changeCounter: () => number,
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
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

  /**
   * Makes a plate free; `lookupKey` is normalised as a lookup normalises it (testPlateKey). The
   * audit row names `actor` and commits with the plate. Answers false (and records nothing) when
   * the plate was free already.
   */
  async add(operation: string, lookupKey: string, actor: Actor): Promise<boolean> {
    const added = await this.storage.transaction(async (tx) => {
      if (!(await this.records.addTestPlate(tx, operation, lookupKey, this.clock.now().toISOString()))) return false;
      await this.audit.record(tx, actor, { action: 'test-plate.add', targetKind: 'test-plate', target: `${operation} ${lookupKey}` });
      return true;
    });
    this.cache.clear();
    return added;
  }

  /** Makes a test plate cost again, with its audit row; false (nothing recorded) when it was none. */
  async remove(operation: string, lookupKey: string, actor: Actor): Promise<boolean> {
    const removed = await this.storage.transaction(async (tx) => {
      if (!(await this.records.removeTestPlate(tx, operation, lookupKey))) return false;
      await this.audit.record(tx, actor, { action: 'test-plate.remove', targetKind: 'test-plate', target: `${operation} ${lookupKey}` });
      return true;
    });
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
