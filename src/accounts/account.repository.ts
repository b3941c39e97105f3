import type { Selectable } from 'kysely';
import type { AccountsTable, Db, Tx } from '../storage/database.js';
import { PreparedQuery } from '../storage/prepared-query.js';
import { toAccount, type Account, type AccountRateLimits } from './account.js';

/** Persistence of accounts. Credit movements live in CreditLedgerRepository. */
export class AccountRepository {
  /** Every authenticated request runs this one. */
  private readonly byUsername: PreparedQuery<Selectable<AccountsTable>>;

  constructor(private readonly db: Db) {
    this.byUsername = new PreparedQuery(1, (p) => db.selectFrom('accounts').selectAll().where('username', '=', p(0)));
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    const { rows } = await this.byUsername.execute(this.db, username);
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async insert(tx: Tx, input: { username: string; apiKeyHash: string; createdAt: string }): Promise<Account> {
    const row = await tx.db
      .insertInto('accounts')
      .values({ username: input.username, api_key_hash: input.apiKeyHash, credits: 0, disabled: 0, require_api_key: 0, created_at: input.createdAt })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAccount(row);
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('accounts').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(
    username: string,
    changes: { apiKeyHash?: string; disabled?: boolean; requireApiKey?: boolean; rateLimits?: Partial<AccountRateLimits> },
  ): Promise<Account | undefined> {
    const row = await this.db
      .updateTable('accounts')
      .set({
        ...(changes.apiKeyHash !== undefined ? { api_key_hash: changes.apiKeyHash } : {}),
        ...(changes.disabled !== undefined ? { disabled: changes.disabled ? 1 : 0 } : {}),
        ...(changes.requireApiKey !== undefined ? { require_api_key: changes.requireApiKey ? 1 : 0 } : {}),
        ...(changes.rateLimits?.perSecond !== undefined ? { rate_limit_per_second: changes.rateLimits.perSecond } : {}),
        ...(changes.rateLimits?.perDay !== undefined ? { rate_limit_per_day: changes.rateLimits.perDay } : {}),
      })
      .where('username', '=', username)
      .returningAll()
      .executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }
}
