import type { Selectable } from 'kysely';
import type { AccountsTable, ApiKeysTable, Db, Tx } from '../storage/database.js';
import { PreparedQuery } from '../storage/prepared-query.js';
import { toAccount, type Account, type AccountRateLimits } from './account.js';

/** Persistence of accounts. Credit movements live in CreditLedgerRepository. */
export class AccountRepository {
  /** Every authenticated request runs this one. */
  private readonly byUsername: PreparedQuery<Selectable<AccountsTable>>;
  /** The keys that have not been revoked; expired ones are refused when verified (matchApiKey). */
  private readonly liveKeys: PreparedQuery<Pick<Selectable<ApiKeysTable>, 'id' | 'key_hash' | 'expires_at'>>;

  constructor(private readonly db: Db) {
    this.byUsername = new PreparedQuery(1, (p) => db.selectFrom('accounts').selectAll().where('username', '=', p(0)));
    this.liveKeys = new PreparedQuery(1, (p) =>
      db.selectFrom('api_keys').select(['id', 'key_hash', 'expires_at']).where('account_id', '=', p(0)).where('revoked_at', 'is', null).orderBy('id'),
    );
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    const { rows } = await this.byUsername.execute(this.db, username);
    const row = rows[0];
    if (!row) return undefined;
    const keys = await this.liveKeys.execute(this.db, row.id);
    return toAccount(row, keys.rows);
  }

  /** A new account, without keys yet (ApiKeyRepository.insert in the same transaction). */
  async insert(trx: Tx, input: { username: string; createdAt: string }): Promise<Account> {
    const row = await trx
      .insertInto('accounts')
      .values({ username: input.username, credits: 0, disabled: 0, require_api_key: 0, created_at: input.createdAt })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAccount(row, []);
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('accounts').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(
    username: string,
    changes: { disabled?: boolean; requireApiKey?: boolean; rateLimits?: Partial<AccountRateLimits> },
  ): Promise<Account | undefined> {
    const row = await this.db
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
    const keys = await this.liveKeys.execute(this.db, row.id);
    return toAccount(row, keys.rows);
  }
}
