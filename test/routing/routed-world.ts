import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { FakePaidApi } from '../fakes/fake-paid-api.js';
import { sharedStore, type SharedStore } from '../gateway/gateway-harness.js';
import type { TestEngine } from '../helpers/engines.js';
import { ManualRepeat } from '../helpers/manual-repeat.js';
import { ManualClock } from '../redis/redis-harness.js';
import { fakePaidRegistrations, ROUTED_OPERATION } from './fake-paid-adapter.js';

/**
 * Three fake paid APIs (cheap 0.05, middle 0.10 with its own price signal and a balance of 10,
 * dear 0.40) behind instances of the app on one shared store, with a manual clock: the world of
 * the routing suites that drive the app from outside (/metrics, webhooks, the console).
 */
export interface RoutedWorld {
  readonly cheap: FakePaidApi;
  readonly middle: FakePaidApi;
  readonly dear: FakePaidApi;
  readonly clock: ManualClock;
  /** An instance; `paid` adds variables per fake (`{ cheap: { CHEAP_MONTHLY_BUDGET: '0.10' } }`). */
  instance(env?: Record<string, string>, paid?: Record<string, Record<string, string>>): Promise<BuiltApp>;
  /** Creates a customer account with credits; its Basic authorization header for `lookup`. */
  account(app: BuiltApp, user: string, credits?: number): Promise<string>;
  /** A CheckFrance lookup of `plate` over the JSON binding, which only the paid fakes answer. */
  lookup(app: BuiltApp, authorization: string, plate: string): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function routedWorld(engine: TestEngine, start = '2026-11-28T10:00:00Z'): Promise<RoutedWorld> {
  const store: SharedStore = await sharedStore(engine);
  const cheap = await FakePaidApi.start({ key: 'k-cheap', price: 0.05, make: 'CHEAP' });
  const middle = await FakePaidApi.start({ key: 'k-middle', price: 0.1, make: 'MIDDLE', sendsPrice: true, balance: 10 });
  const dear = await FakePaidApi.start({ key: 'k-dear', price: 0.4, make: 'DEAR' });
  const clock = new ManualClock(Date.parse(start));
  const apps: BuiltApp[] = [];
  const fake = (name: string, api: FakePaidApi, price: string, paid: Record<string, Record<string, string>>) => ({
    name,
    key: `k-${name}`,
    env: { [`${name.toUpperCase()}_BASE_URL`]: api.baseUrl, [`${name.toUpperCase()}_PRICE`]: price, [`${name.toUpperCase()}_BREAKER_FAILURES`]: '2', ...(paid[name] ?? {}) },
  });
  return {
    cheap,
    middle,
    dear,
    clock,
    async instance(env = {}, paid = {}) {
      const config = loadConfig({ LOG_LEVEL: 'silent', SEED_DEMO: 'false', VIN_DECODER: 'off', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...store.env, ...env });
      const built = await buildApp(config, {
        clock,
        lookupStatsRepeat: new ManualRepeat().repeat,
        upstreamSpendRepeat: new ManualRepeat().repeat,
        balanceRepeat: new ManualRepeat().repeat,
        extraRegistrations: fakePaidRegistrations([fake('dear', dear, '0.40', paid), fake('cheap', cheap, '0.05', paid), fake('middle', middle, '0.10', paid)]),
      });
      apps.push(built);
      return built;
    },
    async account(app, user, credits = 100) {
      const created = await app.services.accounts.create(user, credits);
      return `Basic ${Buffer.from(`${user}:${created.apiKey}`).toString('base64')}`;
    },
    lookup: (app, authorization, plate) => app.app.inject({ url: `/api/json.aspx/${ROUTED_OPERATION}/${plate}`, headers: { authorization } }),
    async close() {
      for (const app of apps.splice(0)) await app.app.close();
      await Promise.all([cheap.close(), middle.close(), dear.close()]);
      await store.drop();
    },
  };
}
