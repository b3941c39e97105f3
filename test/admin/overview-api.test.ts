import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { enginesToTest } from '../helpers/engines.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, customer, FRANCE, operator } from './admin-harness.js';

/**
 * The operator overview's API (issues 16 and 18): usage over every account, and the lookups'
 * success and error rates per interface summed over every instance that shares the store (each
 * counts in memory and adds its counts to the store's hourly rollup).
 */
describe.each(await enginesToTest())('operator overview API on %s', (engine) => {
  let t: TestApp;
  const others: BuiltApp[] = [];

  beforeEach(async () => {
    t = await createTestApp({}, undefined, engine);
    await t.importRecords([FRANCE]);
  });
  afterEach(async () => {
    for (const other of others.splice(0)) await other.app.close();
    await t.close();
  });

  /**
   * Another instance on the same store (the same SQLite file, or the same PostgreSQL database).
   * Its periodic writes, like the first instance's, wait for the test: counts reach the store only
   * when the test flushes them, however slow the machine.
   */
  async function secondInstance(): Promise<BuiltApp> {
    const config = loadConfig({ DATA_DIR: t.dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', VIN_DECODER: 'off', ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}) });
    const other = await buildApp(config, { lookupStatsRepeat: new ManualRepeat().repeat });
    others.push(other);
    return other;
  }

  const json = (app: BuiltApp, username: string, key: string, plate = 'EG258MA') =>
    app.app.inject({ url: `/api/json.aspx/CheckFrance/${plate}`, headers: { authorization: t.basic(username, key) } });
  const httpGet = (app: BuiltApp, username: string) => app.app.inject({ url: `/api/reg.asmx/CheckFrance?RegistrationNumber=EG258MA&username=${username}` });

  /** A range of hours around now, so a test that runs across an hour's end still sees every count. */
  const around = () => {
    const now = Date.now();
    return `from=${new Date(now - 2 * 3_600_000).toISOString()}&to=${new Date(now + 2 * 3_600_000).toISOString()}`;
  };

  it('sums the success and error counts of two instances sharing the store, per interface, once both have flushed', async () => {
    const key = await t.account('alice', 10);
    const other = await secondInstance();
    expect((await json(t, 'alice', key)).statusCode).toBe(200);
    expect((await json(t, 'alice', key)).statusCode).toBe(200);
    expect((await json(t, 'alice', key, 'ZZ999ZZ')).statusCode).toBe(500);
    expect((await json(t, 'alice', 'wrong-key')).statusCode).toBe(401);
    expect((await json(other, 'alice', key)).statusCode).toBe(200);
    expect((await httpGet(other, 'alice')).statusCode).toBe(200);

    const viewer = as(t, await operator(t, 'watcher', 'viewer'));
    const stats = async () => (await viewer('GET', `/admin/api/lookup-stats?${around()}`)).json<{ interfaces: unknown[] }>().interfaces;
    expect(await stats()).toEqual([]);
    // Nothing reached the store: the periodic write (every LOOKUP_STATS_FLUSH_SECONDS, 10 s by
    // default) waits for the test, whatever the time the lookups above took.
    expect(t.lookupStatsTimer.intervals).toEqual([10_000]);
    await t.lookupRollup.flush();
    await other.lookupRollup.flush();
    expect(await stats()).toEqual([
      { interface: 'http-get', total: 1, successes: 1, errors: {}, successRate: 1 },
      { interface: 'json', total: 5, successes: 3, errors: { not_found: 1, unauthorized: 1 }, successRate: 3 / 5 },
    ]);

    // Later flushes add to the same hour's rows; nothing is counted twice.
    expect((await json(other, 'alice', key)).statusCode).toBe(200);
    await other.lookupRollup.flush();
    await t.lookupRollup.flush();
    expect(await stats()).toMatchObject([{ interface: 'http-get', total: 1 }, { interface: 'json', total: 6, successes: 4 }]);
  });

  it('keeps the counts of a failed write and writes them with the next flush', async () => {
    const key = await t.account('alice', 10);
    expect((await json(t, 'alice', key)).statusCode).toBe(200);
    // The store refuses the write for real: its table is not there.
    await sql`alter table lookup_stats rename to lookup_stats_away`.execute(t.services.storage.db);
    await t.lookupRollup.flush();
    await sql`alter table lookup_stats_away rename to lookup_stats`.execute(t.services.storage.db);
    expect(await t.services.storage.db.selectFrom('lookup_stats').selectAll().execute()).toEqual([]);
    expect((await json(t, 'alice', key, 'ZZ999ZZ')).statusCode).toBe(500);
    await t.lookupRollup.flush();
    const rows = await t.services.storage.db.selectFrom('lookup_stats').select(['interface', 'operation', 'outcome', 'count']).orderBy('outcome').execute();
    expect(rows).toEqual([
      { interface: 'json', operation: 'CheckFrance', outcome: 'not_found', count: 1 },
      { interface: 'json', operation: 'CheckFrance', outcome: 'success', count: 1 },
    ]);
  });

  it('writes an instance\'s last counts when it shuts down', async () => {
    const key = await t.account('alice', 10);
    const other = await secondInstance();
    expect((await json(other, 'alice', key)).statusCode).toBe(200);
    await other.app.close();
    others.splice(0);
    const viewer = as(t, await operator(t, 'watcher', 'viewer'));
    expect((await viewer('GET', `/admin/api/lookup-stats?${around()}`)).json()).toMatchObject({ interfaces: [{ interface: 'json', total: 1, successes: 1 }] });
  });

  it('answers usage over every account by UTC day and operation, to viewers, and to no customer', async () => {
    const alice = await t.account('alice', 10);
    const bob = await t.account('bob', 10);
    expect((await json(t, 'alice', alice)).statusCode).toBe(200);
    expect((await json(t, 'bob', bob)).statusCode).toBe(200);
    expect((await json(t, 'bob', bob)).statusCode).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const range = `from=${today}T00:00:00Z&to=${tomorrow}T00:00:00Z`;

    const viewer = as(t, await operator(t, 'watcher', 'viewer'));
    const usage = await viewer('GET', `/admin/api/usage?${range}`);
    expect(usage.statusCode).toBe(200);
    expect(usage.json()).toEqual({ from: `${today}T00:00:00.000Z`, to: `${tomorrow}T00:00:00.000Z`, days: [{ day: today, operation: 'CheckFrance', lookups: 3, freeLookups: 0, credits: 3 }] });

    // Not for customers, whatever account they belong to, nor for anyone not logged in.
    const owner = as(t, await customer(t, 'alice', 'alice-owner'));
    for (const url of [`/admin/api/usage?${range}`, `/admin/api/lookup-stats?${range}`]) {
      expect((await owner('GET', url)).statusCode, url).toBe(403);
      expect((await t.app.inject({ url })).statusCode, url).toBe(401);
    }
  });

  it('refuses a missing, reversed, too long or malformed range and unknown fields, naming the field', async () => {
    const call = as(t, await operator(t, 'root'));
    for (const path of ['/admin/api/usage', '/admin/api/lookup-stats']) {
      const cases: Array<[string, string]> = [
        ['from=2026-11-01T00:00:00Z', 'to'],
        ['from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'to'],
        ['from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
        ['from=yesterday&to=2026-11-01T00:00:00Z', 'from'],
        ['from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&account=alice', 'account'],
      ];
      for (const [query, field] of cases) {
        const res = await call('GET', `${path}?${query}`);
        expect(res.statusCode, `${path}?${query}`).toBe(400);
        expect(res.json(), `${path}?${query}`).toMatchObject({ error: 'invalid-request', field });
      }
    }
  });
});
