import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import type { DatabaseSchema, Db } from './database.js';
import type { Engine } from './engine.js';
import { migrationProvider } from './migrations/index.js';

export interface StorageOptions {
  /** Directory of the embedded store (`DATA_DIR`). */
  readonly dataDir: string;
  /** `DATABASE_URL`; a `sqlite:` / `file:` URL or a path selects SQLite, postgres URLs PostgreSQL. */
  readonly databaseUrl?: string | undefined;
}

export interface Storage {
  readonly db: Db;
  readonly engine: Engine;
  /** Where the data lives, for logs (never includes a password). */
  readonly description: string;
  close(): Promise<void>;
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

/** Opens the store chosen by the configuration and brings its schema up to date. */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  const url = options.databaseUrl ?? '';
  if (/^postgres(ql)?:/i.test(url)) {
    throw new Error('PostgreSQL storage is not available in this build yet; unset DATABASE_URL to use the embedded SQLite store');
  }
  const path = sqlitePath(options);
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the last
  // transactions, never corrupt the file.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrate(db, 'sqlite');
  return {
    db,
    engine: 'sqlite',
    description: `sqlite:${path}`,
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
