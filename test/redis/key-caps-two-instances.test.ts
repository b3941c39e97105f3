import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';
import { deleteKeys, FRANCE_PATH, FRANCE_RECORD, ManualClock, rawRedis, REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();

/**
 * Issue 33: a key's cap is exact across instances as the credit pool is (its count moves in the
 * debit's transaction), and a key's own rate limit is shared through Redis as the account's is.
 * Two instances on one store (a SQLite file, or one PostgreSQL database) and one Redis prefix.
 */
describe.skipIf(!redisUp).each(await enginesToTest())('key caps and limits on two instances with Redis on %s', (engine) => {
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;
  let prefix: string;
  let dir: ReturnType<typeof tempDir>;
  const clock = new ManualClock(Date.parse('2026-11-28T10:00:00.250Z'));

  beforeEach(async () => {
    redis = rawRedis();
    prefix = uniquePrefix();
    dir = tempDir();
    const env = { REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: prefix };
    a = await createTestApp(engine === 'sqlite' ? { ...env, DATABASE_URL: join(dir.path, 'shared.sqlite') } : env, clock, engine);
    // The second instance opens the first one's store (its SQLite file or PostgreSQL database).
    b = await createTestApp({ ...env, DATABASE_URL: a.config.databaseUrl ?? join(dir.path, 'shared.sqlite') }, clock, 'sqlite');
    await a.importRecords([FRANCE_RECORD]);
    await a.account('acme', 1000);
    // Warm both instances (their first lookup starts workers) with a key without rules.
    const { apiKey } = await a.services.accounts.createKey('acme', 'warm-up');
    for (const app of [a, b]) expect((await app.app.inject({ url: FRANCE_PATH, headers: { authorization: app.basic('acme', apiKey) } })).statusCode).toBe(200);
  });
  afterEach(async () => {
    await b.close();
    await a.close();
    await deleteKeys(redis, prefix);
    redis.disconnect();
    dir.remove();
  });

  const hit = (app: TestApp, key: string) => app.app.inject({ url: FRANCE_PATH, headers: { authorization: app.basic('acme', key) } });

  it('answers and charges exactly 10 of 50 racing lookups of a key capped at 10, spread over both instances', async () => {
    const { apiKey } = await a.services.accounts.createKey('acme', 'staging', { cap: { credits: 10, period: 'month' } });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => hit(i % 2 === 0 ? a : b, apiKey)));
    const answered = results.filter((r) => r.statusCode === 200);
    expect(answered).toHaveLength(10);
    expect(results.filter((r) => r.statusCode === 429).every((r) => r.body.startsWith('API key staging has reached its cap of 10 credits per month'))).toBe(true);
    expect((await a.services.accounts.show('acme')).credits).toBe(1000 - 2 - 10);
    const debits = (await a.services.accounts.usage('acme', undefined, 'staging')).filter((r) => r.kind === 'debit');
    expect(debits).toHaveLength(10);
    expect(new Set(debits.map((d) => d.requestId))).toEqual(new Set(answered.map((r) => String(r.headers['x-request-id']))));
  });

  it("shares a key's own per-second limit between the instances through Redis", async () => {
    const { apiKey } = await a.services.accounts.createKey('acme', 'slow', { perSecond: 3 });
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await hit(i % 2 === 0 ? a : b, apiKey));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(3);
    expect(results.filter((r) => r.statusCode === 429).every((r) => r.body.includes('API key slow may make 3 requests per second'))).toBe(true);
  });
});
