import type { MaybePromise } from '../shared/maybe-promise.js';
import { VersionedCache } from '../shared/versioned-cache.js';
import type { Account } from './account.js';
import type { AccountRepository } from './account.repository.js';

/** Entries kept at most; the oldest is dropped first (it refills from the store). */
const MAX_ENTRIES = 10_000;

/**
 * Accounts by username for the lookup path, so authenticating does not read the store on every
 * request. Entries are valid while the change counter is unchanged (SQLite: until any other
 * connection or process commits; PostgreSQL: at most one second, or while the Redis change feed is
 * live up to 30 s: accountCacheCounter) and are dropped at once when this process changes an
 * account or the change feed announces a change made elsewhere (VersionedCache). The cached
 * balance is only used to refuse early: the conditional debit stays the authority on credits.
 */
export class AccountCache {
  private readonly cache: VersionedCache<Account>;

  constructor(
    private readonly repository: AccountRepository,
    changeCounter: () => number,
  ) {
    this.cache = new VersionedCache(changeCounter, MAX_ENTRIES);
  }

  /** A cached account at once, without a promise; otherwise it is read from the store. */
  find(username: string): MaybePromise<Account | undefined> {
    return this.cache.peek(username) ?? this.reload(username);
  }

  /** Reads the account from the store, bypassing (and refreshing) the cache. */
  async reload(username: string): Promise<Account | undefined> {
    // The counter is a snapshot taken when the lookup started (ChangeSnapshot), so this row is at
    // least as new as it; a change announced while it is read (invalidate) keeps it out.
    const mark = this.cache.mark();
    const account = await this.repository.findByUsername(username);
    if (account) this.cache.set(username, account, mark);
    else this.cache.invalidate(username);
    return account;
  }

  /** Records a balance this process just wrote, if the account is still cached. */
  noteBalance(username: string, credits: number): void {
    const cached = this.cache.peek(username);
    if (cached && cached.credits !== credits) this.cache.set(username, { ...cached, credits });
  }

  invalidate(username: string): void {
    this.cache.invalidate(username);
  }

  /** Drops every entry (a change feed asked for it, or may have missed changes). */
  clear(): void {
    this.cache.clear();
  }
}
