import type { CreditLedgerRepository, LedgerEntry } from '../credits/credit-ledger.repository.js';
import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/create-database.js';
import type { Account, AccountRateLimits } from './account.js';
import { USERNAME_PATTERN } from './account.js';
import type { AccountRepository } from './account.repository.js';
import { generateApiKey, hashApiKey, type RandomBytes } from './api-key.js';

export type AccountErrorCode = 'NOT_FOUND' | 'ALREADY_EXISTS' | 'INVALID';

/** An operator's request that cannot be carried out (bad name, unknown account...). */
export class AccountError extends Error {
  override readonly name = 'AccountError';
  constructor(
    readonly code: AccountErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Largest single top-up; keeps balances far from integer overflow on either engine. */
export const MAX_TOP_UP = 1_000_000_000;

/** Account and credit administration, shared by the CLI, start-up seeding and tests. */
export class AccountService {
  constructor(
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly accounts: AccountRepository,
    private readonly ledger: CreditLedgerRepository,
    private readonly clock: Clock,
    /**
     * Told about every change this service makes, after it is committed, so lookups see it at once:
     * this process's account cache and, with Redis, every other instance (AccountChangeFeed).
     */
    private readonly cache?: { invalidate(username: string): void | Promise<void> },
    private readonly random?: RandomBytes,
  ) {}

  /** Creates an account and returns its API key: the only time the key is ever shown. */
  async create(username: string, credits = 0): Promise<{ account: Account; apiKey: string }> {
    if (!USERNAME_PATTERN.test(username)) {
      throw new AccountError('INVALID', 'username must be 1 to 64 characters of letters, digits and . _ @ -');
    }
    checkAmount(credits, true);
    if (await this.accounts.findByUsername(username)) throw new AccountError('ALREADY_EXISTS', `account ${username} already exists`);
    const apiKey = generateApiKey(this.random);
    const now = this.clock.now().toISOString();
    const account = await this.storage.transaction(async (tx) => {
      const created = await this.accounts.insert(tx, { username, apiKeyHash: hashApiKey(apiKey), createdAt: now });
      if (credits > 0) await this.ledger.topUp(tx, created.id, credits, now, 'initial credits');
      return { ...created, credits };
    });
    return { account, apiKey };
  }

  async show(username: string): Promise<Account> {
    const account = await this.accounts.findByUsername(username);
    if (!account) throw new AccountError('NOT_FOUND', `no account named ${username}`);
    return account;
  }

  /** Replaces the API key; the old one stops working at once. */
  async rotateKey(username: string): Promise<string> {
    const apiKey = generateApiKey(this.random);
    await this.change(username, { apiKeyHash: hashApiKey(apiKey) });
    return apiKey;
  }

  setDisabled(username: string, disabled: boolean): Promise<Account> {
    return this.change(username, { disabled });
  }

  setRequireApiKey(username: string, requireApiKey: boolean): Promise<Account> {
    return this.change(username, { requireApiKey });
  }

  /**
   * Sets the rate limits given (null: the server default; 0: no limit; N: at most N per window);
   * a limit left out keeps its value. Every instance applies them from its next request.
   */
  setRateLimits(username: string, rateLimits: Partial<AccountRateLimits>): Promise<Account> {
    if (rateLimits.perSecond !== undefined) checkLimit(rateLimits.perSecond, MAX_RATE_PER_SECOND, 'the per-second limit');
    if (rateLimits.perDay !== undefined) checkLimit(rateLimits.perDay, MAX_RATE_PER_DAY, 'the per-day limit');
    if (rateLimits.perSecond === undefined && rateLimits.perDay === undefined) return this.show(username);
    return this.change(username, { rateLimits });
  }

  /** Adds credits; returns the new balance. */
  async addCredits(username: string, amount: number, note: string | null = null): Promise<number> {
    checkAmount(amount, false);
    const account = await this.show(username);
    const balance = await this.storage.transaction((tx) => this.ledger.topUp(tx, account.id, amount, this.clock.now().toISOString(), note));
    await this.cache?.invalidate(username);
    return balance;
  }

  async usage(username: string, since?: string): Promise<LedgerEntry[]> {
    const account = await this.show(username);
    return this.ledger.entries(account.id, since);
  }

  /** The balance as `getcredits.aspx` reports it: 0 for an unknown user (compat-notes). */
  async balance(username: string): Promise<number> {
    return (await this.accounts.findByUsername(username))?.credits ?? 0;
  }

  async isEmpty(): Promise<boolean> {
    return (await this.accounts.count()) === 0;
  }

  private async change(username: string, changes: Parameters<AccountRepository['update']>[1]): Promise<Account> {
    const account = await this.accounts.update(username, changes);
    await this.cache?.invalidate(username);
    if (!account) throw new AccountError('NOT_FOUND', `no account named ${username}`);
    return account;
  }
}

/** Largest rate limits an operator may set; beyond them a limit means nothing. */
export const MAX_RATE_PER_SECOND = 1_000_000;
export const MAX_RATE_PER_DAY = 1_000_000_000;

function checkLimit(value: number | null, max: number, what: string): void {
  if (value !== null && (!Number.isInteger(value) || value < 0 || value > max)) {
    throw new AccountError('INVALID', `${what} must be a whole number from 0 (no limit) to ${max}`);
  }
}

function checkAmount(amount: number, zeroAllowed: boolean): void {
  if (!Number.isInteger(amount) || amount < (zeroAllowed ? 0 : 1) || amount > MAX_TOP_UP) {
    throw new AccountError('INVALID', `credits must be a whole number from ${zeroAllowed ? 0 : 1} to ${MAX_TOP_UP}`);
  }
}
