import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { fakeEnv, startDvla } from '../upstream/harness.js';
import type { FakeDvla } from '../fakes/fake-dvla.js';
import { REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();

describe.skipIf(!redisUp)('upstream answers shared through Redis', () => {
  let dvla: FakeDvla;
  let a: TestApp;
  let b: TestApp;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    dvla = await startDvla();
    // Two instances on two different stores: only Redis connects them.
    const env = { ...fakeEnv({ dvla }), REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix() };
    a = await createTestApp(env);
    b = await createTestApp(env);
    keyA = await a.account('acme', 10);
    keyB = await b.account('acme', 10);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await dvla.close();
  });

  it('answers a second instance from the shared cache without asking the upstream again, and charges its price', async () => {
    const first = await a.app.inject({ url: '/api/json.aspx/Check/AA19AAA', headers: { authorization: a.basic('acme', keyA) } });
    expect(first.statusCode).toBe(200);
    expect(dvla.calls).toBe(1);
    const second = await b.app.inject({ url: '/api/json.aspx/Check/AA19AAA', headers: { authorization: b.basic('acme', keyB) } });
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(dvla.calls).toBe(1);
    expect((await b.services.accounts.show('acme')).credits).toBe(9);
  });
});
