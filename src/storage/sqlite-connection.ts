import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, type CompiledQuery, type QueryResult } from 'kysely';
import type { DatabaseSchema, Tx } from './database.js';
import { noteLocalCommit } from './local-commits.js';
import { withStatementCache } from './sqlite-statement-cache.js';

/** Milliseconds a writer waits for another connection's lock before SQLITE_BUSY. */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** Storage.transaction's shape. */
export type Transact = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

/** True for SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, _RECOVERY, _TIMEOUT). */
export function isSqliteBusy(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** How long a transaction that keeps meeting SQLITE_BUSY is tried again, from its first attempt. */
const SQLITE_BUSY_RETRY_MS = 30_000;

/**
 * `transaction`, tried again when SQLite answers SQLITE_BUSY. BEGIN IMMEDIATE already waits up to
 * busy_timeout for another connection's write lock (SQLite's busy handler, which better-sqlite3
 * runs synchronously), so this only happens when a lock is held longer than that: a long import or
 * CLI transaction in another process, a stopped process. Without it the debit batch fails and every
 * lookup in it gets an error instead of its data. Trying again is safe: an SQLITE_BUSY that leaves
 * `transaction` means nothing was committed (BEGIN failed, or the transaction was rolled back), and
 * the work builds its result from what it reads each time.
 */
export function retryOnSqliteBusy(transact: Transact, giveUpAfterMs = SQLITE_BUSY_RETRY_MS): Transact {
  return async (work) => {
    const started = performance.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await transact(work);
      } catch (error) {
        if (!isSqliteBusy(error) || performance.now() - started >= giveUpAfterMs) throw error;
        // Between attempts the event loop runs again (each attempt blocks it for up to busy_timeout).
        await sleep(Math.min(250, 10 * 2 ** attempt));
      }
    }
  };
}

export interface SqliteConnection {
  readonly sqlite: SQLite.Database;
  readonly db: Kysely<DatabaseSchema>;
  /** See Storage.transaction. */
  readonly transaction: Transact;
  /** PRAGMA data_version, prepared once. */
  readonly dataVersion: SQLite.Statement;
}

/**
 * The store's SQLite connection: WAL, NORMAL sync, busy timeout, foreign keys, statements prepared
 * once, and the synchronous transaction path.
 */
export function openSqliteConnection(path: string): SqliteConnection {
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the last
  // transactions, never corrupt the file.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  const statements = withStatementCache(sqlite);
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: statements }) });
  const begin = sqlite.prepare('BEGIN IMMEDIATE');
  const commit = sqlite.prepare('COMMIT');
  const rollback = sqlite.prepare('ROLLBACK');
  const runSync = <R>(query: CompiledQuery<R>): Promise<QueryResult<R>> => {
    const statement = statements.prepare(query.sql);
    if (statement.reader) return Promise.resolve({ rows: statement.all(query.parameters) as R[] });
    const { changes } = statement.run(query.parameters);
    return Promise.resolve({ rows: [], numAffectedRows: BigInt(changes) });
  };
  const transaction = <T>(work: (tx: Tx) => Promise<T>): Promise<T> =>
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
  // Read on every lookup: prepared once (sqlite.pragma() would prepare it each time).
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  // A transaction that met SQLITE_BUSY is tried again, so a long lock elsewhere delays a debit
  // instead of failing a paid lookup.
  return { sqlite, db, transaction: retryOnSqliteBusy(transaction), dataVersion };
}
