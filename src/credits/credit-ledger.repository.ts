import { sql, type Selectable } from 'kysely';
import { rearmCreditAlerts } from '../alerts/credit-alerts.js';
import type { Db, FreeReason, LedgerKind, LedgerTable, Tx } from '../storage/database.js';
import { andThen, type MaybePromise } from '../shared/maybe-promise.js';
import { PreparedQuery } from '../storage/prepared-query.js';

export interface LedgerEntry {
  readonly id: number;
  readonly kind: LedgerKind;
  /** Why a `free` row cost nothing; null on every other kind. */
  readonly freeReason: FreeReason | null;
  readonly operation: string | null;
  readonly interface: string | null;
  readonly query: string | null;
  readonly delta: number;
  readonly balanceAfter: number;
  readonly requestId: string | null;
  readonly createdAt: string;
  /** The API key that made the lookup (null: none recorded, or before keys were recorded). */
  readonly apiKeyId: number | null;
  /** The console user of a Try it lookup. */
  readonly userId: number | null;
  /** The name of the API key (entries() joins it); null without one. */
  readonly key: string | null;
  /** The source that answered a lookup (`store`, a register, an upstream, `cache`; migration 0018); null on other rows. */
  readonly source: string | null;
}

/**
 * What every lookup's ledger row records (a debit, a free lookup, a reversal): one list, so a new
 * column of lookup rows is added here once (LOOKUP_COLUMNS) and every insert carries it.
 */
export interface LookupRowDetails {
  readonly operation: string;
  readonly interface: string;
  readonly query: string;
  /** The lookup's request id (a reversal names the debit's own). */
  readonly requestId: string;
  readonly createdAt: string;
  /** The source that answered (LookupOutcome.source); null when none is known (a replay asked none). */
  readonly source?: string | null;
  /** The API key that made the lookup (ledger.api_key_id, issue 33); absent or null: none. */
  readonly apiKeyId?: number | null;
  /** The console user of a Try it lookup (ledger.user_id). */
  readonly userId?: number | null;
}

/** The ledger columns of a lookup's row taken from its LookupRowDetails, in parameter order. */
const LOOKUP_COLUMNS = {
  operation: (d: LookupRowDetails) => d.operation,
  interface: (d: LookupRowDetails) => d.interface,
  query: (d: LookupRowDetails) => d.query,
  request_id: (d: LookupRowDetails) => d.requestId,
  created_at: (d: LookupRowDetails) => d.createdAt,
  api_key_id: (d: LookupRowDetails) => d.apiKeyId ?? null,
  user_id: (d: LookupRowDetails) => d.userId ?? null,
  source: (d: LookupRowDetails) => d.source ?? null,
} as const satisfies { readonly [C in keyof LedgerTable]?: (d: LookupRowDetails) => unknown };

type LookupColumn = keyof typeof LOOKUP_COLUMNS;
const LOOKUP_COLUMN_NAMES = Object.keys(LOOKUP_COLUMNS) as LookupColumn[];
const LOOKUP_VALUES = Object.values(LOOKUP_COLUMNS);
/** Integer columns: a bare parameter in a SELECT list is text to PostgreSQL, so the free rows' select casts these. */
const INTEGER_COLUMNS: ReadonlySet<LookupColumn> = new Set(['api_key_id', 'user_id']);

/** Appends the lookup columns' values of `details` to `args`, in LOOKUP_COLUMNS' order. */
function pushLookupValues(args: unknown[], details: LookupRowDetails): void {
  for (const value of LOOKUP_VALUES) args.push(value(details));
}

/** The lookup columns' values of `details`, by column, for a single-row insert. */
function lookupValues(details: LookupRowDetails): { [C in LookupColumn]: ReturnType<(typeof LOOKUP_COLUMNS)[C]> } {
  return Object.fromEntries(LOOKUP_COLUMN_NAMES.map((c) => [c, LOOKUP_COLUMNS[c](details)])) as { [C in LookupColumn]: ReturnType<(typeof LOOKUP_COLUMNS)[C]> };
}

export interface DebitDetails extends LookupRowDetails {
  /**
   * The client's Idempotency-Key and the result paid for (LookupResult as JSON): the debit writer
   * records them in the debit's transaction (IdempotencyRepository), and does not debit when the
   * account already holds a live record under the key. Absent: no record, no extra query.
   */
  readonly idempotency?: {
    readonly key: string;
    readonly result: string;
    /** The frozen result `result` is the JSON of, when it is frozen: its stored answer may be shared (AnswerBatch). */
    readonly answer?: object | undefined;
  };
  /**
   * The key's credit cap this debit counts against: the debit writer moves the key's spend in the
   * debit's transaction with a conditional update, as the balance, and does not debit when the cap
   * would be passed (KEY_CAP_REACHED). Absent: the key has no cap, no query is added.
   */
  readonly cap?: KeyCapCharge;
}

/** What a capped key's debit counts against (DebitDetails.cap). */
export interface KeyCapCharge {
  readonly keyId: number;
  /** The cap's period at the debit's time (capPeriodKey): a row still in an older one starts again from 0. */
  readonly periodKey: string;
}

/** A lookup of an account that cost nothing, as its ledger row records it (kind `free`, delta 0). */
export interface FreeLookupDetails extends LookupRowDetails {
  readonly reason: FreeReason;
}

/**
 * A committed debit given back because its answer could not be written to the client (kind
 * `reversal`, issue 31): the debit's own request id, operation, interface, query, key and console
 * user (issue 33), and its cost.
 */
export interface ReversalDetails extends LookupRowDetails {
  readonly cost: number;
  /** The debit's key cap charge, given back with it when the cap's period has not turned. */
  readonly cap?: KeyCapCharge;
}

/** A grant (`delta` > 0) or removal (`delta` < 0) of credits outside lookups, as its ledger row records it. */
export interface CreditMovement {
  readonly delta: number;
  readonly createdAt: string;
  /** The operator's reference (an invoice, a ticket); null when none. */
  readonly reference: string | null;
  /** Free text on the row (stored in its `query` column, shown as the note). */
  readonly note: string | null;
}

/** One free lookup's row to write: its account and details. */
export interface FreeLookupRow {
  readonly accountId: number;
  readonly details: FreeLookupDetails;
}

/** Parameters of one free row: the account id, the reason, then the lookup columns. */
const FREE_ROW_ARITY = 2 + LOOKUP_COLUMN_NAMES.length;

/** Parameters of one debit row (its kind is a constant): the account id, delta, balance after, then the lookup columns. */
const DEBIT_ROW_ARITY = 3 + LOOKUP_COLUMN_NAMES.length;

/**
 * Rows per multi-row insert. SQLite allows 32766 parameters and PostgreSQL 65535; 32 rows of 8
 * keep the number of distinct statements (one per row count) small.
 */
const MAX_ROWS_PER_INSERT = 32;

function toEntry(row: Selectable<LedgerTable> & { key_name: string | null }): LedgerEntry {
  return {
    id: row.id,
    kind: row.kind,
    freeReason: row.free_reason,
    operation: row.operation,
    interface: row.interface,
    query: row.query,
    delta: row.delta,
    balanceAfter: row.balance_after,
    requestId: row.request_id,
    createdAt: row.created_at,
    apiKeyId: row.api_key_id,
    userId: row.user_id,
    key: row.key_name,
    source: row.source,
  };
}

/**
 * Moves credits. Every movement is one conditional update of the balance plus its ledger row, and
 * both functions take the transaction first so the caller decides the unit of work (STYLE.md 6).
 */
export class CreditLedgerRepository {
  private readonly conditionalDebit: PreparedQuery<{ credits: number }>;
  /** `INSERT ... VALUES (...), (...)` by number of rows, built on first use. */
  private readonly multiRowInserts = new Map<number, PreparedQuery<unknown>>();
  /** `INSERT ... SELECT ... UNION ALL SELECT ...` of free rows by number of rows, built on first use. */
  private readonly freeRowInserts = new Map<number, PreparedQuery<unknown>>();

  constructor(private readonly db: Db) {
    this.conditionalDebit = new PreparedQuery(2, (p) =>
      db
        .updateTable('accounts')
        .set((eb) => ({ credits: eb('credits', '-', p(1)) }))
        .where('id', '=', p(0))
        .where('credits', '>=', p(1))
        .returning('credits'),
    );
  }

  /**
   * The insert of `rows` debit rows in one statement: a batch's rows cost one statement instead
   * of one each (the per-statement work was a third of a debit's CPU in bench:soap).
   */
  private insertDebitRows(rows: number): PreparedQuery<unknown> {
    let query = this.multiRowInserts.get(rows);
    if (!query) {
      query = new PreparedQuery(rows * DEBIT_ROW_ARITY, (p) =>
        this.db.insertInto('ledger').values(
          Array.from({ length: rows }, (_, i) => {
            const at = (k: number): never => p(i * DEBIT_ROW_ARITY + k);
            const lookup = Object.fromEntries(LOOKUP_COLUMN_NAMES.map((c, k) => [c, at(3 + k)])) as Record<LookupColumn, never>;
            return { account_id: at(0), kind: sql.lit('debit'), delta: at(1), balance_after: at(2), ...lookup };
          }),
        ),
      );
      this.multiRowInserts.set(rows, query);
    }
    return query;
  }

  /**
   * The insert of `rows` free rows in one statement. Each row's balance_after is read from its
   * account in the same statement (`SELECT credits FROM accounts WHERE id = ?`), so it is the
   * balance inside the writing transaction: after this batch's debits of the account, and on
   * PostgreSQL otherwise the last committed one. The read takes no row lock: a free row never
   * waits for, nor holds up, a debit. An account deleted meanwhile yields no row (nothing to record).
   */
  private insertFreeRows(rows: number): PreparedQuery<unknown> {
    let query = this.freeRowInserts.get(rows);
    if (!query) {
      const db = this.db;
      query = new PreparedQuery(rows * FREE_ROW_ARITY, (p) => {
        const selectRow = (i: number) => {
          const at = (k: number): never => p(i * FREE_ROW_ARITY + k);
          return db
            .selectFrom('accounts')
            .select((eb) => [
              'id as account_id',
              sql.lit('free').as('kind'),
              sql.lit(0).as('delta'),
              'credits as balance_after',
              eb.val(at(1)).as('free_reason'),
              ...LOOKUP_COLUMN_NAMES.map((c, k) => (INTEGER_COLUMNS.has(c) ? eb.cast(eb.val(at(2 + k)), 'integer') : eb.val(at(2 + k))).as(c)),
            ])
            .where('id', '=', at(0));
        };
        let union = selectRow(0);
        for (let i = 1; i < rows; i++) union = union.unionAll(selectRow(i));
        return db
          .insertInto('ledger')
          .columns(['account_id', 'kind', 'delta', 'balance_after', 'free_reason', ...LOOKUP_COLUMN_NAMES])
          .expression(union);
      });
      this.freeRowInserts.set(rows, query);
    }
    return query;
  }

  /**
   * Ledger rows of lookups that cost nothing (kind `free`, delta 0, balance untouched): no
   * conditional update, so nothing here can refuse a lookup for its balance. MAX_ROWS_PER_INSERT
   * rows per statement, in order.
   */
  async writeFreeRows(tx: Tx, rows: readonly FreeLookupRow[]): Promise<void> {
    for (let start = 0; start < rows.length; start += MAX_ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + MAX_ROWS_PER_INSERT);
      const args: unknown[] = [];
      for (const { accountId, details } of chunk) {
        args.push(accountId, details.reason);
        pushLookupValues(args, details);
      }
      await this.insertFreeRows(chunk.length).run(tx, ...args);
    }
  }

  /**
   * Debits `cost` if the balance covers it. Returns the new balance, or undefined when the account
   * has too few credits (nothing is written then).
   */
  async debit(tx: Tx, accountId: number, cost: number, details: DebitDetails): Promise<number | undefined> {
    const { rows } = await this.conditionalDebit.run(tx, accountId, cost);
    const updated = rows[0];
    if (!updated) return undefined;
    await this.writeDebitRows(tx, accountId, [{ cost, balanceAfter: updated.credits, details }]);
    return updated.credits;
  }

  /**
   * Counts `cost` against a key's credit cap in the period `periodKey`, if the cap allows it: one
   * conditional update of the key's row, as the balance's (its row lock makes concurrent debits on
   * every instance wait and re-check). A row still counting an earlier period starts this one
   * from 0 in the same update, so the period's turn needs no job. Returns the spend after it and
   * the cap (null when the key's cap was removed meanwhile: counted, never refused), or undefined
   * when the cap would be passed (nothing changed).
   */
  async countKeySpend(tx: Tx, keyId: number, periodKey: string, cost: number): Promise<{ spent: number; cap: number | null } | undefined> {
    const spentInPeriod = sql<number>`(case when cap_period_key = ${periodKey} then cap_spent else 0 end)`;
    const row = await tx.db
      .updateTable('api_keys')
      .set({ cap_spent: sql<number>`${spentInPeriod} + ${cost}`, cap_period_key: periodKey })
      .where('id', '=', keyId)
      .where(sql<boolean>`(cap_credits is null or ${spentInPeriod} + ${cost} <= cap_credits)`)
      .returning(['cap_spent', 'cap_credits'])
      .executeTakeFirst();
    return row ? { spent: row.cap_spent, cap: row.cap_credits } : undefined;
  }

  /** Gives back a spend countKeySpend counted, in the same transaction (the balance then did not cover the debit). */
  async uncountKeySpend(tx: Tx, keyId: number, periodKey: string, cost: number): Promise<void> {
    await tx.db
      .updateTable('api_keys')
      .set({ cap_spent: sql<number>`cap_spent - ${cost}` })
      .where('id', '=', keyId)
      .where('cap_period_key', '=', periodKey)
      .execute();
  }

  /**
   * Ledger rows of debits already applied to the balance, MAX_ROWS_PER_INSERT per statement, from
   * `start`; at once on SQLite (Tx.run), with no promise.
   */
  private writeDebitRows(
    tx: Tx,
    accountId: number,
    rows: ReadonlyArray<{ readonly cost: number; readonly balanceAfter: number; readonly details: DebitDetails }>,
    start = 0,
  ): MaybePromise<void> {
    if (start >= rows.length) return;
    const chunk = rows.slice(start, start + MAX_ROWS_PER_INSERT);
    const args: unknown[] = [];
    for (const { cost, balanceAfter, details } of chunk) {
      args.push(accountId, -cost, balanceAfter);
      pushLookupValues(args, details);
    }
    return andThen(this.insertDebitRows(chunk.length).run(tx, ...args), () => this.writeDebitRows(tx, accountId, rows, start + MAX_ROWS_PER_INSERT));
  }

  /**
   * Several debits of one account, in order, each with its own ledger row. When the balance covers
   * them all, that is one conditional update for the sum and a row each; otherwise
   * each is tried on its own, so exactly those that fit are debited. Returns each debit's balance
   * after it, or undefined for a debit the balance did not cover; at once on SQLite when the
   * balance covers them all (Tx.run: the common case costs no promise).
   */
  debitMany(
    tx: Tx,
    accountId: number,
    debits: ReadonlyArray<{ readonly cost: number; readonly details: DebitDetails }>,
  ): MaybePromise<Array<number | undefined>> {
    const total = debits.reduce((sum, d) => sum + d.cost, 0);
    return andThen(this.conditionalDebit.run(tx, accountId, total), ({ rows }) => {
      const updated = rows[0];
      if (!updated) return debits.length === 1 ? [undefined] : this.debitEach(tx, accountId, debits);
      let running = updated.credits + total;
      const applied = debits.map(({ cost, details }) => ({ cost, balanceAfter: (running -= cost), details }));
      return andThen(this.writeDebitRows(tx, accountId, applied), () => applied.map((r) => r.balanceAfter));
    });
  }

  /** Each debit on its own, in order: the balance did not cover them all. */
  private async debitEach(tx: Tx, accountId: number, debits: ReadonlyArray<{ readonly cost: number; readonly details: DebitDetails }>): Promise<Array<number | undefined>> {
    const results: Array<number | undefined> = [];
    for (const d of debits) results.push(await this.debit(tx, accountId, d.cost, d.details));
    return results;
  }

  /**
   * Gives a debit back: `+cost` to the balance and its `reversal` row, in `tx`. Returns the new
   * balance, or undefined when the account no longer exists (nothing written). It re-arms no
   * low-credit alert: the debit's crossing was real when it fired, and the balance only returns
   * to where it was, so a second debit must not alert twice for one crossing.
   */
  async reverse(tx: Tx, accountId: number, reversal: ReversalDetails): Promise<number | undefined> {
    const updated = await tx.db
      .updateTable('accounts')
      .set((eb) => ({ credits: eb('credits', '+', reversal.cost) }))
      .where('id', '=', accountId)
      .returning('credits')
      .executeTakeFirst();
    if (!updated) return undefined;
    await tx.db
      .insertInto('ledger')
      .values({
        account_id: accountId,
        kind: 'reversal',
        delta: reversal.cost,
        balance_after: updated.credits,
        ...lookupValues(reversal),
      })
      .execute();
    // A reversed debit spent nothing of its key's cap either (issue 33).
    if (reversal.cap) await this.uncountKeySpend(tx, reversal.cap.keyId, reversal.cap.periodKey, reversal.cost);
    return updated.credits;
  }

  /**
   * Moves credits on an operator's (or a sign-up's) behalf: a grant (`delta` > 0, a `topup` row),
   * which re-arms the low-credit alerts the new balance is above, or a removal (`delta` < 0, a
   * `removal` row), conditional like a debit. The one way credits are added or taken back outside
   * lookups, so every grant re-arms alerts the same way. Returns the ledger row's id and the new
   * balance, or undefined when a removal is larger than the balance (nothing is written then).
   */
  async change(tx: Tx, accountId: number, change: CreditMovement): Promise<{ ledgerId: number; balance: number } | undefined> {
    const { delta } = change;
    let update = tx.db
      .updateTable('accounts')
      .set((eb) => ({ credits: eb('credits', '+', delta) }))
      .where('id', '=', accountId);
    if (delta < 0) update = update.where('credits', '>=', -delta);
    const updated = await update.returning('credits').executeTakeFirst();
    if (!updated) return undefined;
    const row = await tx.db
      .insertInto('ledger')
      .values({
        account_id: accountId,
        kind: delta < 0 ? 'removal' : 'topup',
        operation: null,
        interface: null,
        query: change.note,
        delta,
        balance_after: updated.credits,
        request_id: null,
        created_at: change.createdAt,
        reference: change.reference,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (delta > 0) await rearmCreditAlerts(tx, accountId, updated.credits);
    return { ledgerId: row.id, balance: updated.credits };
  }

  /**
   * The ledger row an earlier grant or removal with `reference` made (migration 0012), read in
   * `tx`; undefined when the reference is new to the account.
   */
  async byReference(tx: Tx, accountId: number, kind: 'topup' | 'removal', reference: string): Promise<{ delta: number; balanceAfter: number; note: string | null } | undefined> {
    const row = await tx.db
      .selectFrom('credit_references')
      .innerJoin('ledger', 'ledger.id', 'credit_references.ledger_id')
      .select(['ledger.delta', 'ledger.balance_after', 'ledger.query'])
      .where('credit_references.account_id', '=', accountId)
      .where('credit_references.kind', '=', kind)
      .where('credit_references.reference', '=', reference)
      .executeTakeFirst();
    return row ? { delta: row.delta, balanceAfter: row.balance_after, note: row.query } : undefined;
  }

  /** Records that `reference` made ledger row `ledgerId` (its primary key refuses a second one). */
  async recordReference(tx: Tx, accountId: number, kind: 'topup' | 'removal', reference: string, ledgerId: number): Promise<void> {
    await tx.db.insertInto('credit_references').values({ account_id: accountId, kind, reference, ledger_id: ledgerId }).execute();
  }

  /** The account's ledger, oldest first; from `since`; only the rows of its keys named `keyName` when given. */
  async entries(accountId: number, since?: string, keyName?: string): Promise<LedgerEntry[]> {
    let query = this.db
      .selectFrom('ledger')
      .leftJoin('api_keys', 'api_keys.id', 'ledger.api_key_id')
      .selectAll('ledger')
      .select('api_keys.name as key_name')
      .where('ledger.account_id', '=', accountId);
    if (since !== undefined) query = query.where('ledger.created_at', '>=', since);
    if (keyName !== undefined) query = query.where('api_keys.name', '=', keyName);
    const rows = await query.orderBy('ledger.id').execute();
    return rows.map(toEntry);
  }
}
