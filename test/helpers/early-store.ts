import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import { join } from 'node:path';
import pg from 'pg';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import { freshPostgresDatabase, type TestEngine } from './engines.js';
import { tempDir } from './test-app.js';

/** A store left at an earlier migration, for a test of a later migration's move of its rows. */
export interface EarlyStore {
  /** The store at `migration`, to fill with rows as they were kept then; destroyed by `opened`. */
  readonly db: Kysely<unknown>;
  /** DATA_DIR and, on PostgreSQL, DATABASE_URL: createTestApp on them migrates the store to the latest. */
  readonly env: Record<string, string>;
  /** Closes `db`: call it before opening the store at the latest migration. */
  readonly opened: () => Promise<void>;
  /** Removes the directory and drops the PostgreSQL database. */
  readonly remove: () => Promise<void>;
}

/** A new store on `engine` migrated up to `migration` (a name of migrations/index.ts) and no further. */
export async function storeAtMigration(engine: TestEngine, migration: string): Promise<EarlyStore> {
  const dir = tempDir();
  const pgDb = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
  const url = pgDb?.url;
  const remove = async (): Promise<void> => {
    await pgDb?.drop();
    dir.remove();
  };
  const db = new Kysely<unknown>({
    dialect: url ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) : new SqliteDialect({ database: new Database(join(dir.path, 'vehicle-lookup.sqlite')) }),
  });
  const migrated = await new Migrator({ db, provider: migrationProvider(engine) }).migrateTo(migration);
  if (migrated.error !== undefined) {
    await db.destroy();
    await remove();
    throw migrated.error instanceof Error ? migrated.error : new Error(`migrating to ${migration} failed`);
  }
  return { db, env: { DATA_DIR: dir.path, ...(url ? { DATABASE_URL: url } : {}) }, opened: () => db.destroy(), remove };
}
