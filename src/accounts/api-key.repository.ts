import { sql, type Selectable } from 'kysely';
import type { ApiKeysTable, Db, Tx } from '../storage/database.js';
import { capPeriodKey, settingsColumns, settingsOf, type KeySettings } from './key-rules.js';

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
  /** The key's own rules (issue 33); each null when not set. */
  readonly cap: KeySettings['cap'];
  readonly operations: KeySettings['operations'];
  readonly perSecond: number | null;
  readonly perDay: number | null;
  readonly allowedIps: KeySettings['allowedIps'];
  readonly labels: KeySettings['labels'];
}

/** A key with what it spent in its cap's period (or, without a cap, this UTC month). */
export interface ApiKeyWithSpend extends ApiKeyInfo {
  readonly spend: { readonly period: 'day' | 'month' | 'total'; readonly periodKey: string; readonly credits: number };
}

function toInfo(row: Selectable<ApiKeysTable>): ApiKeyInfo {
  const settings = settingsOf(row);
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
    cap: settings.cap,
    operations: settings.operations,
    perSecond: settings.perSecond,
    perDay: settings.perDay,
    allowedIps: settings.allowedIps,
    labels: settings.labels,
  };
}

/** The settings of a key as ApiKeyInfo holds them. */
export function settingsOfInfo(key: ApiKeyInfo): KeySettings {
  return { cap: key.cap, operations: key.operations, perSecond: key.perSecond, perDay: key.perDay, allowedIps: key.allowedIps, labels: key.labels };
}

/** Persistence of API keys (hashes only; api-key.ts makes and checks them). */
export class ApiKeyRepository {
  constructor(private readonly db: Db) {}

  async insert(
    tx: Tx,
    input: { accountId: number; name: string; prefix: string; hash: string; createdAt: string; settings?: KeySettings; spend?: { spent: number; periodKey: string | null } },
  ): Promise<ApiKeyInfo> {
    const row = await tx.db
      .insertInto('api_keys')
      .values({
        account_id: input.accountId,
        name: input.name,
        prefix: input.prefix,
        key_hash: input.hash,
        created_at: input.createdAt,
        ...(input.settings ? settingsColumns(input.settings) : {}),
        ...(input.spend ? { cap_spent: input.spend.spent, cap_period_key: input.spend.periodKey } : {}),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toInfo(row);
  }

  /** A key's spend as its cap counts it (copied to the key that replaces it when rolled). */
  async spendOf(tx: Tx, keyId: number): Promise<{ spent: number; periodKey: string | null }> {
    const row = await tx.db.selectFrom('api_keys').select(['cap_spent', 'cap_period_key']).where('id', '=', keyId).executeTakeFirstOrThrow();
    return { spent: row.cap_spent, periodKey: row.cap_period_key };
  }

  /**
   * Writes a key's settings. When its cap is set or changed, the cap's count restarts from what the
   * key's ledger rows say it spent in the current period, so a cap set mid-month counts the
   * month's spend so far. The key's row is updated (locked) first and its ledger summed after:
   * a debit of the key in flight has then committed its row (on PostgreSQL each statement reads
   * what was committed before it), so none is missed.
   */
  async updateSettings(tx: Tx, accountId: number, keyId: number, settings: KeySettings, recount: boolean, nowMs: number): Promise<void> {
    await tx.db.updateTable('api_keys').set(settingsColumns(settings)).where('account_id', '=', accountId).where('id', '=', keyId).execute();
    if (!recount || settings.cap === null) return;
    const periodKey = capPeriodKey(settings.cap.period, nowMs);
    const spent = await this.spentSince(tx, accountId, keyId, periodStart(settings.cap.period, nowMs));
    await tx.db.updateTable('api_keys').set({ cap_spent: spent, cap_period_key: periodKey }).where('id', '=', keyId).execute();
  }

  /** Credits the key's lookups were charged since `from` (ISO; null: ever), from the ledger. */
  async spentSince(tx: Tx | undefined, accountId: number, keyId: number, from: string | null): Promise<number> {
    let query = (tx?.db ?? this.db)
      .selectFrom('ledger')
      .select(sql<string | number | null>`sum(0 - delta)`.as('spent'))
      .where('account_id', '=', accountId)
      .where('api_key_id', '=', keyId)
      .where('kind', '=', 'debit');
    if (from !== null) query = query.where('created_at', '>=', from);
    const row = await query.executeTakeFirst();
    return Number(row?.spent ?? 0);
  }

  /** Every key of the account with its spend in its cap's period (without a cap: this UTC month). */
  async listWithSpend(accountId: number, nowMs: number): Promise<ApiKeyWithSpend[]> {
    const keys = await this.list(accountId);
    return Promise.all(
      keys.map(async (key) => {
        const period = key.cap?.period ?? 'month';
        const credits = await this.spentSince(undefined, accountId, key.id, periodStart(period, nowMs));
        return { ...key, spend: { period, periodKey: capPeriodKey(period, nowMs), credits } };
      }),
    );
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

/** When the period holding `nowMs` started (ISO), or null for `total`. */
function periodStart(period: 'day' | 'month' | 'total', nowMs: number): string | null {
  if (period === 'total') return null;
  const d = new Date(nowMs);
  return new Date(period === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
}
