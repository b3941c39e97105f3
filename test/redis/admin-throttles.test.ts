import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, operator, PASSWORD } from '../admin/admin-harness.js';
import { closedPort, deleteKeys, rawRedis, REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();

const attempt = (app: TestApp, password: string) => app.app.inject({ method: 'POST', url: '/admin/api/login', payload: { username: 'root', password } });

/**
 * The login throttle and the admin request limit across instances (issue 16). The two instances
 * here have stores of their own (an operator `root` with the same password in each), so whatever
 * they share, they share through Redis.
 */
describe.skipIf(!redisUp)('admin throttles shared through Redis by two instances', () => {
  let a: TestApp;
  let b: TestApp;
  let prefix: string;
  let redis: Redis;

  beforeEach(async () => {
    prefix = uniquePrefix();
    redis = rawRedis();
    const env = { SEED_DEMO: 'false', REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: prefix };
    a = await createTestApp(env);
    b = await createTestApp(env);
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  it('refuses the 6th failed login across both instances, and a success on one gives back the address’s attempt', async () => {
    await operator(a, 'root');
    await operator(b, 'root');
    // The logins of operator() succeeded: they left no count of the user behind.
    expect(await redis.exists(`${prefix}th:login:u:root`)).toBe(0);
    expect(Number(await redis.get(`${prefix}th:login:a:127.0.0.1`))).toBe(0);
    for (const app of [a, b, a, b, a]) expect((await attempt(app, 'wrong password!')).statusCode).toBe(401);
    expect(Number(await redis.get(`${prefix}th:login:u:root`))).toBe(5);
    expect(Number(await redis.get(`${prefix}th:login:a:127.0.0.1`))).toBe(5);
    expect(await redis.pttl(`${prefix}th:login:u:root`)).toBeGreaterThan(14 * 60_000);
    for (const app of [b, a]) {
      const refused = await attempt(app, PASSWORD);
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(14 * 60);
    }
    // Nothing was counted in the stores: Redis held every count.
    for (const app of [a, b]) expect(await app.services.storage.db.selectFrom('login_throttle').selectAll().execute()).toEqual([]);
  });

  it('allows a caller 600 admin API requests a minute across both instances, not 600 on each', async () => {
    const root = await operator(a, 'root');
    // The same session cookie sent to both: b does not know the session, but the budget counts
    // the caller before anything else.
    const call = (app: TestApp) => as(app, root)('GET', '/admin/api/openapi.json');
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) for (const app of [a, b]) statuses.push((await call(app)).statusCode);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const refused = await call(b);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'rate-limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('admin throttles while Redis is unreachable', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('count in the instance (fail open), still refuse the 6th failed login, and say so in a metric', async () => {
    t = await createTestApp({ SEED_DEMO: 'false', REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    await operator(t, 'root');
    for (let i = 0; i < 5; i++) expect((await attempt(t, 'wrong password!')).statusCode).toBe(401);
    expect((await attempt(t, PASSWORD)).statusCode).toBe(429);
    const metrics = (await t.app.inject({ url: '/metrics' })).body;
    const fallbacks = Number(/^vehicle_lookup_throttle_fallbacks_total (\d+)$/m.exec(metrics)?.[1]);
    // Every login attempt and API request above was counted in-process (two counts per login).
    expect(fallbacks).toBeGreaterThanOrEqual(12);
    expect(await t.services.storage.db.selectFrom('login_throttle').selectAll().execute()).toEqual([]);
  });
});
