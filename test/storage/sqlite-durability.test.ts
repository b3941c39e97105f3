import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/** SQLite's PRAGMA synchronous as the store's connection runs it: 1 = NORMAL, 2 = FULL. */
async function synchronousLevel(t: TestApp): Promise<number> {
  const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(t.services.storage.db);
  return rows[0]?.synchronous ?? -1;
}

describe('durability of SQLite commits (SQLITE_SYNCHRONOUS)', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('syncs every COMMIT to disk by default (FULL), so an answered debit survives power loss', async () => {
    t = await createTestApp();
    expect(await synchronousLevel(t)).toBe(2);
  });

  it('runs NORMAL when the operator chooses it', async () => {
    t = await createTestApp({ SQLITE_SYNCHRONOUS: 'Normal' });
    expect(await synchronousLevel(t)).toBe(1);
  });

  it('refuses any other value with a message naming the variable', () => {
    expect(() => loadConfig({ SQLITE_SYNCHRONOUS: 'off' })).toThrow(ConfigError);
    expect(() => loadConfig({ SQLITE_SYNCHRONOUS: 'off' })).toThrow('SQLITE_SYNCHRONOUS must be full or normal (got "off")');
  });
});
