import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import type { Repeat } from '../../src/shared/repeat.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';
import { freshPostgresDatabase, type TestEngine } from '../helpers/engines.js';
import { tempDir } from '../helpers/test-app.js';
import { FakeRegcheck } from '../fakes/fake-regcheck.js';

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

/**
 * A record-and-replay test's world, made anew before each test and cleaned up after it: the fake
 * original, a temporary directory, and the stores and instances the test opens (closed and
 * dropped for it).
 */
export interface ReplayWorld {
  readonly fake: FakeRegcheck;
  readonly dir: string;
  /** A fresh store on the suite's engine. */
  store(): Promise<SharedStore>;
  /** An instance on `store`, its balance timer held. */
  app(store: SharedStore, env: Record<string, string>): Promise<BuiltApp & { config: Config }>;
}

export function replayWorld(engine: TestEngine): ReplayWorld {
  let fake: FakeRegcheck | undefined;
  let dir: { path: string; remove: () => void } | undefined;
  let stores: SharedStore[] = [];
  let apps: BuiltApp[] = [];
  beforeEach(async () => {
    dir = tempDir();
    fake = await FakeRegcheck.start({ username: 'op-user', credits: 1000 });
    stores = [];
    apps = [];
  });
  afterEach(async () => {
    for (const app of apps) await app.app.close();
    await fake?.close();
    for (const store of stores) await store.drop();
    dir?.remove();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the replay world is made before each test');
    return value;
  };
  return {
    get fake() {
      return started(fake);
    },
    get dir() {
      return started(dir).path;
    },
    async store() {
      const store = await sharedStore(engine);
      stores.push(store);
      return store;
    },
    async app(store, env) {
      const app = await gatewayApp(store, env, new ManualRepeat().repeat);
      apps.push(app);
      return app;
    },
  };
}
