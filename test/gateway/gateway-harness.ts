import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import type { Repeat } from '../../src/shared/repeat.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';
import { freshPostgresDatabase, type TestEngine } from '../helpers/engines.js';

/** One store (a temporary SQLite directory or a fresh PostgreSQL database) that several app instances can open. */
export interface SharedStore {
  readonly dataDir: string;
  readonly env: Record<string, string>;
  drop(): Promise<void>;
}

export async function sharedStore(engine: TestEngine): Promise<SharedStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-gateway-'));
  const database = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
  return {
    dataDir,
    env: { DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) },
    drop: async () => {
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An instance on `store` with the original service (the fake) as its upstream. */
export async function gatewayApp(store: SharedStore, env: Record<string, string>, balanceRepeat: Repeat): Promise<BuiltApp & { config: Config }> {
  const config = loadConfig({ LOG_LEVEL: 'silent', SEED_DEMO: 'false', VIN_DECODER: 'off', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...store.env, ...env });
  // Both timers held: the rollups write when a test flushes them, never on the machine's time.
  const built = await buildApp(config, { balanceRepeat, lookupStatsRepeat: new ManualRepeat().repeat, upstreamSpendRepeat: new ManualRepeat().repeat });
  return { ...built, config };
}

/** The GET binding's request of the fake's `Check` vehicle (or another plate) for `username`. */
export const checkUrl = (username: string, plate = 'LV04XYZ'): string => `/api/reg.asmx/Check?RegistrationNumber=${plate}&username=${username}`;
