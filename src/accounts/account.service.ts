import type { CreditLedgerRepository, LedgerEntry } from '../credits/credit-ledger.repository.js';
import type { Clock } from '../shared/clock.js';
import { SYSTEM_ACTOR, type Actor, type AuditLog } from '../audit/audit-log.js';
import type { Storage } from '../storage/create-database.js';
import { DomainError } from '../shared/domain-error.js';
import type { Tx } from '../storage/database.js';
import type { Account, AccountRateLimits } from './account.js';
import { accountStatus, USERNAME_PATTERN } from './account.js';
import type { AccountRepository } from './account.repository.js';
import { TRIAL_CREDITS_NOTE } from './ledger-queries.js';
import { generateApiKey, hashApiKey, KEY_PREFIX_LENGTH, type RandomBytes } from './api-key.js';
import { ApiKeyRepository, settingsOfInfo, type ApiKeyInfo, type ApiKeyWithSpend } from './api-key.repository.js';
import { applySettingsChange, KeyRuleError, NO_SETTINGS, type KeySettings, type KeySettingsChange } from './key-rules.js';
import { OPERATIONS } from '../catalogue/operations.js';

export type AccountErrorCode = 'NOT_FOUND' | 'ALREADY_EXISTS' | 'INVALID' | 'INSUFFICIENT_CREDITS';

/** An operator's request that cannot be carried out (bad name, unknown account...). */
export class AccountError extends DomainError<AccountErrorCode> {
  override readonly name = 'AccountError';
}

/** A grant or removal of credits, as the console, the admin API and the CLI ask for it. */
export interface CreditChange {
  /** The account's username. */
  readonly account: string;
  readonly amount: number;
  /** The operator's reference (an invoice, a ticket): a repeat of it answers the first change. Empty or absent: none. */
  readonly reference?: string | null | undefined;
  /** Free text recorded on the ledger row. */
  readonly note?: string | null | undefined;
}

export interface CreditChangeResult {
  /** The balance after the change; for a repeated reference, after the first change, as it answered. */
  readonly credits: number;
  /** True when the reference had made this change already: nothing moved this time. */
  readonly replayed: boolean;
}

/** Largest single top-up; keeps balances far from integer overflow on either engine. */
export const MAX_TOP_UP = 1_000_000_000;

/** Live keys an account may hold: each lookup compares the presented key with all of them. */
export const MAX_LIVE_KEYS = 20;

/** Longest grace period of a rolled key (30 days), and the default (24 hours). */
export const MAX_ROLL_GRACE_SECONDS = 30 * 24 * 3600;
export const DEFAULT_ROLL_GRACE_SECONDS = 24 * 3600;

/** The audit action of a self-service sign-up; the per-address bound counts these rows (UserService.signUp). */
export const SIGNUP_AUDIT_ACTION = 'account.signup';

/** Key names: 1 to 64 letters, digits, spaces and . _ @ : - */
export const KEY_NAME_PATTERN = /^[\p{L}\p{N} ._@:-]{1,64}$/u;

/** Account and credit administration, shared by the CLI, start-up seeding and tests. */
export class AccountService {
  private readonly keys: ApiKeyRepository;

  constructor(
    private readonly storage: Pick<Storage, 'db' | 'transaction' | 'serialize'>,
    private readonly accounts: AccountRepository,
    private readonly ledger: CreditLedgerRepository,
    private readonly clock: Clock,
    /**
     * Told about every change this service makes, after it is committed, so lookups see it at once:
     * this process's account cache and, with Redis, every other instance (AccountChangeFeed).
     */
    private readonly cache?: { invalidate(username: string): void | Promise<void> },
    private readonly random?: RandomBytes,
    /** Where changes are recorded (issue 16); none: not recorded (tests of other parts). */
    private readonly audit?: AuditLog,
    /** Who the changes are recorded as made by (withActor). */
    private readonly actor: Actor = SYSTEM_ACTOR,
  ) {
    this.keys = new ApiKeyRepository(storage.db);
  }

  /** The same service, recording its changes as made by `actor` (an API user, the CLI). */
  withActor(actor: Actor): AccountService {
    return new AccountService(this.storage, this.accounts, this.ledger, this.clock, this.cache, this.random, this.audit, actor);
  }

  private async record(
    tx: Tx,
    action: string,
    target: string,
    before?: Record<string, unknown>,
    after?: Record<string, unknown>,
    targetKind: 'account' | 'api-key' = 'account',
  ): Promise<void> {
    await this.audit?.record(tx, this.actor, { action, targetKind, target, before, after });
  }

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
      const created = await this.accounts.insert(tx, { username, createdAt: now });
      await this.keys.insert(tx, { accountId: created.id, name: 'default', ...secretParts(apiKey), createdAt: now });
      if (credits > 0) await this.ledger.change(tx, created.id, { delta: credits, createdAt: now, reference: null, note: 'initial credits' });
      await this.record(tx, 'account.create', username, undefined, { credits });
      return { ...created, credits };
    });
    return { account: await this.show(account.username), apiKey };
  }

  /**
   * The account of a self-service sign-up (UserService.signUp), in the caller's transaction, which
   * has checked the name. It starts without a key: its owner creates named keys in the console or
   * the API, each secret shown once there. It requires its API key on every binding: anyone may
   * sign up and a username is no secret, so the XML bindings must not spend its credits on the
   * username alone. The trial credits are one top-up row noted TRIAL_CREDITS_NOTE.
   */
  async openForSignUp(tx: Tx, username: string, trialCredits: number): Promise<Account> {
    if (!USERNAME_PATTERN.test(username)) throw new AccountError('INVALID', 'username must be 1 to 64 characters of letters, digits and . _ @ -');
    checkAmount(trialCredits, true);
    if (await this.accounts.exists(tx, username)) throw new AccountError('ALREADY_EXISTS', `the name ${username} is taken`);
    const now = this.clock.now().toISOString();
    const created = await this.accounts.insert(tx, { username, createdAt: now, requireApiKey: true });
    const credits = trialCredits > 0 ? ((await this.ledger.change(tx, created.id, { delta: trialCredits, createdAt: now, reference: null, note: TRIAL_CREDITS_NOTE }))?.balance ?? 0) : 0;
    await this.record(tx, SIGNUP_AUDIT_ACTION, username, undefined, { credits, requireApiKey: true });
    return { ...created, credits };
  }

  async show(username: string): Promise<Account> {
    const account = await this.accounts.findByUsername(username);
    if (!account) throw new AccountError('NOT_FOUND', `no account named ${username}`);
    return account;
  }

  /** Replaces every key of the account with one new key; the old ones stop working at once. */
  async rotateKey(username: string): Promise<string> {
    const account = await this.show(username);
    const apiKey = generateApiKey(this.random);
    const now = this.clock.now().toISOString();
    await this.storage.transaction(async (tx) => {
      const revoked = await this.keys.revoke(tx, account.id, now);
      const key = await this.keys.insert(tx, { accountId: account.id, name: 'default', ...secretParts(apiKey), createdAt: now });
      await this.record(tx, 'key.rotate', username, { liveKeys: revoked }, { keyId: key.id, keyPrefix: key.prefix });
    });
    await this.cache?.invalidate(username);
    return apiKey;
  }

  /** Every key of the account, revoked and expired ones included (never a secret). */
  async listKeys(username: string): Promise<ApiKeyInfo[]> {
    return this.keys.list((await this.show(username)).id);
  }

  /** Every key of the account with its spend this period (its cap's, else this UTC month). */
  async listKeysWithSpend(username: string): Promise<ApiKeyWithSpend[]> {
    return this.keys.listWithSpend((await this.show(username)).id, this.clock.now().getTime());
  }

  /** The account's live key named `name` (the CLI names keys), else its newest key of that name. */
  async findKey(username: string, name: string): Promise<ApiKeyWithSpend> {
    const keys = await this.listKeysWithSpend(username);
    const now = this.clock.now().toISOString();
    const named = keys.filter((k) => k.name === name);
    const key = named.find((k) => k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now)) ?? named.at(-1);
    if (!key) throw new AccountError('NOT_FOUND', `account ${username} has no key named ${name}`);
    return key;
  }

  /**
   * Changes a key's own rules (issue 33): what `change` gives, the rest unchanged (null clears a
   * rule). Audited with the settings before and after; lookups see it at once (the account cache
   * is told, as for any key change).
   */
  async updateKey(username: string, keyId: number, change: KeySettingsChange): Promise<ApiKeyInfo> {
    const account = await this.show(username);
    const before = await this.keys.find(account.id, keyId);
    if (!before || before.revokedAt !== null) throw new AccountError('NOT_FOUND', `account ${username} has no live key ${keyId}`);
    const current = settingsOfInfo(before);
    const next = checkedSettings(current, change);
    const recount = next.cap !== null && (current.cap === null || current.cap.period !== next.cap.period);
    await this.storage.transaction(async (tx) => {
      await this.keys.updateSettings(tx, account.id, keyId, next, recount, this.clock.now().getTime());
      await this.record(tx, 'key.update', username, { keyId, keyName: before.name, ...current }, { keyId, keyName: before.name, ...next });
    });
    await this.cache?.invalidate(username);
    return (await this.keys.find(account.id, keyId)) as ApiKeyInfo;
  }

  /** A new key beside the existing ones, with its own rules if given; the secret is returned this once only. */
  async createKey(username: string, name: string, settingsChange: KeySettingsChange = {}): Promise<{ key: ApiKeyInfo; apiKey: string }> {
    checkKeyName(name);
    const settings = checkedSettings(NO_SETTINGS, settingsChange);
    const account = await this.show(username);
    if (this.liveCount(account) >= MAX_LIVE_KEYS) throw new AccountError('INVALID', `an account may have at most ${MAX_LIVE_KEYS} live keys; revoke one first`);
    const apiKey = generateApiKey(this.random);
    const now = this.clock.now().toISOString();
    const key = await this.storage.transaction(async (tx) => {
      // One account's key creates run one at a time on every instance, so two requests cannot
      // both find the name free or both take the last place (issue 28).
      await this.storage.serialize(tx, `api-keys:${account.id}`);
      const live = await this.keys.liveNames(tx, account.id, now);
      if (live.includes(name)) throw new AccountError('ALREADY_EXISTS', `account ${username} already has a live key named ${name}`);
      if (live.length >= MAX_LIVE_KEYS) throw new AccountError('INVALID', `an account may have at most ${MAX_LIVE_KEYS} live keys; revoke one first`);
      const inserted = await this.keys.insert(tx, { accountId: account.id, name, ...secretParts(apiKey), createdAt: now, settings });
      await this.record(tx, 'key.create', username, undefined, { keyId: inserted.id, keyName: name, keyPrefix: inserted.prefix, ...(settings === NO_SETTINGS ? {} : settings) }, 'account');
      return inserted;
    });
    await this.cache?.invalidate(username);
    return { key, apiKey };
  }

  /** Revokes one key: refused from the next lookup on (see AccountCache for other instances). */
  async revokeKey(username: string, keyId: number): Promise<ApiKeyInfo> {
    const account = await this.show(username);
    const before = await this.keys.find(account.id, keyId);
    if (!before) throw new AccountError('NOT_FOUND', `account ${username} has no key ${keyId}`);
    await this.storage.transaction(async (tx) => {
      await this.keys.revoke(tx, account.id, this.clock.now().toISOString(), keyId);
      await this.record(tx, 'key.revoke', username, { keyId, keyName: before.name, revokedAt: before.revokedAt }, { keyId, revoked: true });
    });
    await this.cache?.invalidate(username);
    return (await this.keys.find(account.id, keyId)) as ApiKeyInfo;
  }

  /**
   * Rolls a key: a new key with the same name now, while the old one keeps working for
   * `graceSeconds` (default 24 h) so clients can be moved over without an outage.
   */
  async rollKey(username: string, keyId: number, graceSeconds = DEFAULT_ROLL_GRACE_SECONDS): Promise<{ key: ApiKeyInfo; apiKey: string; old: ApiKeyInfo }> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_ROLL_GRACE_SECONDS) {
      throw new AccountError('INVALID', `the grace period must be a whole number of seconds from 0 to ${MAX_ROLL_GRACE_SECONDS}`);
    }
    const account = await this.show(username);
    const old = await this.keys.find(account.id, keyId);
    const nowMs = this.clock.now().getTime();
    if (!old || old.revokedAt !== null || (old.expiresAt !== null && Date.parse(old.expiresAt) <= nowMs)) {
      throw new AccountError('NOT_FOUND', `account ${username} has no live key ${keyId}`);
    }
    if (this.liveCount(account) >= MAX_LIVE_KEYS) throw new AccountError('INVALID', `an account may have at most ${MAX_LIVE_KEYS} live keys; revoke one first`);
    const apiKey = generateApiKey(this.random);
    const now = new Date(nowMs).toISOString();
    const key = await this.storage.transaction(async (tx) => {
      const expiresAt = new Date(nowMs + graceSeconds * 1000).toISOString();
      await this.keys.expire(tx, account.id, keyId, expiresAt);
      // The new key is the same product: its rules, and its cap's spend so far (issue 33).
      const spend = await this.keys.spendOf(tx, keyId);
      const inserted = await this.keys.insert(tx, { accountId: account.id, name: old.name, ...secretParts(apiKey), createdAt: now, settings: settingsOfInfo(old), spend });
      await this.record(tx, 'key.roll', username, { keyId, expiresAt: old.expiresAt }, { keyId, expiresAt, newKeyId: inserted.id, keyPrefix: inserted.prefix });
      return inserted;
    });
    await this.cache?.invalidate(username);
    return { key, apiKey, old: (await this.keys.find(account.id, keyId)) as ApiKeyInfo };
  }

  private liveCount(account: Account): number {
    const now = this.clock.now().getTime();
    return account.apiKeys.filter((k) => k.expiresAtMs === null || k.expiresAtMs > now).length;
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

  /**
   * Grants credits: a `topup` ledger row with its reference and note, the audit row and the
   * re-arming of the low-credit alerts the new balance is above, in one transaction. The one grant
   * path of the console, the admin API and the CLI (issue 22). A grant repeated with the
   * reference of an earlier one grants nothing and answers the first one's result (`replayed`);
   * with another amount it is refused as ALREADY_EXISTS (issue 23).
   */
  grantCredits(change: CreditChange): Promise<CreditChangeResult> {
    return this.changeCredits('topup', change);
  }

  /**
   * Takes credits back (a `removal` row), refused as INSUFFICIENT_CREDITS when the balance is
   * smaller; idempotent by reference like grantCredits.
   */
  removeCredits(change: CreditChange): Promise<CreditChangeResult> {
    return this.changeCredits('removal', change);
  }

  private async changeCredits(kind: 'topup' | 'removal', change: CreditChange): Promise<CreditChangeResult> {
    const { amount } = change;
    checkAmount(amount, false);
    // An empty reference is none (a form's empty field).
    const reference = change.reference === undefined || change.reference === '' ? null : change.reference;
    const note = change.note ?? null;
    const account = await this.show(change.account);
    const delta = kind === 'topup' ? amount : -amount;
    const what = kind === 'topup' ? 'grant' : 'removal';
    const outcome = await this.storage.transaction(async (tx) => {
      if (reference !== null) {
        // Changes with a reference to one account run one at a time on every instance, so a
        // repeat sent at once finds the first one's row (the primary key holds in any case).
        await this.storage.serialize(tx, `credit-reference:${account.id}`);
        const earlier = await this.ledger.byReference(tx, account.id, kind, reference);
        if (earlier) {
          if (earlier.delta !== delta) throw new AccountError('ALREADY_EXISTS', `reference ${reference} was used for a ${what} of ${Math.abs(earlier.delta)} credits to ${account.username} already`);
          return { credits: earlier.balanceAfter, replayed: true };
        }
      }
      const moved = await this.ledger.change(tx, account.id, { delta, createdAt: this.clock.now().toISOString(), reference, note });
      if (!moved) return undefined;
      if (reference !== null) await this.ledger.recordReference(tx, account.id, kind, reference, moved.ledgerId);
      const action = kind === 'topup' ? 'credits.grant' : 'credits.remove';
      await this.record(tx, action, account.username, { credits: moved.balance - delta }, { credits: moved.balance, amount, reference, note });
      return { credits: moved.balance, replayed: false };
    });
    if (!outcome) throw new AccountError('INSUFFICIENT_CREDITS', `account ${account.username} has fewer than ${amount} credits`);
    if (!outcome.replayed) await this.cache?.invalidate(account.username);
    return outcome;
  }

  /** Accounts by username, optionally filtered by a part of it. */
  list(options: { search?: string | undefined; limit: number; offset: number }): Promise<{ accounts: Account[]; total: number }> {
    return this.accounts.list(options);
  }

  /** Open, enabled accounts at or below `threshold` credits, lowest first (the operator overview). */
  lowBalance(threshold: number, limit: number): Promise<{ accounts: Account[]; total: number }> {
    return this.accounts.lowBalance(threshold, limit);
  }

  /**
   * Deletes an account that has never had a ledger row; one with a ledger is closed instead
   * (credits are money: its history stays). Returns what was done.
   */
  async deleteOrClose(username: string, ledger: { hasRows(accountId: number, tx: Tx): Promise<boolean> }): Promise<'deleted' | 'closed'> {
    const account = await this.show(username);
    const before = describeForAudit(account);
    const outcome = await this.storage.transaction(async (tx) => {
      if (await ledger.hasRows(account.id, tx)) {
        await this.accounts.close(tx, account.id, this.clock.now().toISOString());
        await this.record(tx, 'account.close', username, before, { status: 'closed' });
        return 'closed' as const;
      }
      // What went with the account is in the audit row's `before`: the log keeps it after the rows are gone.
      const removed = await this.accounts.delete(tx, account.id);
      await this.record(tx, 'account.delete', username, { ...before, removed }, undefined);
      return 'deleted' as const;
    });
    await this.cache?.invalidate(username);
    return outcome;
  }

  /** The account's ledger rows, oldest first; only those of its key `keyName` when given (an unknown name is NOT_FOUND). */
  async usage(username: string, since?: string, keyName?: string): Promise<LedgerEntry[]> {
    const account = await this.show(username);
    if (keyName !== undefined && !(await this.keys.list(account.id)).some((k) => k.name === keyName)) {
      throw new AccountError('NOT_FOUND', `account ${username} has no key named ${keyName}`);
    }
    return this.ledger.entries(account.id, since, keyName);
  }

  /** The balance as `getcredits.aspx` reports it: 0 for an unknown user (compat-notes). */
  async balance(username: string): Promise<number> {
    return (await this.accounts.findByUsername(username))?.credits ?? 0;
  }

  async isEmpty(): Promise<boolean> {
    return (await this.accounts.count()) === 0;
  }

  private async change(username: string, changes: Parameters<AccountRepository['update']>[2]): Promise<Account> {
    const before = await this.show(username);
    if (before.closedAt !== null && changes.disabled === false) throw new AccountError('INVALID', `account ${username} is closed and cannot be enabled again`);
    // The change and its audit row commit together.
    const account = await this.storage.transaction(async (tx) => {
      const updated = await this.accounts.update(tx, username, changes);
      if (updated) await this.record(tx, 'account.update', username, describeForAudit(before), describeForAudit(updated));
      return updated;
    });
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

/** The settings of an account as the audit log records them. */
function describeForAudit(account: Account): Record<string, unknown> {
  return { status: accountStatus(account), disabled: account.disabled, requireApiKey: account.requireApiKey, rateLimits: account.rateLimits };
}

/** What is stored of a new key: its visible prefix and its hash. */
function secretParts(apiKey: string): { prefix: string; hash: string } {
  return { prefix: apiKey.slice(0, KEY_PREFIX_LENGTH), hash: hashApiKey(apiKey) };
}

function checkKeyName(name: string): void {
  if (!KEY_NAME_PATTERN.test(name)) throw new AccountError('INVALID', 'a key name must be 1 to 64 letters, digits, spaces or . _ @ : -');
}

function checkAmount(amount: number, zeroAllowed: boolean): void {
  if (!Number.isInteger(amount) || amount < (zeroAllowed ? 0 : 1) || amount > MAX_TOP_UP) {
    throw new AccountError('INVALID', `credits must be a whole number from ${zeroAllowed ? 0 : 1} to ${MAX_TOP_UP}`);
  }
}

/** The settings after a change, or INVALID with the rule's message. */
function checkedSettings(current: KeySettings, change: KeySettingsChange): KeySettings {
  if (Object.keys(change).length === 0) return current;
  try {
    return applySettingsChange(current, change, OPERATIONS);
  } catch (error) {
    if (error instanceof KeyRuleError) throw new AccountError('INVALID', error.message);
    throw error;
  }
}
