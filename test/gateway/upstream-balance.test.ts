import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltApp } from '../../src/app.js';
import type { ProviderView } from '../../src/providers/upstream/providers-view.js';
import { as, operator } from '../admin/admin-harness.js';
import { enginesToTest } from '../helpers/engines.js';
import { FakeRegcheck } from '../fakes/fake-regcheck.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';
import { checkUrl, gatewayApp, sharedStore, type SharedStore } from './gateway-harness.js';

/**
 * The operator's balance at the original (issue 24): read from getcredits at start and every
 * minute whether or not lookups happen; below REGCHECK_LOW_CREDITS one operator alert; at 0 the
 * provider stops asking (free "temporarily unavailable") until the balance is back.
 */
describe.each(await enginesToTest())('the balance at the original on %s', (engine) => {
  let fake: FakeRegcheck;
  let store: SharedStore;
  let app: BuiltApp;
  let timer: ManualRepeat;

  beforeEach(async () => {
    fake = await FakeRegcheck.start({ username: 'op-user', credits: 101 });
    store = await sharedStore(engine);
    timer = new ManualRepeat();
    app = await gatewayApp(store, { REGCHECK_USERNAME: 'op-user', REGCHECK_BASE_URL: fake.baseUrl, REGCHECK_LOW_CREDITS: '100', REGCHECK_TIMEOUT_MS: '2000', REGCHECK_BUDGET_MS: '2000' }, timer.repeat);
    // The operator's own endpoint: told about the service itself (upstream.credits.*) by default.
    await app.services.alerting.webhooks.create({ actor: 'operator', accountId: null }, { url: 'http://127.0.0.1:9/operator-hook' });
    // The read made at start has answered (check() joins a read in progress).
    await app.regcheck?.balance.check();
  });
  afterEach(async () => {
    await app.app.close();
    await fake.close();
    await store.drop();
  });

  const alerts = async () =>
    (await app.services.storage.db.selectFrom('webhook_messages').select(['event_type', 'payload', 'account_id']).orderBy('created_at').execute()).filter((m) => m.event_type.startsWith('upstream.'));
  const balance = () => app.regcheck?.balance.balance;
  const credits = async (username: string) => (await app.services.accounts.show(username)).credits;

  it('reads the balance at start and then every minute, whether or not lookups happen', async () => {
    expect(fake.creditChecks).toBe(1);
    expect(balance()).toBe(101);
    expect(timer.intervals).toEqual([60_000]);
    fake.credits = 150;
    timer.fire();
    await app.regcheck?.balance.check();
    expect(fake.creditChecks).toBe(2);
    expect(balance()).toBe(150);
    const providers = (await app.app.inject({ url: '/readyz' })).json<{ providers: { regcheck: { balance: { credits: number } } } }>();
    expect(providers.providers.regcheck.balance.credits).toBe(150);
  });

  it('alerts the operator once when the balance falls below REGCHECK_LOW_CREDITS, and once more at 0', async () => {
    await app.regcheck?.balance.check();
    await app.services.accounts.create('alice', 10);
    expect(await alerts()).toEqual([]);
    // A found answer costs one credit at the original: 101 -> 100 is not below 100; 100 -> 99 is.
    expect((await app.app.inject({ url: checkUrl('alice') })).statusCode).toBe(200);
    // Counted down in the store after the answer went out: wait for that write.
    await app.regcheck?.balance.settled();
    expect(balance()).toBe(100);
    await app.regcheck?.balance.check();
    expect(await alerts()).toEqual([]);
    expect((await app.app.inject({ url: '/api/reg.asmx/CheckAustralia?RegistrationNumber=ZZT481&State=NSW&username=alice' })).statusCode).toBe(200);
    await app.regcheck?.balance.check();
    expect(balance()).toBe(99);
    const low = await alerts();
    expect(low.map((m) => m.event_type)).toEqual(['upstream.credits.low']);
    expect(low[0]?.account_id).toBeNull();
    expect(JSON.parse(low[0]?.payload ?? '{}')).toMatchObject({ type: 'upstream.credits.low', data: { provider: 'regcheck', credits: 99, threshold: 100 } });
    // Further reads below the threshold send nothing more.
    timer.fire();
    await app.regcheck?.balance.check();
    expect((await alerts()).length).toBe(1);

    fake.credits = 0;
    await app.regcheck?.balance.check();
    expect((await alerts()).map((m) => m.event_type)).toEqual(['upstream.credits.low', 'upstream.credits.depleted']);
  });

  it('at 0 stops asking the original: lookups are temporarily unavailable and free, until the balance is back', async () => {
    fake.credits = 0;
    await app.regcheck?.balance.check();
    await app.services.accounts.create('alice', 10);
    const before = fake.calls();
    const refused = await app.app.inject({ url: checkUrl('alice') });
    expect(refused.statusCode).toBe(500);
    expect(refused.body).toMatch(/unavailable/i);
    expect(fake.calls()).toBe(before);
    expect(await credits('alice')).toBe(10);

    fake.credits = 40;
    timer.fire();
    await app.regcheck?.balance.check();
    const answered = await app.app.inject({ url: checkUrl('alice') });
    expect(answered.statusCode).toBe(200);
    expect(fake.calls()).toBe(before + 1);
    expect(await credits('alice')).toBe(9);
    // Back above 0 re-arms the depleted alert: the next fall to 0 alerts again.
    expect((await alerts()).map((m) => m.event_type)).toEqual(['upstream.credits.low', 'upstream.credits.depleted']);
    fake.credits = 0;
    await app.regcheck?.balance.check();
    expect((await alerts()).map((m) => m.event_type)).toEqual(['upstream.credits.low', 'upstream.credits.depleted', 'upstream.credits.depleted']);
  });

  it('counts the balance down after each answer it charged, so the gate closes at 0 before the next read', async () => {
    fake.credits = 1;
    await app.regcheck?.balance.check();
    await app.services.accounts.create('alice', 10);
    expect((await app.app.inject({ url: checkUrl('alice') })).statusCode).toBe(200);
    await app.regcheck?.balance.settled();
    expect(balance()).toBe(0);
    const calls = fake.calls();
    expect((await app.app.inject({ url: '/api/reg.asmx/CheckAustralia?RegistrationNumber=ZZT481&State=NSW&username=alice' })).statusCode).toBe(500);
    expect(fake.calls()).toBe(calls);
    expect(await credits('alice')).toBe(9);
  });

  it('keeps the last balance when a read fails, and says so', async () => {
    await app.regcheck?.balance.check();
    await fake.close();
    await app.regcheck?.balance.check();
    expect(balance()).toBe(101);
    const status = (await app.app.inject({ url: '/readyz' })).json<{ providers: { regcheck: { balance: { credits: number; lastError?: { message: string } } } } }>();
    expect(status.providers.regcheck.balance.credits).toBe(101);
    expect(status.providers.regcheck.balance.lastError?.message).toBeDefined();
    expect(JSON.stringify(status)).not.toContain('op-user');
    fake = await FakeRegcheck.start({ username: 'op-user' });
  });
});

/**
 * Several instances on one store share one balance (upstream_balances): what any of them read
 * from getcredits or spent at the original is the figure every instance shows and gates on.
 */
describe.each(await enginesToTest())('the balance at the original, shared by two instances on %s', (engine) => {
  let fake: FakeRegcheck;
  let store: SharedStore;
  const apps: BuiltApp[] = [];

  beforeEach(async () => {
    fake = await FakeRegcheck.start({ username: 'op-user', credits: 101 });
    store = await sharedStore(engine);
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.app.close();
    await fake.close();
    await store.drop();
  });

  async function instance(): Promise<BuiltApp> {
    // Each its own timer, never fired: only the read at start and the ones a test asks for.
    const app = await gatewayApp(store, { REGCHECK_USERNAME: 'op-user', REGCHECK_BASE_URL: fake.baseUrl, REGCHECK_TIMEOUT_MS: '2000', REGCHECK_BUDGET_MS: '2000' }, new ManualRepeat().repeat);
    apps.push(app);
    await app.regcheck?.balance.check();
    return app;
  }

  let viewers = 0;
  const shown = async (app: BuiltApp): Promise<number | null | undefined> => {
    viewers += 1;
    const viewer = as(app, await operator(app, `balance-viewer${viewers}`, 'viewer'));
    const res = await viewer('GET', '/admin/api/providers');
    expect(res.statusCode).toBe(200);
    return res.json<{ providers: Record<string, ProviderView> }>().providers.regcheck?.balance?.credits;
  };

  it('shows on every instance the balance one of them read', async () => {
    const one = await instance();
    const two = await instance();
    expect([await shown(one), await shown(two)]).toEqual([101, 101]);
    fake.credits = 57;
    await one.regcheck?.balance.check();
    const reads = fake.creditChecks;
    // The second instance did not ask getcredits again, and shows what the first read.
    expect(await shown(two)).toBe(57);
    expect(two.regcheck?.balance.balance).toBe(57);
    expect(fake.creditChecks).toBe(reads);
  });

  it('stops asking the original on every instance when one of them spent the last credit', async () => {
    const one = await instance();
    const two = await instance();
    fake.credits = 1;
    await one.regcheck?.balance.check();
    await one.services.accounts.create('alice', 10);
    // The first instance's answer spends the last credit at the original ...
    expect((await one.app.inject({ url: checkUrl('alice') })).statusCode).toBe(200);
    await one.regcheck?.balance.settled();
    expect(one.regcheck?.balance.balance).toBe(0);
    // ... and the second, whose own last read said 101, does not ask for another vehicle: free and unavailable.
    const calls = fake.calls();
    const refused = await two.app.inject({ url: '/api/reg.asmx/CheckAustralia?RegistrationNumber=ZZT481&State=NSW&username=alice' });
    expect(refused.statusCode).toBe(500);
    expect(refused.body).toMatch(/unavailable/i);
    expect(fake.calls()).toBe(calls);
    expect(await shown(two)).toBe(0);
    expect((await two.services.accounts.show('alice')).credits).toBe(9);

    // Topped up and read by the second instance: both ask again.
    fake.credits = 30;
    await two.regcheck?.balance.check();
    expect((await one.app.inject({ url: '/api/reg.asmx/CheckAustralia?RegistrationNumber=ZZT481&State=NSW&username=alice' })).statusCode).toBe(200);
    expect(fake.calls()).toBe(calls + 1);
  });
});
