import { sql, type QueryExecutorProvider } from 'kysely';
import type { Storage } from './create-database.js';
import type { Db } from './database.js';

/** Why a copy was refused or undone. */
export type StoreCopyErrorCode = 'WRONG_ENGINE' | 'SCHEMA_MISMATCH' | 'TARGET_NOT_EMPTY' | 'SOURCE_UNBALANCED' | 'VERIFY_FAILED';

/** A refused or undone copy; the message is for the operator, the target is left as it was. */
export class StoreCopyError extends Error {
  override readonly name = 'StoreCopyError';
  constructor(
    readonly code: StoreCopyErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** One copied table. */
export interface TableCopy {
  readonly table: string;
  readonly rows: number;
}

/** An auto-numbered column whose PostgreSQL sequence was moved past the copied ids. */
export interface IdentityReset {
  readonly table: string;
  readonly column: string;
  /** The id the next inserted row gets. */
  readonly nextId: number;
}

/** What `copyStore` did; everything in it was verified before the target committed. */
export interface StoreCopySummary {
  /** Every table of the schema, in the order copied (parents before the tables that reference them). */
  readonly tables: readonly TableCopy[];
  readonly accounts: number;
  /** Sum of all account balances, equal on both sides and equal to the sum of all ledger deltas. */
  readonly credits: number;
  readonly ledgerRows: number;
  readonly identities: readonly IdentityReset[];
  /**
   * True when another connection committed to the source between the snapshot and the end of the
   * copy: those changes are not in the target (writers should have been stopped first).
   */
  readonly sourceChangedDuringCopy: boolean;
}

export interface StoreCopyOptions {
  /** Rows read and inserted per statement (memory stays proportional to this). Default 500. */
  readonly batchRows?: number;
  /** Told after each batch. */
  readonly onProgress?: (table: string, copied: number, total: number) => void;
}

/** A row read generically: column name to value as the driver returns it. */
type Row = Record<string, unknown>;
/** Where generic queries run: a database or one of its transactions (tables found at run time). */
type Executor = QueryExecutorProvider;

/** PostgreSQL accepts at most 65535 bind parameters in one statement. */
const MAX_PARAMETERS = 65_535;
const DEFAULT_BATCH_ROWS = 500;
/** Alias of SQLite's rowid in the paging query; no real column is called that. */
const ROWID = '__store_copy_rowid';

/**
 * Copies an embedded SQLite store into an empty PostgreSQL database of the same schema (issue 5):
 * every table, discovered from the schema itself so a table added by a later migration is copied
 * too, with ids, order and values kept. The source is read in one read transaction (one consistent
 * snapshot even if a writer was left running); the target is written in one transaction that is
 * verified before it commits, so a refused or failed copy leaves the target empty.
 */
export async function copyStore(source: Storage, target: Storage, options: StoreCopyOptions = {}): Promise<StoreCopySummary> {
  if (source.engine !== 'sqlite') throw new StoreCopyError('WRONG_ENGINE', `the source must be an embedded SQLite store (got ${source.description})`);
  if (target.engine !== 'postgres') throw new StoreCopyError('WRONG_ENGINE', `the target must be a PostgreSQL database (got ${target.description})`);
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`batchRows must be a positive whole number (got ${batchRows})`);

  const targetSchema = await postgresCurrentSchema(target.db);
  const schema = await sameSchema(source.db, target.db, targetSchema);
  const order = await sqliteCopyOrder(source.db, [...schema.keys()]);
  const sequences = await postgresSequenceColumns(target.db, targetSchema);
  const versionBefore = await sqliteDataVersion(source.db);

  const summary = await source.db.transaction().execute((src) =>
    target.db.transaction().execute(async (dst) => {
      // No other writer on the target while we copy; readers (a /readyz probe) still get through.
      await postgresLockTables(dst, order);
      const occupied = await nonEmptyTables(dst, order);
      if (occupied.length > 0) {
        throw new StoreCopyError(
          'TARGET_NOT_EMPTY',
          `the target database is not empty (${occupied.map((t) => `${t.table}: ${rowsText(t.rows)}`).join(', ')}); migrate-store only copies into an empty database. ` +
            'Create a new, empty database (or drop and re-create this one) and run migrate-store again before any server starts on it ' +
            '(a first start seeds the demo account unless SEED_DEMO=false).',
        );
      }

      const before = await balances(src);
      const unbalanced = before.filter((a) => a.credits !== a.ledgerSum);
      if (unbalanced.length > 0) {
        throw new StoreCopyError(
          'SOURCE_UNBALANCED',
          `the source store's balances do not match its ledger for ${unbalanced.length} account(s) (${describeAccounts(unbalanced)}); nothing was copied. Investigate before migrating: credits are money.`,
        );
      }

      const tables: TableCopy[] = [];
      for (const table of order) {
        const columns = schema.get(table) ?? [];
        const total = await countRows(src, table);
        const rows = await copyTable(src, dst, table, columns, total, batchRows, options.onProgress);
        tables.push({ table, rows });
      }
      const identities = await postgresResetSequences(dst, sequences);

      await verify(src, dst, tables, before);
      return {
        tables,
        accounts: before.length,
        credits: before.reduce((sum, a) => sum + a.credits, 0),
        ledgerRows: tables.find((t) => t.table === 'ledger')?.rows ?? 0,
        identities,
      };
    }),
  );

  const versionAfter = await sqliteDataVersion(source.db);
  return { ...summary, sourceChangedDuringCopy: versionAfter !== versionBefore };
}

/** The tables and columns of both databases, which must be the same (same migrations applied). */
async function sameSchema(source: Db, target: Db, targetSchema: string): Promise<Map<string, string[]>> {
  const [from, to] = await Promise.all([tableColumns(source, undefined), tableColumns(target, targetSchema)]);
  const problems: string[] = [];
  for (const [table, columns] of from) {
    const other = to.get(table);
    if (!other) {
      problems.push(`table ${table} is missing in the target`);
      continue;
    }
    const missing = columns.filter((c) => !other.includes(c));
    const extra = other.filter((c) => !columns.includes(c));
    if (missing.length > 0) problems.push(`${table} lacks ${missing.join(', ')} in the target`);
    if (extra.length > 0) problems.push(`${table} has ${extra.join(', ')} only in the target`);
  }
  for (const table of to.keys()) if (!from.has(table)) problems.push(`table ${table} exists only in the target`);
  if (problems.length > 0) {
    throw new StoreCopyError('SCHEMA_MISMATCH', `the source and target schemas differ (${problems.join('; ')}); run migrate-store from the same version as the servers`);
  }
  return from;
}

/** Table name to its column names, in declaration order; views and Kysely's own tables excluded. */
async function tableColumns(db: Db, schema: string | undefined): Promise<Map<string, string[]>> {
  const tables = await db.introspection.getTables();
  return new Map(
    tables
      .filter((t) => !t.isView && (schema === undefined || t.schema === schema))
      .map((t) => [t.name, t.columns.map((c) => c.name)] as const)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

/**
 * SQLite: the tables in an order where each comes after the tables its foreign keys reference, so
 * the target's (non-deferred) constraints hold after every insert. Ties in alphabetical order.
 */
async function sqliteCopyOrder(db: Db, tables: readonly string[]): Promise<string[]> {
  const parents = new Map<string, Set<string>>();
  for (const table of tables) {
    const { rows } = await sql<{ parent: string }>`select "table" as parent from pragma_foreign_key_list(${table})`.execute(db);
    parents.set(table, new Set(rows.map((r) => r.parent).filter((p) => p !== table)));
  }
  const order: string[] = [];
  const remaining = new Set(tables);
  while (remaining.size > 0) {
    const ready = [...remaining].filter((t) => [...(parents.get(t) ?? [])].every((p) => !remaining.has(p)));
    if (ready.length === 0) throw new StoreCopyError('SCHEMA_MISMATCH', `foreign keys form a cycle among ${[...remaining].join(', ')}`);
    for (const table of ready.sort()) {
      order.push(table);
      remaining.delete(table);
    }
  }
  return order;
}

/** SQLite: changes whenever another connection commits to the file (the cache invalidation signal too). */
async function sqliteDataVersion(db: Db): Promise<number> {
  const { rows } = await sql<{ data_version: number }>`pragma data_version`.execute(db);
  return rows[0]?.data_version ?? 0;
}

async function postgresCurrentSchema(db: Db): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (schema === undefined) throw new Error('PostgreSQL has no current schema (check search_path)');
  return schema;
}

/** PostgreSQL: other writers wait until the copy commits; plain reads go on. */
async function postgresLockTables(dst: Executor, tables: readonly string[]): Promise<void> {
  await sql`lock table ${sql.join(tables.map((t) => sql.table(t)))} in exclusive mode`.execute(dst);
}

async function countRows(db: Executor, table: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

async function nonEmptyTables(db: Executor, tables: readonly string[]): Promise<TableCopy[]> {
  const found: TableCopy[] = [];
  for (const table of tables) {
    const rows = await countRows(db, table);
    if (rows > 0) found.push({ table, rows });
  }
  return found;
}

/**
 * Copies one table in pages of `batchRows`, in rowid order (for the accounts and ledger tables,
 * whose id is the rowid, that is id order). Keyset paging keeps each read a short index range
 * scan, however far into the table it is, and memory at one page.
 */
async function copyTable(
  src: Executor,
  dst: Executor,
  table: string,
  columns: readonly string[],
  total: number,
  batchRows: number,
  onProgress: StoreCopyOptions['onProgress'],
): Promise<number> {
  const pageRows = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMETERS / Math.max(columns.length, 1))));
  const columnList = sql.join(columns.map((c) => sql.ref(c)));
  const identity = await postgresHasIdentity(dst, table);
  let after: number | undefined;
  let copied = 0;
  for (;;) {
    const from = after === undefined ? sql`` : sql`where rowid > ${after} `;
    const { rows } = await sql<Row>`select rowid as ${sql.ref(ROWID)}, ${columnList} from ${sql.table(table)} ${from}order by rowid limit ${pageRows}`.execute(src);
    const last = rows.at(-1);
    if (last === undefined) break;
    const values = sql.join(rows.map((row) => sql`(${sql.join(columns.map((c) => row[c] ?? null))})`));
    // OVERRIDING SYSTEM VALUE keeps our ids even for a GENERATED ALWAYS identity column.
    await sql`insert into ${sql.table(table)} (${columnList}) ${identity ? sql`overriding system value ` : sql``}values ${values}`.execute(dst);
    copied += rows.length;
    after = Number(last[ROWID]);
    onProgress?.(table, copied, total);
  }
  return copied;
}

/** PostgreSQL: whether the table has an identity column (inserting its values needs OVERRIDING). */
async function postgresHasIdentity(dst: Executor, table: string): Promise<boolean> {
  const { rows } = await sql<{ n: number | string }>`
    select count(*) as n from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} and is_identity = 'YES'`.execute(dst);
  return Number(rows[0]?.n ?? 0) > 0;
}

/** A column numbered by a PostgreSQL sequence (identity or serial). */
interface SequenceColumn {
  readonly table: string;
  readonly column: string;
}

/** PostgreSQL: the identity and serial columns of the schema (Kysely finds them with pg_get_serial_sequence). */
async function postgresSequenceColumns(db: Db, schema: string): Promise<SequenceColumn[]> {
  const tables = (await db.introspection.getTables()).filter((t) => !t.isView && t.schema === schema);
  return tables
    .flatMap((t) => t.columns.filter((c) => c.isAutoIncrementing).map((c) => ({ table: t.name, column: c.name })))
    .sort((a, b) => a.table.localeCompare(b.table) || a.column.localeCompare(b.column));
}

/**
 * PostgreSQL: moves each sequence past the largest copied id, so the next account or ledger row
 * does not collide with a copied one. Inserting explicit ids never advances a sequence by itself.
 */
async function postgresResetSequences(dst: Executor, columns: readonly SequenceColumn[]): Promise<IdentityReset[]> {
  const resets: IdentityReset[] = [];
  for (const { table, column } of columns) {
    const { rows } = await sql<{ max: number | string | null }>`select max(${sql.ref(column)}) as max from ${sql.table(table)}`.execute(dst);
    const max = rows[0]?.max ?? null;
    if (max === null) continue;
    await sql`select setval(pg_get_serial_sequence(quote_ident(${table}), ${column}), ${Number(max)}, true)`.execute(dst);
    resets.push({ table, column, nextId: Number(max) + 1 });
  }
  return resets;
}

/** "1 row", "2 rows". */
export function rowsText(rows: number): string {
  return `${rows} row${rows === 1 ? '' : 's'}`;
}

/** One account's balance next to its ledger. */
interface AccountBalance {
  readonly id: number;
  readonly username: string;
  readonly credits: number;
  readonly ledgerSum: number;
  readonly ledgerRows: number;
  readonly lastLedgerId: number | null;
}

/** Every account with the sum, count and last id of its ledger rows, by id. */
async function balances(db: Executor): Promise<AccountBalance[]> {
  const { rows } = await sql<{ id: number; username: string; credits: number; ledger_sum: number | string; ledger_rows: number | string; last_ledger_id: number | string | null }>`
    select a.id, a.username, a.credits, coalesce(sum(l.delta), 0) as ledger_sum, count(l.id) as ledger_rows, max(l.id) as last_ledger_id
    from accounts a left join ledger l on l.account_id = a.id
    group by a.id, a.username, a.credits
    order by a.id`.execute(db);
  return rows.map((r) => ({
    id: r.id,
    username: r.username,
    credits: r.credits,
    ledgerSum: Number(r.ledger_sum),
    ledgerRows: Number(r.ledger_rows),
    lastLedgerId: r.last_ledger_id === null ? null : Number(r.last_ledger_id),
  }));
}

function describeAccounts(accounts: readonly AccountBalance[]): string {
  const shown = accounts.slice(0, 5).map((a) => `${a.username}: balance ${a.credits}, ledger ${a.ledgerSum}`);
  return accounts.length > 5 ? `${shown.join(', ')}, ...` : shown.join(', ');
}

/**
 * Checks the copy inside the target transaction, before it commits: every table holds as many rows
 * as the source, and every account has the same balance, ledger sum, ledger row count and last
 * ledger id on both sides, with its balance equal to the sum of its ledger deltas.
 */
async function verify(src: Executor, dst: Executor, tables: readonly TableCopy[], before: readonly AccountBalance[]): Promise<void> {
  const problems: string[] = [];
  for (const { table } of tables) {
    const [inSource, inTarget] = [await countRows(src, table), await countRows(dst, table)];
    if (inSource !== inTarget) problems.push(`${table}: ${rowsText(inSource)} in the source, ${inTarget} in the target`);
  }
  const after = await balances(dst);
  const expected = new Map(before.map((a) => [a.id, a]));
  if (after.length !== before.length) problems.push(`${before.length} accounts in the source, ${after.length} in the target`);
  for (const account of after) {
    const original = expected.get(account.id);
    if (account.credits !== account.ledgerSum) problems.push(`${account.username}: balance ${account.credits} but ledger sum ${account.ledgerSum} in the target`);
    if (
      original?.username !== account.username ||
      original.credits !== account.credits ||
      original.ledgerSum !== account.ledgerSum ||
      original.ledgerRows !== account.ledgerRows ||
      original.lastLedgerId !== account.lastLedgerId
    ) {
      problems.push(`account ${account.id} (${account.username}) differs between source and target`);
    }
  }
  if (problems.length > 0) {
    throw new StoreCopyError('VERIFY_FAILED', `the copy did not verify, so it was rolled back and the target is empty: ${problems.slice(0, 10).join('; ')}`);
  }
}
