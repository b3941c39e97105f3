import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { engineSwitchOf } from './engine-switch.js';

/** The storage engines the service supports, each a test engine (STYLE.md 10). */
export const ALL_ENGINES = ['sqlite', 'postgres'] as const;
export type TestEngine = (typeof ALL_ENGINES)[number];

/**
 * Whether this run is SQLite only: `TEST_ENGINES=sqlite` (npm run test:fast; engine-switch.ts).
 * Then PostgreSQL counts as unavailable without a warning, and so does Redis (redis-harness.ts).
 */
export const SQLITE_ONLY = engineSwitchOf(process.env) === 'sqlite';

/**
 * The storage engines every storage test runs on: both, or SQLite alone when the run is
 * SQLite only. A suite loops over these (`describe.each(ENGINES)`) or awaits enginesToTest().
 */
export const ENGINES: readonly TestEngine[] = SQLITE_ONLY ? ['sqlite'] : ALL_ENGINES;

/** PostgreSQL for tests: the machine's server, overridable with PG_TEST_URL. */
export const PG_TEST_URL = process.env.PG_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<boolean> | undefined;

/**
 * Whether PostgreSQL answers; with CI=true an unreachable server fails the run instead. A SQLite-only
 * run (SQLITE_ONLY) never asks: PostgreSQL is off for it.
 */
export function postgresAvailable(): Promise<boolean> {
  if (SQLITE_ONLY) return Promise.resolve(false);
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (error) {
      if (process.env.CI === 'true') throw new Error(`PostgreSQL is required in CI but ${PG_TEST_URL} is unreachable: ${String(error)}`);
      console.warn(`\n*** SKIPPED: PostgreSQL storage tests, ${PG_TEST_URL} is unreachable (${String(error)}) ***\n`);
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/**
 * The engines a suite runs on: both, PostgreSQL only when reachable (postgresAvailable: skipped with
 * a warning outside CI, a failure in CI). Collection is synchronous, so a suite file awaits this at
 * its top level: `describe.each(await enginesToTest())(...)`.
 */
export async function enginesToTest(): Promise<TestEngine[]> {
  return (await postgresAvailable()) ? [...ENGINES] : ENGINES.filter((engine) => engine !== 'postgres');
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A fresh, empty PostgreSQL database for one test app; `drop` removes it. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `vl_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_TEST_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(PG_TEST_URL, name),
    drop: async () => {
      const client = new pg.Client({ connectionString: PG_TEST_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A store of its own on `engine` (a temporary folder; on PostgreSQL a fresh database), migrated as
 * the service opens one; `cleanUp` closes it and removes both.
 */
export async function freshStorage(engine: TestEngine, prefix: string): Promise<{ storage: Storage; cleanUp: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const database = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
  const storage = await openStorage({ dataDir: dir, ...(database ? { databaseUrl: database.url } : {}) });
  return {
    storage,
    cleanUp: async () => {
      await storage.close();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
