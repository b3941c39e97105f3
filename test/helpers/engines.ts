import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, type Storage } from '../../src/storage/create-database.js';

/** The storage engines every storage test runs on (STYLE.md 10). */
export const ENGINES = ['sqlite', 'postgres'] as const;
export type TestEngine = (typeof ENGINES)[number];

/** PostgreSQL for tests: the machine's server, overridable with PG_TEST_URL. */
export const PG_TEST_URL = process.env.PG_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<boolean> | undefined;

/** Whether PostgreSQL answers; with CI=true an unreachable server fails the run instead. */
export function postgresAvailable(): Promise<boolean> {
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
