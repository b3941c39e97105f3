import { mkdirSync } from 'node:fs';
import type { MaybePromise } from '../shared/maybe-promise.js';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, Migrator, PostgresDialect, sql, type CompiledQuery, type QueryResult, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { WaitClock } from '../shared/wait-clock.js';
import type { DatabaseSchema, Db, Tx } from './database.js';
import { constraintRecogniser, translateConstraint, type ConstraintKind } from './constraint-violation.js';
import type { Engine } from './engine.js';
import { noteLocalCommit } from './local-commits.js';
import { migrationProvider } from './migrations/index.js';
import { withConnectRetry, type ConnectRetry } from './store-unavailable.js';
import { transactKnowingOutcome, type Settling } from './postgres-commit-outcome.js';
import { isSqliteBusy, openSqliteConnection, type SqliteConnection, type SqliteSynchronous } from './sqlite-connection.js';

export interface StorageOptions {
  /** Directory of the embedded store (`DATA_DIR`). */
  readonly dataDir: string;
  /** `DATABASE_URL`; a `sqlite:` / `file:` URL or a path selects SQLite, postgres URLs PostgreSQL. */
  readonly databaseUrl?: string | undefined;
  /** PostgreSQL connections per process (`DB_POOL_SIZE`). */
  readonly poolSize?: number | undefined;
  /**
   * Told when a PostgreSQL connection fails outside a query (server restart, failover, network),
   * whether idle in the pool or held by a transaction. The pool drops that connection and the
   * next query opens a new one; without a listener node-postgres's 'error' event would end the
   * process (issue 31).
   */
  readonly onConnectionError?: ((error: Error) => void) | undefined;
  /**
   * PostgreSQL: how long a query may wait for a connection, opening one or for a free one of the
   * pool (node-postgres bounds both with one setting), before it fails (`DB_CONNECT_TIMEOUT_MS`).
   */
  readonly connectTimeoutMs?: number | undefined;
  /** PostgreSQL: how start-up waits for a database it cannot reach (`DB_START_WAIT_SECONDS`). */
  readonly startRetry?: ConnectRetry | undefined;
  /**
   * PostgreSQL: how long a transaction run with `knownOutcome` waits, after its COMMIT's answer
   * was lost, to learn from the server whether it committed (`DB_COMMIT_SETTLE_SECONDS`).
   */
  readonly commitSettleMs?: number | undefined;
  /** SQLite's durability of a COMMIT (`SQLITE_SYNCHRONOUS`; see SqliteSynchronous). */
  readonly sqliteSynchronous?: SqliteSynchronous | undefined;
  /**
   * SQLite: how long a write waits (asynchronously) for another connection's lock before it fails;
   * default SQLITE_LOCK_WAIT_MS (tests shorten it).
   */
  readonly sqliteLockWaitMs?: number | undefined;
  /** SQLite: the clock of that wait; default the real one (tests pass one whose time they move). */
  readonly sqliteLockWaitClock?: WaitClock | undefined;
}

/**
 * How promptly Storage.changeCounter follows changes made elsewhere:
 * - `every-commit`: it moves the moment another connection or process commits (SQLite);
 * - `clock`: it is a time bucket, so another instance's change shows within the bucket at worst
 *   (PostgreSQL, which has no cheap change signal).
 */
export type ChangeSignal = 'every-commit' | 'clock';

/**
 * The store, chosen once at boot (STYLE.md 5). Queries are written once with Kysely; each real
 * difference between the engines is one named capability below (the way Kysely's DialectAdapter
 * names them), so no code outside storage/ asks which engine it runs on.
 */
export interface Storage {
  /** Queries outside a transaction. */
  readonly db: Db;
  /**
   * Runs `work` in one transaction (the only transaction API; see Tx). Transaction style is the
   * engines' difference for the hot path: SQLite takes the write lock up front (BEGIN IMMEDIATE)
   * and runs the statements synchronously on its single connection while holding Kysely's
   * connection lock, so nothing else interleaves; PostgreSQL runs an ordinary Kysely transaction
   * on a pooled connection. On SQLite `work` runs again after an SQLITE_BUSY (retryOnSqliteBusy in
   * sqlite-connection.ts), so it must have no effect outside the transaction.
   *
   * `knownOutcome` (the debits): when the connection is lost after `work` and the COMMIT's answer
   * never comes, PostgreSQL is asked (txid_status) whether that transaction committed, for up to
   * DB_COMMIT_SETTLE_SECONDS: committed, the result is returned as if nothing happened; rolled
   * back, StoreUnavailable is thrown; still unknown, CommitOutcomeUnknown (store-unavailable.ts).
   * It costs one more statement per transaction (txid_current), so only money asks for it.
   * SQLite commits in process: its outcome is always known.
   */
  transaction<T>(work: (tx: Tx) => MaybePromise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Runs a read compiled once (PreparedQuery) outside a transaction, like `db.executeQuery`.
   * SQLite runs it at once and returns a plain value when its one connection is idle (no promise:
   * a lookup with an Idempotency-Key reads its record on every request, test/cost/ counts them),
   * and through Kysely otherwise; PostgreSQL always through Kysely.
   */
  read<R>(query: CompiledQuery<R>): MaybePromise<QueryResult<R>>;
  /** The engine's name, for logs and /readyz only: behaviour goes through the capabilities. */
  readonly engine: Engine;
  /** Where the data lives, for logs (never includes a password). */
  readonly description: string;
  /**
   * A number that changes when something else may have changed the data, so in-process caches
   * know when to reload: SQLite's data_version (changes when another connection or process
   * commits, at once; about 2 µs to read, a read transaction, so lookups share one read per turn
   * of the event loop through ChangeSnapshot);
   * PostgreSQL, which offers no cheap equivalent, a one-second clock bucket.
   */
  readonly changeCounter: () => number;
  /** How good changeCounter is as a signal (see ChangeSignal). */
  readonly changeSignal: ChangeSignal;
  /**
   * Bulk-write tuning: sets the connection up for a long run of large write transactions (an
   * import) and returns how to put it back. SQLite: a larger page cache and rarer checkpoints
   * (IMPORT_PRAGMAS); PostgreSQL sizes its buffers and checkpoints on the server, nothing to do.
   */
  tuneForBulkWrites(): Promise<() => Promise<void>>;
  /**
   * The clause that ends the SELECT of a claim (an UPDATE that takes due rows of a work queue,
   * such as the webhook outbox, for one claimer), so that claimers running at once do not wait for
   * or take each other's rows. PostgreSQL: `for update skip locked` (the SELECT locks the rows it
   * picks and passes over rows another claimer has locked, instead of queueing behind its
   * transaction). SQLite: nothing; it has one writer at a time, so a second claim runs after the
   * first one's commit and sees its claim.
   */
  readonly skipLocked: RawBuilder<unknown>;
  /**
   * Makes the transactions that call it with the same `key` run one after another, from this
   * call to their commit, on every instance (a check-then-insert such as a sign-up's per-address
   * count). PostgreSQL: a transaction-level advisory lock on the key's hash, released by COMMIT or
   * ROLLBACK. SQLite: nothing; BEGIN IMMEDIATE already runs one write transaction at a time.
   */
  serialize(tx: Tx, key: string): Promise<void>;
  /**
   * Which of the store's constraints `error` (thrown by a query) reports, or undefined for any
   * other error: a unique index (SQLITE_CONSTRAINT_UNIQUE or _PRIMARYKEY; SQLSTATE 23505) or a
   * foreign key (SQLITE_CONSTRAINT_FOREIGNKEY; SQLSTATE 23503). `transaction` already rethrows
   * these as ConstraintViolation; this is for writes made outside one.
   */
  constraintViolated(error: unknown): ConstraintKind | undefined;
  close(): Promise<void>;
}

/** How a transaction is run (Storage.transaction). */
export interface TransactionOptions {
  readonly knownOutcome?: boolean;
}

/** `transact` rethrowing the engine's constraint errors as ConstraintViolation. */
function translatingConstraints(transact: Storage['transaction'], recognise: (error: unknown) => ConstraintKind | undefined): Storage['transaction'] {
  return (work, options) => transact(work, options).catch((error: unknown) => {
    throw translateConstraint(recognise, error);
  });
}

/**
 * The first half of PostgreSQL's two-integer advisory lock keys for `serialize`; that key space
 * does not overlap the one-bigint key of the migration lock. "vlse".
 */
const SERIALIZE_LOCK_CLASS = 0x76_6c_73_65;

async function serializePostgres(tx: Tx, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(${SERIALIZE_LOCK_CLASS}::int4, hashtext(${key}))`.execute(tx.db);
}

const SKIP_LOCKED_POSTGRES = sql`for update skip locked`;
const SKIP_LOCKED_SQLITE = sql``;

/**
 * SQLite settings while a bulk import runs (the previous values are restored after it):
 * - a 64 MB page cache: the records' key index outgrows the default cache after ~100,000 rows and
 *   every miss re-reads a page; a fixed amount, outside the JavaScript heap;
 * - a checkpoint every 10,000 WAL pages instead of 1,000: fewer, larger copies into the database
 *   file.
 * Together about a third less CPU in SQLite for 1 M rows (bench:rdw-import).
 */
const IMPORT_PRAGMAS = { cache_size: -64 * 1024, wal_autocheckpoint: 10_000 } as const;

async function tuneSqliteForBulkWrites(db: Db): Promise<() => Promise<void>> {
  const previous: Array<readonly [string, unknown]> = [];
  for (const [name, value] of Object.entries(IMPORT_PRAGMAS)) {
    const { rows } = await sql<Record<string, unknown>>`PRAGMA ${sql.raw(name)}`.execute(db);
    previous.push([name, rows[0]?.[name]]);
    await sql.raw(`PRAGMA ${name} = ${value}`).execute(db);
  }
  return async () => {
    for (const [name, value] of previous) {
      if (typeof value === 'number') await sql.raw(`PRAGMA ${name} = ${value}`).execute(db);
    }
  };
}

function sqlitePath(options: StorageOptions): string {
  const url = options.databaseUrl;
  if (url === undefined || url === '') {
    mkdirSync(options.dataDir, { recursive: true });
    return join(options.dataDir, 'vehicle-lookup.sqlite');
  }
  if (url === ':memory:') return url;
  return url.replace(/^(sqlite|file):(\/\/)?/, '');
}

/** True when DATABASE_URL selects PostgreSQL. */
export function isPostgresUrl(url: string | undefined): boolean {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url);
}

/** The URL without its password, for logs and /readyz. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/** How long another instance's change (a disabled account, a rotated key) may take to show. */
const POSTGRES_CACHE_TTL_MS = 1000;

/** Any constant shared by every instance: migrations of all instances queue on it. */
const MIGRATION_LOCK_KEY = 0x76_6c_6d_69; // "vlmi"

/** PostgreSQL's settings of openPostgres (StorageOptions, defaults applied). */
interface PostgresOptions {
  readonly poolSize: number;
  readonly onConnectionError: (error: Error) => void;
  readonly connectTimeoutMs: number;
  readonly startRetry: ConnectRetry;
  readonly commitSettleMs: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_COMMIT_SETTLE_MS = 30_000;

/**
 * Opens PostgreSQL. Migrations run under a session-level advisory lock held on a connection of
 * its own, so instances that start together apply them one at a time (issue 5). An unreachable
 * database at start is retried with a bounded back-off (DB_START_WAIT_SECONDS); every client
 * listens for 'error' (issue 31: an unhandled one ended the process on a database restart).
 */
async function openPostgres(url: string, options: PostgresOptions): Promise<Storage> {
  // int8 (COUNT, SUM) as a JS number: every count and balance we read fits comfortably.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
  const description = redactUrl(url);
  const onConnectionError = options.onConnectionError;
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize, application_name: 'vehicle-lookup', connectionTimeoutMillis: options.connectTimeoutMs });
  // The pool listens on idle clients only; a client a transaction holds (checked out) emits
  // 'error' with no listener when the server goes away between its statements, and that ended
  // the process. Every client gets a listener for its whole life; the query in flight still
  // fails with its own error, and the pool drops the broken client when it is released.
  pool.on('connect', (client) => {
    client.on('error', onConnectionError);
  });
  pool.on('error', onConnectionError);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  try {
    await withConnectRetry(description, options.startRetry, () => migrateUnderLock(url, db, options.connectTimeoutMs, onConnectionError));
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const constraintViolated = constraintRecogniser('postgres');
  const txOf = (trx: Kysely<DatabaseSchema>): Tx => ({ db: trx, run: (query) => trx.executeQuery(query) });
  let closed = false;
  const settling: Settling = { pool, closed: () => closed };
  const transact = <T>(work: (tx: Tx) => MaybePromise<T>, transactionOptions?: TransactionOptions): Promise<T> =>
    transactionOptions?.knownOutcome === true ? transactKnowingOutcome(db, settling, work, options.commitSettleMs) : db.transaction().execute(async (trx) => work(txOf(trx)));
  return {
    db,
    transaction: translatingConstraints(transact, constraintViolated),
    read: (query) => db.executeQuery(query),
    engine: 'postgres',
    description,
    changeCounter: () => Math.floor(Date.now() / POSTGRES_CACHE_TTL_MS),
    changeSignal: 'clock',
    tuneForBulkWrites: () => Promise.resolve(() => Promise.resolve()),
    skipLocked: SKIP_LOCKED_POSTGRES,
    serialize: serializePostgres,
    constraintViolated,
    close: () => {
      closed = true;
      return db.destroy();
    },
  };
}

/** One attempt at the migrations under the advisory lock, on a connection of their own. */
async function migrateUnderLock(url: string, db: Db, connectTimeoutMs: number, onConnectionError: (error: Error) => void): Promise<void> {
  const lock = new pg.Client({ connectionString: url, application_name: 'vehicle-lookup-migrations', connectionTimeoutMillis: connectTimeoutMs });
  // A server going away while the lock is held: the query in flight fails, the process does not.
  lock.on('error', onConnectionError);
  try {
    await lock.connect();
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await migrate(db, 'postgres');
    } finally {
      await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await lock.end().catch(() => undefined);
  }
}

/** Opens the store chosen by the configuration and brings its schema up to date. */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  const url = options.databaseUrl ?? '';
  if (isPostgresUrl(url)) {
    return openPostgres(url, {
      poolSize: options.poolSize ?? 10,
      onConnectionError: options.onConnectionError ?? (() => undefined),
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      startRetry: options.startRetry ?? { waitMs: 0 },
      commitSettleMs: options.commitSettleMs ?? DEFAULT_COMMIT_SETTLE_MS,
    });
  }
  const path = sqlitePath(options);
  const constraintViolated = constraintRecogniser('sqlite');
  // The constraint translation rides on the lock wait's own rejection handler: no promise more
  // per transaction on the lookup path (test/cost).
  const connection = openSqliteConnection(path, {
    synchronous: options.sqliteSynchronous,
    lockWaitMs: options.sqliteLockWaitMs,
    lockWaitClock: options.sqliteLockWaitClock,
    translateError: (error) => translateConstraint(constraintViolated, error),
  });
  const { db, dataVersion } = connection;
  try {
    await migrateSqlite(connection);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return {
    db,
    transaction: connection.transaction,
    read: connection.read,
    engine: 'sqlite',
    description: `sqlite:${path}`,
    changeCounter: () => dataVersion.get() as number,
    changeSignal: 'every-commit',
    tuneForBulkWrites: () => tuneSqliteForBulkWrites(db),
    skipLocked: SKIP_LOCKED_SQLITE,
    serialize: () => Promise.resolve(),
    constraintViolated,
    close: () => db.destroy(),
  };
}

async function migrate(db: Db, engine: Engine): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider(engine) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined || failed) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${reason}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Several processes on one SQLite file (issue 5).

/** How long start-up waits for another process's SQLite migration before giving up. */
const SQLITE_MIGRATION_WAIT_MS = 60_000;

/**
 * Brings the schema up to date inside one BEGIN IMMEDIATE transaction. Kysely runs SQLite
 * migrations without a transaction and without a lock (its SqliteAdapter has no transactional DDL
 * and a no-op migration lock), so two processes starting on a new store both ran 0001 and one
 * failed with "table accounts already exists", and a process killed mid-migration left half a
 * schema that no later start could repair. SQLite's DDL is transactional: the write lock is the
 * cross-process migration lock, and a crash rolls everything back.
 */
async function migrateSqlite(connection: SqliteConnection): Promise<void> {
  await beginImmediateWaiting(connection.sqlite, SQLITE_MIGRATION_WAIT_MS);
  try {
    await migrate(connection.db, 'sqlite');
    connection.sqlite.exec('COMMIT');
    noteLocalCommit();
  } catch (error) {
    if (connection.sqlite.inTransaction) connection.sqlite.exec('ROLLBACK');
    throw error;
  }
}

/**
 * BEGIN IMMEDIATE, polled without the busy handler so the waiting does not block the event loop
 * (another store opened in this very process may be the one migrating). Nothing else uses the
 * connection yet, so changing its busy_timeout for a moment is safe.
 */
async function beginImmediateWaiting(sqlite: SqliteConnection['sqlite'], waitMs: number): Promise<void> {
  const timeout = Number(sqlite.pragma('busy_timeout', { simple: true }));
  sqlite.pragma('busy_timeout = 0');
  try {
    const deadline = performance.now() + waitMs;
    for (let attempt = 1; ; attempt += 1) {
      try {
        sqlite.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isSqliteBusy(error)) throw error;
        if (performance.now() >= deadline) throw new Error(`the SQLite store stayed locked by another connection for ${waitMs / 1000} s; cannot bring its schema up to date`);
        await sleep(Math.min(100, 5 * attempt));
      }
    }
  } finally {
    sqlite.pragma(`busy_timeout = ${timeout}`);
  }
}
