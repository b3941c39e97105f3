import SQLite from 'better-sqlite3';
import {
  Kysely,
  SqliteDialect,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';
import { realWaitClock, type WaitClock } from '../shared/wait-clock.js';
import type { DatabaseSchema, Tx } from './database.js';
import type { MaybePromise } from '../shared/maybe-promise.js';
import { noteLocalCommit } from './local-commits.js';
import { withStatementCache } from './sqlite-statement-cache.js';

/**
 * How long SQLite's own busy handler waits for another connection's lock: not at all. better-sqlite3
 * runs that handler synchronously, on the event loop: with the old 5 s, a write transaction held by
 * another process (a CLI import, a second instance) froze the whole server, /healthz included, for
 * up to 5 s per attempt (issue 17, item 6: /healthz 4.7 s, a lookup 10.6 s behind a 7 s lock).
 * Instead, a statement or transaction that meets the lock fails at once with SQLITE_BUSY and is
 * tried again after an asynchronous back-off (lockBackoffMs), up to SQLITE_LOCK_WAIT_MS, while the
 * event loop serves everything else.
 */
const SQLITE_BUSY_TIMEOUT_MS = 0;

/**
 * The busy handler's wait while the connection is being opened (switching a new file to WAL takes
 * a lock for a moment): start-up, before anything is served, as it always was.
 */
const SQLITE_OPEN_BUSY_TIMEOUT_MS = 5000;

/**
 * How long a write waits for another connection's lock before it fails. A lookup's debit waits
 * this long at most, then the lookup fails with nothing charged (its transaction never began).
 * Longer than any lock this service itself holds (the bulk importers commit every 1.5 s) and than
 * a short CLI command; shorter than an HTTP client's usual timeout.
 */
export const SQLITE_LOCK_WAIT_MS = 10_000;

/**
 * How a write waits for another connection's lock: for at most `ms`, on `clock` (the real one in
 * the service; tests pass one whose time they move, test/storage/sqlite-lock-wait.test.ts).
 */
export interface LockWait {
  readonly ms: number;
  readonly clock: WaitClock;
}

/** The service's lock wait: SQLITE_LOCK_WAIT_MS on the real clock. */
export const DEFAULT_LOCK_WAIT: LockWait = { ms: SQLITE_LOCK_WAIT_MS, clock: realWaitClock };

/** Storage.transaction's shape. */
export type Transact = <T>(work: (tx: Tx) => MaybePromise<T>) => Promise<T>;

/** True for SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, _RECOVERY, _TIMEOUT). */
export function isSqliteBusy(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Wait before attempt `attempt + 1`: 2, 4, 8... ms, then every 25 ms, so a released lock is taken
 * within about 25 ms and a failed attempt (one BEGIN IMMEDIATE, microseconds) costs nothing worth
 * counting meanwhile.
 */
function lockBackoffMs(attempt: number): number {
  return Math.min(25, 2 ** attempt);
}

/**
 * `transaction`, tried again when SQLite answers SQLITE_BUSY: another connection holds the write
 * lock (a long import or CLI transaction in another process, a second instance, a stopped
 * process). Without it the debit batch fails and every lookup in it gets an error instead of its
 * data. Trying again is safe: an SQLITE_BUSY that leaves `transaction` means nothing was committed
 * (BEGIN failed, or the transaction was rolled back), and the work builds its result from what it
 * reads each time. Between attempts the connection is free and the event loop runs.
 */
export function retryOnSqliteBusy(transact: Transact, wait: LockWait = DEFAULT_LOCK_WAIT, giveUp: (error: unknown) => unknown = (error) => error): Transact {
  // The first attempt with a `catch` rather than an async function around it: one promise per
  // transaction instead of two (the cost guard, test/cost/, counts them). The error finally
  // thrown passes through `giveUp` in the same handler (the store's constraint translation), so
  // that costs no promise of its own either.
  return (work) => {
    const started = wait.clock.now();
    return transact(work).catch(async (error: unknown) => {
      for (let attempt = 1; ; attempt += 1) {
        if (!isSqliteBusy(error) || wait.clock.now() - started >= wait.ms) throw giveUp(error);
        await wait.clock.sleep(lockBackoffMs(attempt));
        try {
          return await transact(work);
        } catch (next) {
          error = next;
        }
      }
    });
  };
}

/**
 * Kysely's SQLite driver, with a statement that meets another connection's lock outside a
 * transaction (a write through Storage.db: an account change, a test plate, an upstream cache
 * entry) tried again asynchronously, as retryOnSqliteBusy does for transactions. Such a statement
 * did nothing (autocommit), so trying it again is safe; between attempts the connection is given
 * back, so other queries (a lookup's reads) run meanwhile. Inside a transaction an SQLITE_BUSY is
 * the transaction's to handle, and is passed on.
 */
class LockWaitingDriver implements Driver {
  private connection: DatabaseConnection | undefined;
  /** Callers that hold the connection or wait for it through Kysely (acquired, not yet released). */
  private holders = 0;
  /** A transaction of openSqliteConnection's direct path has the connection (see `holdIfIdle`). */
  private held = false;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly inner: Driver,
    private readonly sqlite: SQLite.Database,
    private readonly wait: LockWait,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.holders += 1;
    try {
      while (this.held) await new Promise<void>((resolve) => this.waiters.push(resolve));
      const raw = await this.inner.acquireConnection();
      // SQLite has one connection; it is wrapped once, so Kysely sees one connection too.
      this.connection ??= this.wrap(raw);
      return this.connection;
    } catch (error) {
      this.holders -= 1;
      throw error;
    }
  }

  /**
   * Takes the connection for a direct transaction when nobody holds it or waits for it through
   * Kysely: true when taken (then `unhold` must follow). Kysely's queries wait until `unhold`.
   */
  holdIfIdle(): boolean {
    if (this.holders > 0 || this.held) return false;
    this.held = true;
    return true;
  }

  isHeld(): boolean {
    return this.held;
  }

  unhold(): void {
    this.held = false;
    const waiting = this.waiters;
    if (waiting.length === 0) return;
    this.waiters = [];
    for (const resolve of waiting) resolve();
  }

  private wrap(raw: DatabaseConnection): DatabaseConnection {
    return {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        const started = this.wait.clock.now();
        for (let attempt = 1; ; attempt += 1) {
          try {
            return await raw.executeQuery<R>(query);
          } catch (error) {
            if (!isSqliteBusy(error) || this.sqlite.inTransaction || this.wait.clock.now() - started >= this.wait.ms) throw error;
            await this.inner.releaseConnection(raw);
            await this.wait.clock.sleep(lockBackoffMs(attempt));
            await this.inner.acquireConnection();
          }
        }
      },
      streamQuery: (query, chunkSize) => raw.streamQuery(query, chunkSize),
    };
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.holders -= 1;
    return this.inner.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

class LockWaitingSqliteDialect extends SqliteDialect {
  /** The driver Kysely created (one per Kysely instance; this dialect serves one). */
  driver: LockWaitingDriver | undefined;

  constructor(
    config: SqliteDialectConfig,
    private readonly sqlite: SQLite.Database,
    private readonly wait: LockWait,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    this.driver = new LockWaitingDriver(super.createDriver(), this.sqlite, this.wait);
    return this.driver;
  }
}

/**
 * SQLite's `synchronous` setting in WAL mode (SQLITE_SYNCHRONOUS):
 * - `full`: every COMMIT syncs the WAL to disk before it returns, so a committed debit survives an
 *   operating-system crash or power loss too;
 * - `normal`: the WAL is synced only at checkpoints; durable across application crashes (kill -9),
 *   but an OS crash or power loss can roll back the last transactions (never corrupt the file).
 */
export type SqliteSynchronous = 'full' | 'normal';

/**
 * The default: `full`, because a COMMIT is what a lookup's debit waits for before its answer is
 * sent; with `normal` a power cut could erase debits of lookups already answered. The group commit
 * (DebitBatcher) makes that one sync per batch, not per debit: bench/sqlite-durability.bench.ts
 * measures the price, docs/operating.md gives the figures.
 */
export const DEFAULT_SQLITE_SYNCHRONOUS: SqliteSynchronous = 'full';

export interface SqliteConnectionOptions {
  /** See SqliteSynchronous; default DEFAULT_SQLITE_SYNCHRONOUS. */
  readonly synchronous?: SqliteSynchronous | undefined;
  /** How long a write waits for another connection's lock; default SQLITE_LOCK_WAIT_MS (tests shorten it). */
  readonly lockWaitMs?: number | undefined;
  /** The clock that wait runs on; default the real one (tests move their own). */
  readonly lockWaitClock?: WaitClock | undefined;
  /** What a failed transaction finally throws instead of its error (create-database.ts: constraint violations); default the error itself. */
  readonly translateError?: ((error: unknown) => unknown) | undefined;
}

export interface SqliteConnection {
  readonly sqlite: SQLite.Database;
  readonly db: Kysely<DatabaseSchema>;
  /** See Storage.transaction. */
  readonly transaction: Transact;
  /** PRAGMA data_version, prepared once. */
  readonly dataVersion: SQLite.Statement;
  /** See Storage.read. */
  readonly read: <R>(query: CompiledQuery<R>) => MaybePromise<QueryResult<R>>;
}

/**
 * The store's SQLite connection: WAL, the chosen sync level, no synchronous busy waiting (locks
 * are waited for asynchronously), foreign keys, statements prepared once, and the synchronous
 * transaction path.
 */
export function openSqliteConnection(path: string, options: SqliteConnectionOptions = {}): SqliteConnection {
  const lockWait: LockWait = { ms: options.lockWaitMs ?? SQLITE_LOCK_WAIT_MS, clock: options.lockWaitClock ?? realWaitClock };
  const sqlite = new SQLite(path, { timeout: SQLITE_OPEN_BUSY_TIMEOUT_MS });
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${(options.synchronous ?? DEFAULT_SQLITE_SYNCHRONOUS) === 'full' ? 'FULL' : 'NORMAL'}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  const statements = withStatementCache(sqlite);
  const dialect = new LockWaitingSqliteDialect({ database: statements }, sqlite, lockWait);
  const db = new Kysely<DatabaseSchema>({ dialect });
  const driver = dialect.driver;
  if (!driver) throw new Error('Kysely did not create the SQLite driver');
  const begin = sqlite.prepare('BEGIN IMMEDIATE');
  const commit = sqlite.prepare('COMMIT');
  const rollback = sqlite.prepare('ROLLBACK');
  const runSync = <R>(query: CompiledQuery<R>): QueryResult<R> => {
    const statement = statements.prepare(query.sql);
    if (statement.reader) return { rows: statement.all(query.parameters) as R[] };
    const { changes } = statement.run(query.parameters);
    return { rows: [], numAffectedRows: BigInt(changes) };
  };
  const throughKysely = <T>(work: (tx: Tx) => MaybePromise<T>): Promise<T> =>
    // Kysely's SQLite driver serialises everything on one connection with a mutex; holding it
    // keeps every other query out of this transaction, and `connection` is Kysely bound to it.
    // The hot path (debits) only awaits already-settled promises from runSync, so no I/O runs
    // while its transaction is open.
    db.connection().execute(async (connection) => {
      begin.run();
      try {
        const result = await work({ db: connection, run: runSync });
        commit.run();
        noteLocalCommit();
        return result;
      } catch (error) {
        if (sqlite.inTransaction) rollback.run();
        throw error;
      }
    });
  // The direct path's `tx.db`: Kysely's own SQLite driver on the same statements, with a mutex of
  // its own that only this path's transactions use (one at a time: the driver's hold).
  const direct: Tx = { db: new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: statements }) }), run: runSync };
  const abort = (): void => {
    try {
      if (sqlite.inTransaction) rollback.run();
    } finally {
      driver.unhold();
    }
  };
  /**
   * A transaction on the connection nobody else is using, without Kysely's connection machinery
   * (provider, driver, mutex: 17 promises of the 46 a warm debit cost, test/cost/): the driver's
   * hold makes Kysely's queries wait until it ends, as its mutex would. When anything holds or
   * waits for the connection, the transaction takes its turn through Kysely instead.
   */
  const finish = <T>(result: T): T => {
    try {
      commit.run();
    } catch (error) {
      abort();
      throw error;
    }
    driver.unhold();
    noteLocalCommit();
    return result;
  };
  const transaction = <T>(work: (tx: Tx) => MaybePromise<T>): Promise<T> => {
    if (sqlite.inTransaction || !driver.holdIfIdle()) return throughKysely(work);
    let done: MaybePromise<T>;
    try {
      begin.run();
      done = work(direct);
      // Work that ran to the end at once (a batch of plain debits: Tx.run is synchronous here)
      // commits at once: one promise for the whole transaction.
      if (!(done instanceof Promise)) return Promise.resolve(finish(done));
    } catch (error) {
      if (driver.isHeld()) abort();
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return done.then(finish, (error: unknown) => {
      abort();
      throw error;
    });
  };
  /**
   * A read at once when the connection is idle (nobody holds it or waits for it, no transaction
   * open): then Kysely would run the same statement at once too, only through its provider,
   * driver and mutex (about 10 promises: an Idempotency-Key's lookup of its record, test/cost/).
   * Otherwise, or when the read meets a lock (SQLITE_BUSY, rare in WAL mode), it takes its turn
   * through Kysely, whose driver waits and tries again. Never inside a transaction: a read there
   * would see the transaction's uncommitted writes.
   */
  const read = <R>(query: CompiledQuery<R>): MaybePromise<QueryResult<R>> => {
    if (sqlite.inTransaction || !driver.holdIfIdle()) return db.executeQuery(query);
    let rows: R[];
    try {
      const statement = statements.prepare(query.sql);
      if (!statement.reader) throw new Error(`Storage.read runs queries that return rows only: ${query.sql}`);
      rows = statement.all(query.parameters) as R[];
    } catch (error) {
      driver.unhold();
      if (isSqliteBusy(error)) return db.executeQuery(query);
      throw error;
    }
    driver.unhold();
    return { rows };
  };
  // Read on every lookup: prepared once (sqlite.pragma() would prepare it each time).
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  // A transaction that met SQLITE_BUSY is tried again, so a long lock elsewhere delays a debit
  // instead of failing a paid lookup.
  return { sqlite, db, transaction: retryOnSqliteBusy(transaction, lockWait, options.translateError), dataVersion, read };
}
