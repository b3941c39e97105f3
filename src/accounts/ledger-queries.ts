import { sql, type Selectable } from 'kysely';
import type { Db, LedgerTable, Tx } from '../storage/database.js';

/** Why a ledger row moved what it did. Free lookups (test plates, empty searches) write no row. */
export type LedgerReason = 'charged' | 'top-up' | 'initial credits' | 'removal';

export interface LedgerRow {
  readonly id: number;
  readonly at: string;
  readonly kind: 'debit' | 'topup' | 'removal';
  readonly reason: LedgerReason;
  readonly delta: number;
  readonly balanceAfter: number;
  readonly operation: string | null;
  readonly interface: string | null;
  /** The plate or VIN looked up (debits). */
  readonly query: string | null;
  readonly requestId: string | null;
  readonly reference: string | null;
  readonly note: string | null;
}

export interface LedgerFilter {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly operation?: string | undefined;
  readonly interface?: string | undefined;
  /** true: only charged lookups; false: only the other rows (top-ups, removals). */
  readonly charged?: boolean | undefined;
  /** Rows with a smaller id (paging from the newest backwards). */
  readonly before?: number | undefined;
  readonly limit: number;
}

export interface UsageRow {
  /** UTC day, YYYY-MM-DD. */
  readonly day: string;
  readonly operation: string;
  readonly lookups: number;
  readonly credits: number;
}

/** The ledger rows usage counts: charged lookups (their delta is minus the credits taken). */
const USAGE_KIND = 'debit';

function reason(row: Selectable<LedgerTable>): LedgerReason {
  if (row.kind === 'debit') return 'charged';
  if (row.kind === 'removal') return 'removal';
  return row.query === 'initial credits' && row.reference === null ? 'initial credits' : 'top-up';
}

function toRow(row: Selectable<LedgerTable>): LedgerRow {
  return {
    id: row.id,
    at: row.created_at,
    kind: row.kind,
    reason: reason(row),
    delta: row.delta,
    balanceAfter: row.balance_after,
    operation: row.operation,
    interface: row.interface,
    query: row.kind === 'debit' ? row.query : null,
    requestId: row.request_id,
    reference: row.reference,
    note: row.kind === 'debit' ? null : row.query,
  };
}

/** Reads of an account's ledger for the admin and account APIs (the writes: CreditLedgerRepository). */
export class LedgerQueries {
  constructor(private readonly db: Db) {}

  /** Pass the transaction when inside one (SQLite has a single connection). */
  async hasRows(accountId: number, tx?: Tx): Promise<boolean> {
    return (await (tx?.db ?? this.db).selectFrom('ledger').select('id').where('account_id', '=', accountId).limit(1).executeTakeFirst()) !== undefined;
  }

  /** Newest first. */
  async rows(accountId: number, filter: LedgerFilter): Promise<LedgerRow[]> {
    let query = this.db.selectFrom('ledger').selectAll().where('account_id', '=', accountId);
    if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('created_at', '<', filter.to);
    if (filter.operation !== undefined) query = query.where('operation', '=', filter.operation);
    if (filter.interface !== undefined) query = query.where('interface', '=', filter.interface);
    if (filter.charged !== undefined) query = query.where('kind', filter.charged ? '=' : '<>', 'debit');
    if (filter.before !== undefined) query = query.where('id', '<', filter.before);
    const rows = await query.orderBy('id', 'desc').limit(filter.limit).execute();
    return rows.map(toRow);
  }

  /**
   * Charged lookups and credits of one account by UTC day and operation, computed in the store
   * from the ledger_account_usage index (migration 0007).
   */
  usage(accountId: number, from: string, to: string): Promise<UsageRow[]> {
    return this.aggregate(accountId, from, to);
  }

  /**
   * The same over every account (the operator overview), from the ledger_kind_usage index
   * (migration 0011).
   */
  allAccountsUsage(from: string, to: string): Promise<UsageRow[]> {
    return this.aggregate(undefined, from, to);
  }

  /**
   * Both usage queries: one GROUP BY in the store over an index that holds every column read
   * (test/storage/usage-aggregates.test.ts asserts the plans). Timestamps are ISO-8601 text on both
   * engines, so the UTC day is the first ten characters. Only rows of USAGE_KIND count: other kinds
   * (top-ups, removals, and whatever else the ledger comes to record) are not usage.
   */
  private async aggregate(accountId: number | undefined, from: string, to: string): Promise<UsageRow[]> {
    const rows = await this.usageQuery(accountId, from, to).execute();
    return rows.map((r) => ({ day: r.day, operation: r.operation ?? '', lookups: Number(r.lookups), credits: -Number(r.delta) }));
  }

  /** The usage query of one account, or of all (undefined), unexecuted: what the plan tests EXPLAIN. */
  usageQuery(accountId: number | undefined, from: string, to: string) {
    const day = sql<string>`substr(created_at, 1, 10)`;
    let query = this.db
      .selectFrom('ledger')
      .select([
        day.as('day'),
        'operation',
        (eb) => eb.fn.countAll<number | string>().as('lookups'),
        (eb) => eb.fn.sum<number | string>('delta').as('delta'),
      ])
      .where('kind', '=', USAGE_KIND)
      .where('created_at', '>=', from)
      .where('created_at', '<', to);
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    return query.groupBy([day, 'operation']).orderBy(day).orderBy('operation');
  }
}

const CSV_COLUMNS = ['id', 'at', 'reason', 'delta', 'balanceAfter', 'operation', 'interface', 'query', 'requestId', 'reference', 'note'] as const;

/** RFC 4180 CSV; cells starting with = + - @ are prefixed with ' so spreadsheets do not run them. */
export function ledgerCsv(rows: readonly LedgerRow[]): string {
  const cell = (value: string | number | null): string => {
    if (value === null) return '';
    let text = String(value);
    if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return [CSV_COLUMNS.join(','), ...rows.map((r) => CSV_COLUMNS.map((c) => cell(r[c])).join(','))].join('\r\n') + '\r\n';
}
