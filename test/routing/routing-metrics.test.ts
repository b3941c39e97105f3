import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltApp } from '../../src/app.js';
import { enginesToTest } from '../helpers/engines.js';
import { routedWorld, type RoutedWorld } from './routed-world.js';

/** The samples of one metric in a Prometheus text exposition, by their label set. */
function samples(text: string, metric: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${metric}\\{(.*)\\} (\\S+)$`).exec(line);
    if (match) out[match[1] as string] = Number(match[2]);
  }
  return out;
}

/**
 * `/metrics` carries the router's spend per paid upstream in the operator's currency and each
 * paid upstream's routing state (issue 32 "What the operator sees"; docs/providers.md "Monitoring").
 */
describe.each(await enginesToTest())('the routing metrics on %s', (engine) => {
  let world: RoutedWorld;
  beforeEach(async () => {
    world = await routedWorld(engine);
  });
  afterEach(async () => {
    await world.close();
  });

  const scrape = async (app: BuiltApp): Promise<string> => {
    const res = await app.app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    return res.body;
  };

  it('counts each paid answer at the price the stored spend was charged, in UPSTREAM_CURRENCY, and nothing for cache answers or failures', async () => {
    const app = await world.instance({ UPSTREAM_CURRENCY: 'EUR' });
    const alice = await world.account(app, 'alice');
    expect((await world.lookup(app, alice, 'AB123CD')).headers['x-lookup-source']).toBe('cheap');
    expect((await world.lookup(app, alice, 'AB123CD')).headers['x-lookup-source']).toBe('cache');
    world.cheap.answer('BC234DE', 'server-error');
    expect((await world.lookup(app, alice, 'BC234DE')).headers['x-lookup-source']).toBe('middle');
    world.cheap.answer('CD345EF', 'not-found');
    expect((await world.lookup(app, alice, 'CD345EF')).statusCode).toBe(500);

    const spend = samples(await scrape(app), 'vehicle_lookup_upstream_spend_total');
    expect(spend).toEqual({ 'provider="cheap",currency="EUR"': 0.05, 'provider="middle",currency="EUR"': 0.1 });
    // The metric and the stored spend are the same figures.
    const status = await app.services.router.status();
    expect(status.cheap?.spendToday.spent).toBe(spend['provider="cheap",currency="EUR"']);
    expect(status.middle?.spendToday.spent).toBe(spend['provider="middle",currency="EUR"']);
  });

  it('shows each paid upstream in one routing state, one-hot: ready, then out of funds after a 402, then over budget', async () => {
    const app = await world.instance({}, { dear: { DEAR_MONTHLY_BUDGET: '0.40' } });
    const alice = await world.account(app, 'alice');
    let state = samples(await scrape(app), 'vehicle_lookup_upstream_routing_state');
    expect(state['provider="cheap",state="ready"']).toBe(1);
    expect(Object.entries(state).filter(([, v]) => v === 1).map(([k]) => k)).toEqual(['provider="cheap",state="ready"', 'provider="dear",state="ready"', 'provider="middle",state="ready"'].sort());
    expect(Object.keys(state)).toHaveLength(3 * 6);

    world.cheap.answerAll('out-of-funds');
    world.middle.answerAll('server-error');
    expect((await world.lookup(app, alice, 'AA111AA')).headers['x-lookup-source']).toBe('dear');
    state = samples(await scrape(app), 'vehicle_lookup_upstream_routing_state');
    expect(state['provider="cheap",state="out-of-funds"']).toBe(1);
    expect(state['provider="cheap",state="ready"']).toBe(0);
    expect(state['provider="dear",state="over-budget"']).toBe(1);
    expect(state['provider="middle",state="ready"']).toBe(1);
    expect(Object.values(state).reduce((a, b) => a + b, 0)).toBe(3);
  });
});
