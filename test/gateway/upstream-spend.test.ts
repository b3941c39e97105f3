import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltApp } from '../../src/app.js';
import type { ProviderView } from '../../src/providers/upstream/providers-view.js';
import { enginesToTest } from '../helpers/engines.js';
import { FakeRegcheck } from '../fakes/fake-regcheck.js';
import { as, operator } from '../admin/admin-harness.js';
import { redisAvailable, REDIS_TEST_URL, uniquePrefix } from '../redis/redis-harness.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';
import { checkUrl, gatewayApp, sharedStore, type SharedStore } from './gateway-harness.js';

const caches = (await redisAvailable()) ? (['without Redis', 'with Redis'] as const) : (['without Redis'] as const);
const cases = (await enginesToTest()).flatMap((engine) => caches.map((cache) => [engine, cache] as const));

/**
 * Upstream spend (issue 24): every call to the original counted by operation and outcome, in the
 * metrics and per UTC day in the store (every instance's calls added up), and the answers the
 * shared cache gave instead (credits saved); shown by GET /admin/api/providers and the console.
 */
describe.each(cases)('upstream spend on %s, %s', (engine, cache) => {
  let fake: FakeRegcheck;
  let store: SharedStore;
  const apps: BuiltApp[] = [];
  // A prefix per test: the shared cache in Redis outlives each test's store.
  let redis: Record<string, string> = {};
  const env = (): Record<string, string> => ({ REGCHECK_USERNAME: 'op-user', REGCHECK_BASE_URL: fake.baseUrl, REGCHECK_TIMEOUT_MS: '2000', REGCHECK_BUDGET_MS: '2000', ...redis });

  beforeEach(async () => {
    fake = await FakeRegcheck.start({ username: 'op-user', credits: 500 });
    store = await sharedStore(engine);
    redis = cache === 'with Redis' ? { REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix() } : {};
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.app.close();
    await fake.close();
    await store.drop();
  });

  async function instance(): Promise<BuiltApp> {
    const app = await gatewayApp(store, env(), new ManualRepeat().repeat);
    apps.push(app);
    await app.regcheck?.balance.check();
    return app;
  }

  let viewers = 0;
  const spendOf = async (app: BuiltApp): Promise<ProviderView> => {
    viewers += 1;
    const viewer = as(app, await operator(app, `watcher${viewers}`, 'viewer'));
    const res = await viewer('GET', '/admin/api/providers');
    expect(res.statusCode).toBe(200);
    const regcheck = res.json<{ providers: Record<string, ProviderView> }>().providers.regcheck;
    if (!regcheck) throw new Error('no regcheck in /admin/api/providers');
    return regcheck;
  };

  it('counts calls by outcome and the answers the cache gave instead, per day over every instance, in the store', async () => {
    const one = await instance();
    const two = await instance();
    await one.services.accounts.create('alice', 10);
    await one.services.accounts.create('bob', 10);
    expect((await one.app.inject({ url: checkUrl('alice') })).statusCode).toBe(200);
    // Another account on another instance: the shared cache (the store's table, and Redis when set) answers.
    expect((await two.app.inject({ url: checkUrl('bob') })).statusCode).toBe(200);
    expect(fake.calls('Check')).toBe(1);
    expect((await one.app.inject({ url: checkUrl('alice', 'NOPE1') })).statusCode).toBe(500);
    expect((await two.app.inject({ url: '/api/reg.asmx/CheckAustralia?RegistrationNumber=ZZT481&State=NSW&username=bob' })).statusCode).toBe(200);

    // Nothing is written on the request path: the rollup adds each instance's counts.
    expect((await spendOf(one)).spend).toBeUndefined();
    await one.upstreamSpend.flush();
    await two.upstreamSpend.flush();
    const view = await spendOf(two);
    const expected = { calls: 3, found: 2, notFound: 1, failed: 0, servedFromCache: 1, creditsSaved: 1 };
    expect(view.spend?.today).toEqual(expected);
    expect(view.spend?.last30Days).toEqual(expected);
    expect(view.spend?.byOperation).toEqual([
      { operation: 'Check', calls: 2, found: 1, notFound: 1, failed: 0, servedFromCache: 1, creditsSaved: 1 },
      { operation: 'CheckAustralia', calls: 1, found: 1, notFound: 0, failed: 0, servedFromCache: 0, creditsSaved: 0 },
    ]);
    expect(view.balance?.credits).toBeTypeOf('number');

    // Later flushes add; nothing is counted twice.
    expect((await one.app.inject({ url: checkUrl('bob') })).statusCode).toBe(200);
    await one.upstreamSpend.flush();
    await two.upstreamSpend.flush();
    expect((await spendOf(one)).spend?.today).toMatchObject({ calls: 3, servedFromCache: 2, creditsSaved: 2 });
  });

  it('keeps days apart: yesterday is in the 30 days, not today', async () => {
    const app = await instance();
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString().slice(0, 10);
    await app.services.storage.transaction(async (tx) => {
      await tx.db
        .insertInto('upstream_stats')
        .values([
          { day: yesterday, provider: 'regcheck', operation: 'Check', outcome: 'found', count: 4 },
          { day: old, provider: 'regcheck', operation: 'Check', outcome: 'found', count: 50 },
        ])
        .execute();
    });
    await app.services.accounts.create('alice', 10);
    expect((await app.app.inject({ url: checkUrl('alice') })).statusCode).toBe(200);
    await app.upstreamSpend.flush();
    const view = await spendOf(app);
    expect(view.spend?.today.calls).toBe(1);
    expect(view.spend?.last30Days.calls).toBe(5);
  });

  it('labels the metrics by operation and outcome, and shows the spend and balance on the console', async () => {
    const app = await instance();
    await app.services.accounts.create('alice', 10);
    await app.services.accounts.create('bob', 10);
    expect((await app.app.inject({ url: checkUrl('alice') })).statusCode).toBe(200);
    expect((await app.app.inject({ url: checkUrl('bob') })).statusCode).toBe(200);
    expect((await app.app.inject({ url: checkUrl('bob', 'NOPE2') })).statusCode).toBe(500);
    const metrics = (await app.app.inject({ url: '/metrics' })).body;
    expect(metrics).toContain('vehicle_lookup_upstream_calls_total{provider="regcheck",operation="Check",outcome="found"} 1');
    expect(metrics).toContain('vehicle_lookup_upstream_calls_total{provider="regcheck",operation="Check",outcome="not_found"} 1');
    expect(metrics).toContain('vehicle_lookup_upstream_cache_answers_total{provider="regcheck",operation="Check",answer="found"} 1');
    expect(metrics).toMatch(/vehicle_lookup_upstream_balance\{provider="regcheck"\} 499\b/);

    await app.upstreamSpend.flush();
    const login = await operator(app, 'console-viewer', 'viewer');
    const page = await app.app.inject({ url: '/console/admin/providers', headers: { cookie: login.cookie } });
    expect(page.statusCode).toBe(200);
    const section = page.body.slice(page.body.indexOf('data-testid="provider-regcheck"'));
    expect(section).toContain('data-testid="balance">499<');
    expect(section).toMatch(/Today \(UTC\)<\/th><td class="num">2<\/td><td class="num">1 \/ 1 \/ 0<\/td><td class="num">1<\/td><td class="num">1<\/td>/);
  });
});
