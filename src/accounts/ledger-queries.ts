import { sql, type Selectable } from 'kysely';
import type { Db, FreeReason, LedgerKind, LedgerTable, Tx } from '../storage/database.js';

/**
 * Why a ledger row moved what it did. A lookup of an account that cost nothing has a row too
 * (kind `free`, delta 0) saying why: a test plate, a result with nothing to charge for (an empty
 * Euro NCAP search...), or a repeat of a paid lookup under its Idempotency-Key. `free` alone is
 * a free row whose reason this version does not know.
 */
export type LedgerReason = 'charged' | FreeLedgerReason | 'top-up' | 'initial credits' | 'trial credits' | 'removal' | 'reversed: answer not delivered';

/** The reasons of free rows (kind `free`). */
export type FreeLedgerReason = 'free test plate' | 'free: no result' | 'free: repeated request' | 'free';

/** The words of each free reason, as `reason` shows it (API, CSV, console). */
const FREE_REASONS: Readonly<Record<FreeReason, FreeLedgerReason>> = {
  'test-plate': 'free test plate',
  'no-result': 'free: no result',
  replay: 'free: repeated request',
};

/**
 * The words of a free lookup's reason, as its ledger row's `reason` says them; `free` when the
 * lookup gave none. Try it shows a lookup's outcome (LookupOutcome.free) through this too.
 */
export function freeReasonWords(reason: FreeReason | null | undefined): FreeLedgerReason {
  return (reason === null || reason === undefined ? undefined : FREE_REASONS[reason]) ?? 'free';
}

/**
 * The rows a ledger read may ask for (`type=`): charged lookups, free lookups, both (every
 * lookup of the account), or credit movements (top-ups, grants and removals). A debit's reversal
 * (its answer could not be delivered, issue 31) is read with the charged lookups, so the deltas
 * of `type=charged` add up to what lookups really cost.
 */
export type LedgerRowType = 'charged' | 'free' | 'lookups' | 'credits';

/** The kinds of row each type reads. */
const KINDS_OF_TYPE: Readonly<Record<LedgerRowType, readonly LedgerKind[]>> = {
  charged: ['debit', 'reversal'],
  free: ['free'],
  lookups: ['debit', 'free', 'reversal'],
  credits: ['topup', 'removal'],
};

/**
 * `charged=false`, kept from before free lookups had rows: every row that is not a charged
 * lookup (free lookups and credit movements), which is what it asked for then too.
 */
const NOT_CHARGED: readonly LedgerKind[] = ['free', 'topup', 'removal'];

/** Both ledger filters were given (`type` and the older `charged`): they may disagree, so one only. */
export class LedgerFilterError extends Error {
  override readonly name = 'LedgerFilterError';
  readonly field = 'charged';
  constructor() {
    super('give either type or charged (the older form of type=charged), not both');
  }
}

/**
 * The kinds of row a ledger read selects, from the request's `type` or its older `charged`
 * (true: charged lookups; false: every other row); undefined: every row. Throws
 * LedgerFilterError when both are given.
 */
export function ledgerKinds(type: LedgerRowType | undefined, charged: boolean | undefined): readonly LedgerKind[] | undefined {
  if (type !== undefined && charged !== undefined) throw new LedgerFilterError();
  if (type !== undefined) return KINDS_OF_TYPE[type];
  if (charged !== undefined) return charged ? KINDS_OF_TYPE.charged : NOT_CHARGED;
  return undefined;
}

/** The `type` values, for the API and console schemas. */
export const LEDGER_ROW_TYPES = Object.keys(KINDS_OF_TYPE) as readonly LedgerRowType[];

/** The note of the top-up row that gives a self-service sign-up its trial credits (SIGNUP_TRIAL_CREDITS). */
export const TRIAL_CREDITS_NOTE = 'trial credits (sign-up)';

export interface LedgerRow {
  readonly id: number;
  readonly at: string;
  readonly kind: LedgerKind;
  readonly reason: LedgerReason;
  readonly delta: number;
  readonly balanceAfter: number;
  readonly operation: string | null;
  readonly interface: string | null;
  /** The plate or VIN looked up (charged and free lookups). */
  readonly query: string | null;
  readonly requestId: string | null;
  readonly reference: string | null;
  readonly note: string | null;
  /** The API key that made the lookup (issue 33): its name; null when none was recorded (rows before keys were, grants, username-only lookups). */
  readonly key: string | null;
  readonly keyId: number | null;
  /** The console user of a Try it lookup. */
  readonly user: string | null;
  /** The source that answered a lookup (`store`, a register, an upstream, `cache`); null on credit rows and rows before migration 0018. */
  readonly source: string | null;
}

export interface LedgerFilter {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly operation?: string | undefined;
  readonly interface?: string | undefined;
  /** Only rows of these kinds (ledgerKinds); undefined: every row. */
  readonly kinds?: readonly LedgerKind[] | undefined;
  /** Rows of the account's keys of this name (a rolled key's old and new secret share it; issue 33). */
  readonly key?: string | undefined;
  /** Rows with a smaller id (paging from the newest backwards). */
  readonly before?: number | undefined;
  readonly limit: number;
}

export interface UsageRow {
  /** UTC day, YYYY-MM-DD. */
  readonly day: string;
  readonly operation: string;
  /** Every lookup of the account that day and operation, charged or free; a reversed debit (answer not delivered) does not count. */
  readonly lookups: number;
  /** Of those, the free ones (test plates, results with nothing to charge, Idempotency-Key replays). */
  readonly freeLookups: number;
  /** Credits the charged ones cost. */
  readonly credits: number;
}

/**
 * The ledger rows usage counts: lookups, charged (their delta is minus the credits taken), free
 * (delta 0) and reversals (a debit given back: its delta cancels the debit's, and it takes one
 * lookup off the count).
 */
const USAGE_KINDS = KINDS_OF_TYPE.lookups;

/** One UTC day's lookups of one API key (null: lookups without a key). */
export interface KeyUsageRow {
  readonly day: string;
  readonly key: string | null;
  readonly lookups: number;
  readonly freeLookups: number;
  readonly credits: number;
}

function reason(row: Selectable<LedgerTable>): LedgerReason {
  switch (row.kind) {
    case 'debit':
      return 'charged';
    case 'free':
      return freeReasonWords(row.free_reason);
    case 'removal':
      return 'removal';
    case 'reversal':
      return 'reversed: answer not delivered';
    case 'topup':
      if (row.reference === null && row.query === 'initial credits') return 'initial credits';
      if (row.reference === null && row.query === TRIAL_CREDITS_NOTE) return 'trial credits';
      return 'top-up';
  }
}

/** Rows of lookups (and reversals of their debits) carry the query; rows of credit movements carry a note in the same column. */
function isLookup(kind: LedgerKind): boolean {
  return kind === 'debit' || kind === 'free' || kind === 'reversal';
}

function toRow(row: Selectable<LedgerTable> & { key_name: string | null; user_name: string | null }): LedgerRow {
  return {
    id: row.id,
    at: row.created_at,
    kind: row.kind,
    reason: reason(row),
    delta: row.delta,
    balanceAfter: row.balance_after,
    operation: row.operation,
    interface: row.interface,
    query: isLookup(row.kind) ? row.query : null,
    requestId: row.request_id,
    reference: row.reference,
    note: isLookup(row.kind) ? null : row.query,
    key: row.key_name,
    keyId: row.api_key_id,
    user: row.user_name,
    source: row.source,
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
    let query = this.db
      .selectFrom('ledger')
      .leftJoin('api_keys', 'api_keys.id', 'ledger.api_key_id')
      .leftJoin('users', 'users.id', 'ledger.user_id')
      .selectAll('ledger')
      .select(['api_keys.name as key_name', 'users.name as user_name'])
      .where('ledger.account_id', '=', accountId);
    if (filter.from !== undefined) query = query.where('ledger.created_at', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('ledger.created_at', '<', filter.to);
    if (filter.operation !== undefined) query = query.where('ledger.operation', '=', filter.operation);
    if (filter.interface !== undefined) query = query.where('ledger.interface', '=', filter.interface);
    if (filter.kinds !== undefined) query = query.where('ledger.kind', 'in', filter.kinds);
    if (filter.key !== undefined) query = query.where('ledger.api_key_id', 'in', this.keyIds(accountId, filter.key));
    if (filter.before !== undefined) query = query.where('ledger.id', '<', filter.before);
    const rows = await query.orderBy('ledger.id', 'desc').limit(filter.limit).execute();
    return rows.map(toRow);
  }

  /** The ids of the account's keys named `name` (a subquery). */
  private keyIds(accountId: number, name: string) {
    return this.db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).where('name', '=', name);
  }

  /**
   * Lookups (charged and free) and credits of one account by UTC day and API key (issue 33: the
   * usage page's chart per key, the usage API's `byKey`). Rows without a key (username-only and
   * console lookups, rows before keys were recorded) are one group, key null.
   */
  async usageByKey(accountId: number, from: string, to: string): Promise<KeyUsageRow[]> {
    const day = sql<string>`substr(ledger.created_at, 1, 10)`;
    const rows = await this.db
      .selectFrom('ledger')
      .leftJoin('api_keys', 'api_keys.id', 'ledger.api_key_id')
      .select([
        day.as('day'),
        'api_keys.name as key',
        (eb) => eb.fn.countAll<number | string>().as('lookups'),
        (eb) => eb.fn.countAll<number | string>().filterWhere('ledger.kind', '=', 'free').as('free_lookups'),
        (eb) => eb.fn.sum<number | string>('ledger.delta').as('delta'),
      ])
      .where('ledger.account_id', '=', accountId)
      .where('ledger.kind', 'in', USAGE_KINDS)
      .where('ledger.created_at', '>=', from)
      .where('ledger.created_at', '<', to)
      .groupBy([day, 'api_keys.name'])
      .orderBy(day)
      .orderBy('api_keys.name')
      .execute();
    return rows.map((r) => ({ day: r.day, key: r.key, lookups: Number(r.lookups), freeLookups: Number(r.free_lookups), credits: 0 - Number(r.delta) }));
  }

  /**
   * Lookups (charged and free) and credits of one account by UTC day and operation, computed in
   * the store from the ledger_account_usage index alone (migration 0007; (account_id, kind,
   * created_at, operation, delta): one range per kind, and every column the query reads).
   */
  usage(accountId: number, from: string, to: string, key?: string): Promise<UsageRow[]> {
    return this.aggregate(accountId, from, to, key);
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
   * engines, so the UTC day is the first ten characters. Only rows of USAGE_KINDS count: other kinds
   * (top-ups, removals, and whatever else the ledger comes to record) are not usage.
   */
  private async aggregate(accountId: number | undefined, from: string, to: string, key?: string): Promise<UsageRow[]> {
    let query = this.usageQuery(accountId, from, to);
    // Only with a key: the query without one keeps its index-only plan (usage-aggregates.test.ts).
    if (key !== undefined && accountId !== undefined) query = query.where('api_key_id', 'in', this.keyIds(accountId, key));
    const rows = await query.execute();
    // A reversal row undoes one debit: it is not a lookup, and it takes its debit off the count.
    return rows.map((r) => ({ day: r.day, operation: r.operation ?? '', lookups: Number(r.lookups) - 2 * Number(r.reversals), freeLookups: Number(r.free_lookups), credits: 0 - Number(r.delta) }));
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
        // An aggregate FILTER (SQLite 3.30+, PostgreSQL 9.4+): half the time of sum(CASE ...) on PostgreSQL.
        (eb) => eb.fn.countAll<number | string>().filterWhere('kind', '=', 'free').as('free_lookups'),
        (eb) => eb.fn.countAll<number | string>().filterWhere('kind', '=', 'reversal').as('reversals'),
        (eb) => eb.fn.sum<number | string>('delta').as('delta'),
      ])
      .where('kind', 'in', USAGE_KINDS)
      .where('created_at', '>=', from)
      .where('created_at', '<', to);
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    return query.groupBy([day, 'operation']).orderBy(day).orderBy('operation');
  }
}

const CSV_COLUMNS = ['id', 'at', 'reason', 'delta', 'balanceAfter', 'operation', 'interface', 'query', 'requestId', 'reference', 'note', 'key', 'user'] as const;

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
