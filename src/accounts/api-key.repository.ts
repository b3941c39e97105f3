import type { Selectable } from 'kysely';
import type { ApiKeysTable, Db, Tx } from '../storage/database.js';

/** An API key as operators and customers see it: never its secret or hash. */
export interface ApiKeyInfo {
  readonly id: number;
  readonly name: string;
  /** The key's first characters; null for a key made before keys had names (migration 0004). */
  readonly prefix: string | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
  /** Set on a rolled key: it works until then. */
  readonly expiresAt: string | null;
}

function toInfo(row: Selectable<ApiKeysTable>): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
  };
}

/** Persistence of API keys (hashes only; api-key.ts makes and checks them). */
export class ApiKeyRepository {
  constructor(private readonly db: Db) {}

  async insert(tx: Tx, input: { accountId: number; name: string; prefix: string; hash: string; createdAt: string }): Promise<ApiKeyInfo> {
    const row = await tx.db
      .insertInto('api_keys')
      .values({ account_id: input.accountId, name: input.name, prefix: input.prefix, key_hash: input.hash, created_at: input.createdAt })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toInfo(row);
  }

  /** Every key of the account, revoked ones included, oldest first. */
  async list(accountId: number): Promise<ApiKeyInfo[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    return rows.map(toInfo);
  }

  async find(accountId: number, keyId: number): Promise<ApiKeyInfo | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst();
    return row ? toInfo(row) : undefined;
  }

  /** The names of the account's live keys (not revoked, not expired at `now`), read in `tx`. */
  async liveNames(tx: Tx, accountId: number, now: string): Promise<string[]> {
    const rows = await tx.db
      .selectFrom('api_keys')
      .select('name')
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .execute();
    return rows.map((r) => r.name);
  }

  /** Revokes one key (or, without `keyId`, every key of the account); returns how many were live. */
  async revoke(tx: Tx, accountId: number, at: string, keyId?: number): Promise<number> {
    let query = tx.db.updateTable('api_keys').set({ revoked_at: at }).where('account_id', '=', accountId).where('revoked_at', 'is', null);
    if (keyId !== undefined) query = query.where('id', '=', keyId);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Makes a live key expire at `at` (unless it already expires sooner). */
  async expire(tx: Tx, accountId: number, keyId: number, at: string): Promise<void> {
    await tx.db
      .updateTable('api_keys')
      .set({ expires_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
      .execute();
  }

  /** Records when keys were last used (KeyUsageRecorder batches these). */
  async touch(tx: Tx, uses: ReadonlyMap<number, string>): Promise<void> {
    for (const [id, at] of uses) await tx.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
