import { sql, type Selectable } from 'kysely';
import type { AccountsTable, Db, Tx } from '../storage/database.js';
import { PreparedQuery } from '../storage/prepared-query.js';
import { toAccount, type Account, type AccountRateLimits, type LiveKeyRow } from './account.js';

/** Persistence of accounts. Credit movements live in CreditLedgerRepository. */
export class AccountRepository {
  /** Every authenticated request runs this one. */
  private readonly byUsername: PreparedQuery<Selectable<AccountsTable>>;
  /** The keys that have not been revoked; expired ones are refused when verified (matchApiKey). */
  private readonly liveKeys: PreparedQuery<LiveKeyRow>;

  constructor(private readonly db: Db) {
    this.byUsername = new PreparedQuery(1, (p) => db.selectFrom('accounts').selectAll().where('username', '=', p(0)));
    this.liveKeys = new PreparedQuery(1, (p) =>
      db
        .selectFrom('api_keys')
        .select(['id', 'name', 'key_hash', 'expires_at', 'cap_credits', 'cap_period', 'operations', 'rate_per_second', 'rate_per_day', 'allowed_ips', 'labels'])
        .where('account_id', '=', p(0)).where('revoked_at', 'is', null).orderBy('id'),
    );
  }

  /** Whether the name is taken, read in `tx` (a check just before an insert in the same transaction). */
  async exists(tx: Tx, username: string): Promise<boolean> {
    return (await tx.db.selectFrom('accounts').select('id').where('username', '=', username).executeTakeFirst()) !== undefined;
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    const { rows } = await this.byUsername.execute(this.db, username);
    const row = rows[0];
    if (!row) return undefined;
    const keys = await this.liveKeys.execute(this.db, row.id);
    return toAccount(row, keys.rows);
  }

  /** A new account, without keys yet (ApiKeyRepository.insert in the same transaction). */
  async insert(tx: Tx, input: { username: string; createdAt: string; requireApiKey?: boolean }): Promise<Account> {
    const row = await tx.db
      .insertInto('accounts')
      .values({ username: input.username, credits: 0, disabled: 0, require_api_key: input.requireApiKey === true ? 1 : 0, created_at: input.createdAt })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAccount(row, []);
  }

  /** Accounts by username, optionally those whose username contains `search`. */
  async list(options: { search?: string | undefined; limit: number; offset: number }): Promise<{ accounts: Account[]; total: number }> {
    let query = this.db.selectFrom('accounts');
    if (options.search !== undefined && options.search !== '') {
      // LIKE wildcards in the search are matched literally. lower() on both sides: LIKE ignores
      // case on SQLite and not on PostgreSQL, so this one query answers alike on both.
      const pattern = `%${options.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query = query.where(sql<boolean>`lower(username) like ${pattern} escape '\\'`);
    }
    const rows = await query.selectAll().orderBy('username').limit(options.limit).offset(options.offset).execute();
    const total = await query.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return { accounts: rows.map((r) => toAccount(r, [])), total: Number(total.n) };
  }

  /**
   * Open, enabled accounts with at most `threshold` credits, lowest balance first (then by
   * username), and how many there are. A scan of the accounts table: see migration 0011 for why
   * credits has no index.
   */
  async lowBalance(threshold: number, limit: number): Promise<{ accounts: Account[]; total: number }> {
    const query = this.db.selectFrom('accounts').where('closed_at', 'is', null).where('disabled', '=', 0).where('credits', '<=', threshold);
    const rows = await query.selectAll().orderBy('credits').orderBy('username').limit(limit).execute();
    const total = await query.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return { accounts: rows.map((r) => toAccount(r, [])), total: Number(total.n) };
  }

  /** Closes an account: disabled for good, every key revoked, the ledger kept. */
  async close(tx: Tx, accountId: number, at: string): Promise<void> {
    await tx.db.updateTable('accounts').set({ disabled: 1, closed_at: at }).where('id', '=', accountId).execute();
    await tx.db.updateTable('api_keys').set({ revoked_at: at }).where('account_id', '=', accountId).where('revoked_at', 'is', null).execute();
  }

  /**
   * Deletes an account that has no ledger rows, with every row that refers to it: its users (their
   * sessions and invites), keys, webhook endpoints (their outbox messages and deliveries go with
   * them, ON DELETE CASCADE) and low-credit alert settings. Answers what went, for the audit row.
   * (Issue 23 finding 2: an endpoint or thresholds made the delete a foreign-key 500, and a
   * customer invited to an empty account could make it undeletable that way.)
   */
  async delete(tx: Tx, accountId: number): Promise<{ users: string[]; keys: number; webhookEndpoints: number[]; alertThresholds: boolean }> {
    const users = tx.db.selectFrom('users').select('id').where('account_id', '=', accountId);
    const userNames = (await tx.db.selectFrom('users').select('name').where('account_id', '=', accountId).orderBy('name').execute()).map((u) => u.name);
    await tx.db.deleteFrom('sessions').where('user_id', 'in', users).execute();
    await tx.db.deleteFrom('invites').where('user_id', 'in', users).execute();
    await tx.db.deleteFrom('users').where('account_id', '=', accountId).execute();
    const keys = await tx.db.deleteFrom('api_keys').where('account_id', '=', accountId).executeTakeFirst();
    const endpoints = await tx.db.deleteFrom('webhook_endpoints').where('account_id', '=', accountId).returning('id').execute();
    await tx.db.deleteFrom('credit_alert_fired').where('account_id', '=', accountId).execute();
    const settings = await tx.db.deleteFrom('credit_alert_settings').where('account_id', '=', accountId).executeTakeFirst();
    await tx.db.deleteFrom('accounts').where('id', '=', accountId).execute();
    return { users: userNames, keys: Number(keys.numDeletedRows), webhookEndpoints: endpoints.map((e) => e.id).sort((x, y) => x - y), alertThresholds: Number(settings.numDeletedRows) > 0 };
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('accounts').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(
    tx: Tx,
    username: string,
    changes: { disabled?: boolean; requireApiKey?: boolean; rateLimits?: Partial<AccountRateLimits> },
  ): Promise<Account | undefined> {
    const row = await tx.db
      .updateTable('accounts')
      .set({
        ...(changes.disabled !== undefined ? { disabled: changes.disabled ? 1 : 0 } : {}),
        ...(changes.requireApiKey !== undefined ? { require_api_key: changes.requireApiKey ? 1 : 0 } : {}),
        ...(changes.rateLimits?.perSecond !== undefined ? { rate_limit_per_second: changes.rateLimits.perSecond } : {}),
        ...(changes.rateLimits?.perDay !== undefined ? { rate_limit_per_day: changes.rateLimits.perDay } : {}),
      })
      .where('username', '=', username)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    const keys = await this.liveKeys.execute(tx.db, row.id);
    return toAccount(row, keys.rows);
  }
}
