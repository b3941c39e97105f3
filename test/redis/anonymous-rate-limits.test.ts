import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();
const TAXI = { operation: 'CheckIrishTaxi', key: { regNumber: '191-D-48213' }, irishTaxi: { LicenceNumber: 'SPSV-004821' } };

/**
 * Anonymous calls (ANONYMOUS_OPERATIONS) are counted per client address in the same counters as
 * the accounts' limits: with REDIS_URL, one count across every instance (README "Operations without
 * a username").
 */
describe.skipIf(!redisUp)('anonymous rate limits across two instances sharing Redis', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const env = {
      REDIS_URL: REDIS_TEST_URL,
      REDIS_KEY_PREFIX: uniquePrefix(),
      ANONYMOUS_OPERATIONS: 'CheckIrishTaxi',
      ANONYMOUS_RATE_PER_SECOND: '1000',
      ANONYMOUS_RATE_PER_DAY: '3',
    };
    a = await createTestApp(env);
    b = await createTestApp(env);
    for (const app of [a, b]) await app.importRecords([TAXI]);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('counts one client address once across both instances, and another address apart', async () => {
    const call = (app: TestApp, remoteAddress: string) => app.app.inject({ url: '/api/bespokeapi.asmx/CheckIrishTaxi?regNumber=191-D-48213', remoteAddress });
    expect((await call(a, '203.0.113.5')).statusCode).toBe(200);
    expect((await call(b, '203.0.113.5')).statusCode).toBe(200);
    expect((await call(a, '203.0.113.5')).statusCode).toBe(200);
    const fourth = await call(b, '203.0.113.5');
    expect(fourth.statusCode).toBe(500);
    expect(fourth.body).toContain('anonymous callers may make 3 requests per day (UTC) from one address');
    expect((await call(b, '203.0.113.6')).statusCode).toBe(200);
  });
});
