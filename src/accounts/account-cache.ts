import type { Account } from './account.js';
import type { AccountRepository } from './account.repository.js';

/** Entries kept at most; beyond that the cache starts over (it refills from the store). */
const MAX_ENTRIES = 10_000;

/**
 * Accounts by username for the lookup path, so authenticating does not read the store on every
 * request. Entries are valid while the change counter is unchanged (SQLite: until any other
 * connection or process commits; PostgreSQL: at most one second, or while the Redis change feed is
 * live up to 30 s: accountCacheCounter) and are dropped at once when this process changes an
 * account or the change feed announces a change made elsewhere. The cached balance is only used to refuse early: the conditional
 * debit stays the authority on credits.
 */
export class AccountCache {
  private readonly entries = new Map<string, Account>();
  private counter: number | undefined;

  constructor(
    private readonly repository: AccountRepository,
    private readonly changeCounter: () => number,
  ) {}

  /** A cached account at once, without a promise; otherwise it is read from the store. */
  find(username: string): Account | undefined | Promise<Account | undefined> {
    this.checkFreshness();
    const cached = this.entries.get(username);
    if (cached) return cached;
    return this.reload(username);
  }

  /** Reads the account from the store, bypassing (and refreshing) the cache. */
  async reload(username: string): Promise<Account | undefined> {
    // The counter is a snapshot taken when the lookup started (ChangeSnapshot), so this row is at
    // least as new as it: a change committed later moves the next lookup's snapshot and clears it.
    const account = await this.repository.findByUsername(username);
    if (account) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(username, account);
    } else {
      this.entries.delete(username);
    }
    return account;
  }

  /** Records a balance this process just wrote. */
  noteBalance(username: string, credits: number): void {
    const cached = this.entries.get(username);
    if (cached && cached.credits !== credits) this.entries.set(username, { ...cached, credits });
  }

  invalidate(username: string): void {
    this.entries.delete(username);
  }

  /** Drops every entry (a change feed asked for it, or may have missed changes). */
  clear(): void {
    this.entries.clear();
  }

  private checkFreshness(): void {
    const now = this.changeCounter();
    if (now !== this.counter) {
      this.entries.clear();
      this.counter = now;
    }
  }
}
