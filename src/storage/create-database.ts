import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { CompiledQuery} from 'kysely';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type QueryResult } from 'kysely';
import pg from 'pg';
import { inTransaction, type DatabaseSchema, type Db } from './database.js';
import type { Engine } from './engine.js';
import { migrationProvider } from './migrations/index.js';
import { withStatementCache } from './sqlite-statement-cache.js';

export interface StorageOptions {
  /** Directory of the embedded store (`DATA_DIR`). */
  readonly dataDir: string;
  /** `DATABASE_URL`; a `sqlite:` / `file:` URL or a path selects SQLite, postgres URLs PostgreSQL. */
  readonly databaseUrl?: string | undefined;
  /** PostgreSQL connections per process (`DB_POOL_SIZE`). */
  readonly poolSize?: number | undefined;
  /**
   * Told when an idle pooled connection fails (server restart, network). The pool drops that
   * connection and the next query opens a new one; without a listener the error would end the
   * process.
   */
  readonly onConnectionError?: ((error: Error) => void) | undefined;
}

/** Runs one compiled query inside a `transact` unit of work. */
export type RunCompiled = <R>(query: CompiledQuery<R>) => Promise<QueryResult<R>>;

export interface Storage {
  readonly db: Db;
  /**
   * Runs `work` in one transaction, giving it a runner for compiled queries (see PreparedQuery).
   * The one place the engines differ for the hot path: SQLite runs the statements synchronously on
   * its single connection while holding Kysely's connection lock, so nothing else interleaves and
   * the per-statement cost is the statement itself; PostgreSQL uses an ordinary Kysely transaction.
   */
  transact<T>(work: (run: RunCompiled) => Promise<T>): Promise<T>;
  readonly engine: Engine;
  /** Where the data lives, for logs (never includes a password). */
  readonly description: string;
  /**
   * A number that changes when something else may have changed the data, so in-process caches
   * know when to reload: SQLite's data_version (changes when another connection or process
   * commits, at once); PostgreSQL, which offers no cheap equivalent, a one-second clock bucket.
   */
  readonly changeCounter: () => number;
  close(): Promise<void>;
}

/**
 * How often SQLite's data_version is read at most. Reading it takes a shared lock (a few
 * microseconds); under load once per few milliseconds is plenty: another process's change shows
 * within this interval, this process's own changes invalidate the caches directly.
 */
const CHANGE_CHECK_INTERVAL_MS = 5;

/** `read`, called at most once per `intervalMs`; in between, the last value. */
function throttled(read: () => number, intervalMs: number): () => number {
  let last = Number.NEGATIVE_INFINITY;
  let value = 0;
  return () => {
    const now = performance.now();
    if (now - last >= intervalMs) {
      last = now;
      value = read();
    }
    return value;
  };
}

/** Milliseconds a writer waits for another process's lock before SQLITE_BUSY. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

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

/**
 * Opens PostgreSQL. Migrations run under a session-level advisory lock held on a connection of
 * its own, so instances that start together apply them one at a time (issue 5).
 */
async function openPostgres(url: string, poolSize: number, onConnectionError: (error: Error) => void): Promise<Storage> {
  // int8 (COUNT, SUM) as a JS number: every count and balance we read fits comfortably.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
  const pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: 'vehicle-lookup' });
  pool.on('error', onConnectionError);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  const lock = new pg.Client({ connectionString: url, application_name: 'vehicle-lookup-migrations' });
  try {
    await lock.connect();
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await migrate(db, 'postgres');
    } finally {
      await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } catch (error) {
    await db.destroy();
    throw error;
  } finally {
    await lock.end().catch(() => undefined);
  }
  return {
    db,
    transact: (work) => inTransaction(db, (trx) => work((query) => trx.executeQuery(query))),
    engine: 'postgres',
    description: redactUrl(url),
    changeCounter: () => Math.floor(Date.now() / POSTGRES_CACHE_TTL_MS),
    close: () => db.destroy(),
  };
}

/** Opens the store chosen by the configuration and brings its schema up to date. */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  const url = options.databaseUrl ?? '';
  if (isPostgresUrl(url)) return openPostgres(url, options.poolSize ?? 10, options.onConnectionError ?? (() => undefined));
  const path = sqlitePath(options);
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
  const runSync: RunCompiled = <R>(query: CompiledQuery<R>): Promise<QueryResult<R>> => {
    const statement = statements.prepare(query.sql);
    if (statement.reader) return Promise.resolve({ rows: statement.all(query.parameters) as R[] });
    const { changes } = statement.run(query.parameters);
    return Promise.resolve({ rows: [], numAffectedRows: BigInt(changes) });
  };
  const transact = <T>(work: (run: RunCompiled) => Promise<T>): Promise<T> =>
    // Kysely's SQLite driver serialises everything on one connection with a mutex; holding it
    // keeps every other query out of this transaction. `work` only awaits already-settled
    // promises from runSync, so no I/O can run while the transaction is open.
    db.connection().execute(async () => {
      begin.run();
      try {
        const result = await work(runSync);
        commit.run();
        return result;
      } catch (error) {
        if (sqlite.inTransaction) rollback.run();
        throw error;
      }
    });
  // Read on every lookup: prepared once (sqlite.pragma() would prepare it each time).
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  await migrate(db, 'sqlite');
  return {
    db,
    transact,
    engine: 'sqlite',
    description: `sqlite:${path}`,
    changeCounter: throttled(() => dataVersion.get() as number, CHANGE_CHECK_INTERVAL_MS),
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
