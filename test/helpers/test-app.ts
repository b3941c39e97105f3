import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type BuildOptions, type BuiltApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import type { Clock } from '../../src/shared/clock.js';
import { freshPostgresDatabase, type TestEngine } from './engines.js';
import { ManualRepeat } from './manual-repeat.js';

export interface TestApp extends BuiltApp {
  readonly engine: TestEngine;
  readonly config: Config;
  readonly dataDir: string;
  /**
   * The timer of the lookup statistics' periodic writes: it fires only when the test calls
   * `fire()`, so counts reach the store exactly when a test flushes them.
   */
  readonly lookupStatsTimer: ManualRepeat;
  /** Creates an account and returns its API key. */
  account(username: string, credits: number): Promise<string>;
  /** Imports JSON Lines given as objects; throws if any line is invalid. */
  importRecords(records: readonly unknown[]): Promise<void>;
  /** `Authorization` header value for HTTP Basic. */
  basic(username: string, apiKey: string): string;
  close(): Promise<void>;
}

/**
 * The process environment as a test app sees it: provider settings a test stubs (vi.stubEnv) pass
 * through, while what would point the app at another store or address does not (Vitest sets
 * BASE_URL="/" for Vite; a DATABASE_URL or REDIS_URL of the machine must not leak into tests).
 */
function inheritedEnv(): NodeJS.ProcessEnv {
  const { BASE_URL: _vite, DATABASE_URL: _db, REDIS_URL: _redis, PORT: _port, HOST: _host, DATA_DIR: _dir, WORKERS: _workers, ...rest } = process.env;
  return rest;
}

/**
 * A real app on a fresh store, quiet logs: SQLite in a temporary directory, or (engine
 * 'postgres') a fresh database on the test server, dropped on close.
 */
export async function createTestApp(env: Record<string, string> = {}, clock?: Clock, engine: TestEngine = 'sqlite', build: Pick<BuildOptions, 'beforeRoutes'> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-test-'));
  const database = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
  const config = loadConfig({ ...inheritedEnv(), DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...(database ? { DATABASE_URL: database.url } : {}), ...env });
  const lookupStatsTimer = new ManualRepeat();
  const built = await buildApp(config, { ...build, ...(clock ? { clock } : {}), lookupStatsRepeat: lookupStatsTimer.repeat });
  let counter = 0;
  return {
    ...built,
    engine,
    config,
    dataDir,
    lookupStatsTimer,
    async account(username, credits) {
      const { apiKey } = await built.services.accounts.create(username, credits);
      return apiKey;
    },
    async importRecords(records) {
      counter += 1;
      const file = join(dataDir, `import-${counter}.jsonl`);
      writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const summary = await built.services.importer.importFile(file, { skipInvalid: false, source: 'test' });
      if (!summary.committed) throw new Error(`test import had ${summary.invalid} invalid lines`);
    },
    basic: (username, apiKey) => `Basic ${Buffer.from(`${username}:${apiKey}`).toString('base64')}`,
    async close() {
      await built.app.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A temporary directory removed by the returned function. */
export function tempDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'vehicle-lookup-test-'));
  return { path, remove: () => { rmSync(path, { recursive: true, force: true }); } };
}
