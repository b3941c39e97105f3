import { localCommitCount } from './local-commits.js';

/**
 * The storage change counter as lookups see it: read when a lookup starts (`refresh`), then the
 * same value for every cache the lookup consults.
 *
 * Lookups that start in one turn of the event loop share one read: the requests of a turn are the
 * ones a single poll of the sockets delivered, all received before the read, so a snapshot taken
 * at the turn's first lookup is as new as any of them could ask for. A request sent after another
 * process committed is read from its socket in a later turn, which reads the counter again. A
 * commit made in this thread through another connection (local-commits.ts) also makes the next
 * lookup read again, even within the turn.
 *
 * This relies on lookups starting from I/O callbacks, as the HTTP handlers (the only callers of
 * LookupPipeline.execute) do: the shared read expires in the check phase that follows the poll
 * phase it was made in. A read made in a timer or setImmediate callback would stay shared through
 * the next poll phase, so a lookup started from one could use a value one turn old; start lookups
 * from request handlers.
 *
 * Why: on SQLite the counter is PRAGMA data_version, a read transaction with its file locks (about
 * 2.5 µs); read per lookup it was a tenth of a JSON lookup's CPU under load (bench:json profile),
 * where one turn carries a few dozen lookups.
 */
export class ChangeSnapshot {
  private value: number;
  /** True from a read until the end of the event-loop turn it happened in. */
  private fresh = false;
  /** localCommitCount() at the last read. */
  private localCommits = localCommitCount();

  constructor(private readonly read: () => number) {
    this.value = read();
  }

  refresh(): void {
    const local = localCommitCount();
    if (this.fresh && local === this.localCommits) return;
    this.value = this.read();
    this.localCommits = local;
    if (!this.fresh) {
      this.fresh = true;
      // setImmediate callbacks run once the current poll phase is over: the turn's end.
      setImmediate(this.expire);
    }
  }

  /** The value at the last refresh; pass as the caches' change counter. */
  readonly current = (): number => this.value;

  private readonly expire = (): void => {
    this.fresh = false;
  };
}
