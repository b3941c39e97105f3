import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { enginesToTest } from '../helpers/engines.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';
import { ManualClock, redisAvailable, REDIS_TEST_URL, uniquePrefix } from '../redis/redis-harness.js';
import { FakePaidApi } from '../fakes/fake-paid-api.js';
import { sharedStore, type SharedStore } from '../gateway/gateway-harness.js';
import { fakePaidRegistrations } from './fake-paid-adapter.js';
import { as, operator } from '../admin/admin-harness.js';

const redisUp = await redisAvailable();

/**
 * The router (issue 32) over three fake paid APIs at different prices, on one store shared by two
 * instances (PostgreSQL, and Redis when it runs): order, fallback, the not-found policy, the
 * policies that take a source out for every instance and bring it back, spend and provenance.
 */
describe.each(await enginesToTest())('the router over three paid upstreams on %s', (engine) => {
  let store: SharedStore;
  let cheap: FakePaidApi;
  let middle: FakePaidApi;
  let dear: FakePaidApi;
  let clock: ManualClock;
  const apps: BuiltApp[] = [];
  let redis: Record<string, string> = {};

  beforeEach(async () => {
    store = await sharedStore(engine);
    cheap = await FakePaidApi.start({ key: 'k-cheap', price: 0.05, make: 'CHEAP' });
    middle = await FakePaidApi.start({ key: 'k-middle', price: 0.1, make: 'MIDDLE', sendsPrice: true, balance: 10 });
    dear = await FakePaidApi.start({ key: 'k-dear', price: 0.4, make: 'DEAR' });
    clock = new ManualClock(Date.parse('2026-11-28T10:00:00Z'));
    redis = engine === 'postgres' && redisUp ? { REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix() } : {};
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.app.close();
    await Promise.all([cheap.close(), middle.close(), dear.close()]);
    await store.drop();
  });

  async function instance(env: Record<string, string> = {}, paid: Record<string, Record<string, string>> = {}): Promise<BuiltApp> {
    const config = loadConfig({ LOG_LEVEL: 'silent', SEED_DEMO: 'false', VIN_DECODER: 'off', ...store.env, ...redis, ...env });
    const fake = (name: string, api: FakePaidApi, key: string, price: string) => ({
      name,
      key,
      env: { [`${name.toUpperCase()}_BASE_URL`]: api.baseUrl, [`${name.toUpperCase()}_PRICE`]: price, [`${name.toUpperCase()}_BREAKER_FAILURES`]: '2', ...(paid[name] ?? {}) },
    });
    const built = await buildApp(config, {
      clock,
      lookupStatsRepeat: new ManualRepeat().repeat,
      upstreamSpendRepeat: new ManualRepeat().repeat,
      balanceRepeat: new ManualRepeat().repeat,
      extraRegistrations: fakePaidRegistrations([fake('dear', dear, 'k-dear', '0.40'), fake('cheap', cheap, 'k-cheap', '0.05'), fake('middle', middle, 'k-middle', '0.10')]),
    });
    apps.push(built);
    return built;
  }

  const auth = (user: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${user}:${keys.get(user) ?? ''}`).toString('base64')}` });
  const keys = new Map<string, string>();
  async function account(app: BuiltApp, user: string, credits = 100): Promise<void> {
    const created = await app.services.accounts.create(user, credits);
    keys.set(user, created.apiKey);
  }
  const lookup = (app: BuiltApp, user: string, plate: string) => app.app.inject({ url: `/api/json.aspx/CheckFrance/${plate}`, headers: auth(user) });
  const ledger = async (app: BuiltApp, user: string) => (await app.services.accounts.usage(user)).filter((r) => r.kind !== 'topup');

  it('asks the cheapest first, names it in the ledger and X-Lookup-Source, charges the caller once, and counts its spend exactly', async () => {
    const app = await instance();
    await account(app, 'alice');
    const res = await lookup(app, 'alice', 'AB123CD');
    expect(res.statusCode).toBe(200);
    expect(res.json<{ CarMake: { CurrentTextValue: string } }>().CarMake.CurrentTextValue).toBe('CHEAP');
    expect(res.headers['x-lookup-source']).toBe('cheap');
    expect(res.headers['x-credits-charged']).toBe('1');
    expect(res.json<Record<string, unknown>>()).not.toHaveProperty('source');
    expect([cheap.calls, middle.calls, dear.calls]).toEqual([1, 0, 0]);
    expect((await ledger(app, 'alice')).map((r) => [r.kind, r.delta, r.source])).toEqual([['debit', -1, 'cheap']]);
    // Again: the shared cache answers, the ledger says so, and nothing is spent.
    const again = await lookup(app, 'alice', 'AB123CD');
    expect(again.headers['x-lookup-source']).toBe('cache');
    expect(cheap.calls).toBe(1);
    const status = await app.services.router.status();
    expect(status.cheap?.spendToday).toEqual({ spent: 0.05, calls: 1 });
    expect(status.cheap?.state).toBe('ready');
  });

  it('falls back to the next paid source at once on a 5xx or an HTML page, and charges nothing when every source failed', async () => {
    const app = await instance();
    await account(app, 'alice');
    cheap.answer('AB123CD', 'server-error');
    cheap.answer('BC234DE', 'html');
    let res = await lookup(app, 'alice', 'AB123CD');
    expect([res.statusCode, res.headers['x-lookup-source']]).toEqual([200, 'middle']);
    res = await lookup(app, 'alice', 'BC234DE');
    expect([res.statusCode, res.headers['x-lookup-source']]).toEqual([200, 'middle']);
    for (const api of [cheap, middle, dear]) api.answer('CD345EF', 'server-error');
    res = await lookup(app, 'alice', 'CD345EF');
    expect(res.statusCode).toBe(500);
    expect(res.body).toMatch(/temporarily unavailable/);
    const rows = await ledger(app, 'alice');
    expect(rows.map((r) => [r.delta, r.source])).toEqual([
      [-1, 'middle'],
      [-1, 'middle'],
    ]);
    // Two failures in a row open cheap's breaker: it cools down and is not asked.
    const before = cheap.calls;
    res = await lookup(app, 'alice', 'DE456FG');
    expect(res.headers['x-lookup-source']).toBe('middle');
    expect(cheap.calls).toBe(before);
  });

  it('falls back to the next paid source when the cheapest answers later than its timeout, charges the caller once, and spends nothing on the late answer', async () => {
    // The fake holds cheap's answer until the test releases it, after the lookup is over: the 50 ms
    // timeout is sure to pass first, whatever the machine's speed.
    const app = await instance({}, { cheap: { CHEAP_TIMEOUT_MS: '50', CHEAP_BUDGET_MS: '50' } });
    await account(app, 'alice');
    cheap.answer('SL111AA', 'slow');
    const res = await lookup(app, 'alice', 'SL111AA');
    expect([res.statusCode, res.headers['x-lookup-source'], res.headers['x-credits-charged']]).toEqual([200, 'middle', '1']);
    expect(res.json<{ CarMake: { CurrentTextValue: string } }>().CarMake.CurrentTextValue).toBe('MIDDLE');
    expect([cheap.calls, middle.calls, dear.calls]).toEqual([1, 1, 0]);
    cheap.releaseSlow();
    await app.services.router.settled();
    expect((await ledger(app, 'alice')).map((r) => [r.kind, r.delta, r.source])).toEqual([['debit', -1, 'middle']]);
    const status = await app.services.router.status();
    expect(status.cheap).toMatchObject({ state: 'ready', spendToday: { spent: 0, calls: 0 }, lastError: { kind: 'timeout' } });
    expect(status.middle?.spendToday).toEqual({ spent: 0.1, calls: 1 });
    // The late answer was not kept in cheap's cache: asked again, cheap is asked (and answers in time now).
    cheap.answer('SL111AA', 'found');
    expect((await lookup(app, 'alice', 'SL111AA')).headers['x-lookup-source']).toBe('cheap');
    expect(cheap.calls).toBe(2);
  });

  it('answers not found from the cheapest for free unless UPSTREAM_FALLBACK_ON_NOT_FOUND asks the next', async () => {
    const strict = await instance();
    await account(strict, 'alice');
    cheap.answer('ZZ999ZZ', 'not-found');
    const res = await lookup(strict, 'alice', 'ZZ999ZZ');
    expect(res.statusCode).toBe(500);
    expect(res.body).toMatch(/Lookup failed/);
    expect([cheap.calls, middle.calls]).toEqual([1, 0]);
    expect(await ledger(strict, 'alice')).toEqual([]);

    cheap.answer('YY888YY', 'not-found');
    const lenient = await instance({ UPSTREAM_FALLBACK_ON_NOT_FOUND: 'true' });
    const found = await lookup(lenient, 'alice', 'YY888YY');
    expect([found.statusCode, found.headers['x-lookup-source']]).toEqual([200, 'middle']);
    expect((await ledger(lenient, 'alice')).map((r) => r.delta)).toEqual([-1]);
  });

  it('takes a source out of funds, out of quota or with a refused key out for every instance, alerts once, and brings it back', async () => {
    const one = await instance();
    const two = await instance();
    await account(one, 'alice');
    cheap.answerAll('out-of-funds');
    expect((await lookup(one, 'alice', 'AA111AA')).headers['x-lookup-source']).toBe('middle');
    expect(cheap.calls).toBe(1);
    // The other instance does not ask it.
    expect((await lookup(two, 'alice', 'AA222AA')).headers['x-lookup-source']).toBe('middle');
    expect(cheap.calls).toBe(1);
    expect((await two.services.router.status()).cheap?.state).toBe('out-of-funds');
    // Topped up: after the retry time one call asks again, and its answer brings it back.
    cheap.answerAll(undefined);
    clock.advance(11 * 60_000);
    expect((await lookup(two, 'alice', 'AA333AA')).headers['x-lookup-source']).toBe('cheap');
    expect((await one.services.router.status()).cheap?.state).toBe('ready');

    cheap.answerAll('quota');
    expect((await lookup(one, 'alice', 'AA444AA')).headers['x-lookup-source']).toBe('middle');
    expect((await two.services.router.status()).cheap?.state).toBe('quota');
    cheap.answerAll(undefined);
    clock.set('2026-11-29T00:00:01Z');
    expect((await lookup(two, 'alice', 'AA555AA')).headers['x-lookup-source']).toBe('cheap');

    cheap.answerAll('bad-key');
    expect((await lookup(one, 'alice', 'AA666AA')).headers['x-lookup-source']).toBe('middle');
    clock.advance(86_400_000);
    const calls = cheap.calls;
    expect((await lookup(two, 'alice', 'AA777AA')).headers['x-lookup-source']).toBe('middle');
    expect(cheap.calls).toBe(calls);
    expect((await one.services.router.status()).cheap?.state).toBe('disabled');
    // A restart with a fixed key asks it again.
    cheap.answerAll(undefined);
    const three = await instance();
    expect((await lookup(three, 'alice', 'AA888AA')).headers['x-lookup-source']).toBe('cheap');
  });

  it('takes a source over its monthly budget out until the month turns, for every instance', async () => {
    const one = await instance({}, { cheap: { CHEAP_MONTHLY_BUDGET: '0.10' } });
    const two = await instance({}, { cheap: { CHEAP_MONTHLY_BUDGET: '0.10' } });
    await account(one, 'alice');
    expect((await lookup(one, 'alice', 'BA111AA')).headers['x-lookup-source']).toBe('cheap');
    expect((await lookup(two, 'alice', 'BA222AA')).headers['x-lookup-source']).toBe('cheap');
    expect((await lookup(one, 'alice', 'BA333AA')).headers['x-lookup-source']).toBe('middle');
    expect((await two.services.router.status()).cheap).toMatchObject({ state: 'over-budget', spendThisMonth: { spent: 0.1, calls: 2 } });
    clock.set('2026-12-01T00:00:01Z');
    expect((await lookup(two, 'alice', 'BA444AA')).headers['x-lookup-source']).toBe('cheap');
  });

  it("ranks by a provider's own price signal over the configured price, and UPSTREAM_ORDER overrides price", async () => {
    const app = await instance({}, { middle: { MIDDLE_PRICE: '0.01' } });
    await account(app, 'alice');
    // Configured cheapest, middle is asked first; its answer says 0.10, which ranks it after cheap.
    expect((await lookup(app, 'alice', 'CA111AA')).headers['x-lookup-source']).toBe('middle');
    expect((await lookup(app, 'alice', 'CA222AA')).headers['x-lookup-source']).toBe('cheap');
    expect((await app.services.router.status()).middle).toMatchObject({ price: 0.1, priceFrom: 'provider', balance: 9.9 });
    const ordered = await instance({ UPSTREAM_ORDER: 'dear' });
    expect((await lookup(ordered, 'alice', 'CA333AA')).headers['x-lookup-source']).toBe('dear');
    // The operator reads the same order from the admin API (the console's providers page shows it too).
    const admin = as(ordered, await operator(ordered, 'order-viewer', 'viewer'));
    const providers = await admin('GET', '/admin/api/providers');
    expect(providers.json<{ order: string[] }>().order).toEqual(['dear', 'cheap', 'middle']);
  });

  it('makes one call for concurrent identical lookups (single flight per upstream)', async () => {
    const app = await instance();
    await account(app, 'alice');
    const release = cheap.holdAnswers();
    const pending = Promise.all([1, 2, 3, 4].map(() => lookup(app, 'alice', 'SF111AA')));
    while (cheap.calls === 0) await new Promise((resolve) => setImmediate(resolve));
    release();
    const answers = await pending;
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    expect(cheap.calls).toBe(1);
    expect((await ledger(app, 'alice')).map((r) => r.delta)).toEqual([-1, -1, -1, -1]);
  });
});
