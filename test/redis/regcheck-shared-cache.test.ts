import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { FakeRegcheck, UK_VEHICLE_JSON } from '../fakes/fake-regcheck.js';
import { REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();

/**
 * The original service behind two instances on two stores that share only Redis (issue 24): a
 * vehicle asked for by accounts on both is one call to the original, charged on each side.
 */
describe.skipIf(!redisUp)('answers of the original shared through Redis', () => {
  let fake: FakeRegcheck;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    fake = await FakeRegcheck.start({ username: 'gateway-op' });
    const env = { REGCHECK_USERNAME: 'gateway-op', REGCHECK_BASE_URL: fake.baseUrl, REGCHECK_TIMEOUT_MS: '2000', REGCHECK_BUDGET_MS: '2000', REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix() };
    a = await createTestApp(env);
    b = await createTestApp(env);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await fake.close();
  });

  it('asks the original once for accounts on two instances, and serves both the original bytes', async () => {
    const alice = a.basic('alice', await a.account('alice', 10));
    const bob = b.basic('bob', await b.account('bob', 10));
    const first = await a.app.inject({ url: '/api/json.aspx/Check/LV04XYZ', headers: { authorization: alice } });
    const second = await b.app.inject({ url: '/api/json.aspx/Check/LV04XYZ', headers: { authorization: bob } });
    expect(first.body).toBe(UK_VEHICLE_JSON);
    expect(second.body).toBe(UK_VEHICLE_JSON);
    expect(fake.calls('Check')).toBe(1);
    expect((await a.services.accounts.show('alice')).credits).toBe(9);
    expect((await b.services.accounts.show('bob')).credits).toBe(9);
  });
});
