import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltApp } from '../../src/app.js';
import { verifyStandardWebhook } from '../alerts/standard-webhooks-verifier.js';
import { FakeHttpServer } from '../fakes/fake-http-server.js';
import { enginesToTest } from '../helpers/engines.js';
import { until } from '../helpers/until.js';
import { routedWorld, type RoutedWorld } from './routed-world.js';

const OPERATOR = { actor: 'operator', accountId: null } as const;
/** Webhooks sent at once, to the receiver on 127.0.0.1. */
const HOOKS = { WEBHOOK_POLL_MS: '20', WEBHOOK_TIMEOUT_MS: '2000' };

interface Sent {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/**
 * The router's alerts to the operator's own webhook endpoints (issue 32; docs/webhooks.md "Events",
 * docs/providers.md "Routing"): `upstream.out-of-funds`, `upstream.disabled`,
 * `upstream.budget.warning` and `upstream.budget.reached` each fire once per episode, however many
 * lookups see it, with the documented payload, and re-arm as documented.
 */
describe.each(await enginesToTest())('the routing alerts on %s', (engine) => {
  let world: RoutedWorld;
  let receiver: FakeHttpServer;
  beforeEach(async () => {
    world = await routedWorld(engine);
    receiver = await FakeHttpServer.start(() => ({ status: 204 }));
  });
  afterEach(async () => {
    await world.close();
    await receiver.close();
  });

  /** An instance with the operator's own endpoint registered (every event by default); its id and secret. */
  async function withEndpoint(paid: Record<string, Record<string, string>> = {}): Promise<{ app: BuiltApp; id: number; secret: string }> {
    const app = await world.instance(HOOKS, paid);
    const { endpoint, secret } = await app.services.alerting.webhooks.create(OPERATOR, { url: `${receiver.url}/operator`, description: 'the operator' });
    return { app, id: endpoint.id, secret };
  }

  /** The upstream.* messages queued for the endpoint, oldest first: what the router told the operator. */
  async function sent(app: BuiltApp, id: number): Promise<Sent[]> {
    const messages = await app.services.alerting.webhooks.messages(OPERATOR, id);
    return messages
      .filter((m) => m.eventType.startsWith('upstream.'))
      .reverse()
      .map((m) => {
        const payload = JSON.parse(m.payload) as { type: string; data: Record<string, unknown> };
        expect(payload.type).toBe(m.eventType);
        return { type: payload.type, data: payload.data };
      });
  }

  it('sends upstream.out-of-funds once however many lookups meet it, signed, and again only after the source came back', async () => {
    const { app, id, secret } = await withEndpoint();
    const alice = await world.account(app, 'alice');
    world.cheap.answerAll('out-of-funds');
    expect((await world.lookup(app, alice, 'AA111AA')).headers['x-lookup-source']).toBe('middle');
    // Delivered to the endpoint, signed (at the app's clock, which the test holds).
    await until(() => receiver.requests.length === 1);
    const request = receiver.requests[0];
    if (!request) throw new Error('no delivery');
    verifyStandardWebhook([secret], request.headers, request.body, Math.floor(world.clock.now().getTime() / 1000));
    expect((await world.lookup(app, alice, 'AA222AA')).headers['x-lookup-source']).toBe('middle');
    // After the retry time one call asks again, still out of funds: the episode goes on, no second alert.
    world.clock.advance(11 * 60_000);
    const calls = world.cheap.calls;
    expect((await world.lookup(app, alice, 'AA333AA')).headers['x-lookup-source']).toBe('middle');
    expect(world.cheap.calls).toBe(calls + 1);
    const first = await sent(app, id);
    expect(first).toEqual([
      { type: 'upstream.out-of-funds', data: { provider: 'cheap', state: 'out-of-funds', reason: 'insufficient funds (HTTP 402)', until: '2026-11-28T10:10:00.000Z' } },
    ]);
    // On the wire: that one message, signed, and no other.
    expect(receiver.requests).toHaveLength(1);
    expect(JSON.parse(request.body)).toMatchObject({ type: 'upstream.out-of-funds', data: first[0]?.data });

    // Topped up: its next answer brings it back and re-arms the alert; the next 402 is a new episode.
    world.cheap.answerAll(undefined);
    world.clock.advance(11 * 60_000);
    expect((await world.lookup(app, alice, 'AA444AA')).headers['x-lookup-source']).toBe('cheap');
    expect(await sent(app, id)).toHaveLength(1);
    world.cheap.answerAll('out-of-funds');
    expect((await world.lookup(app, alice, 'AA555AA')).headers['x-lookup-source']).toBe('middle');
    const all = await sent(app, id);
    expect(all.map((m) => m.type)).toEqual(['upstream.out-of-funds', 'upstream.out-of-funds']);
    expect(all[1]?.data).toEqual({ provider: 'cheap', state: 'out-of-funds', reason: 'insufficient funds (HTTP 402)', until: '2026-11-28T10:32:00.000Z' });
  });

  it('sends upstream.out-of-funds with state quota when the daily quota is used', async () => {
    const { app, id } = await withEndpoint();
    const alice = await world.account(app, 'alice');
    world.cheap.answerAll('quota');
    expect((await world.lookup(app, alice, 'QA111AA')).headers['x-lookup-source']).toBe('middle');
    expect((await world.lookup(app, alice, 'QA222AA')).headers['x-lookup-source']).toBe('middle');
    expect(await sent(app, id)).toEqual([{ type: 'upstream.out-of-funds', data: { provider: 'cheap', state: 'quota', reason: 'quota used up (HTTP 429)', until: '2026-11-29T00:00:00.000Z' } }]);
  });

  it('sends upstream.disabled once for a refused key, and again only after a restart re-armed it (a key still refused)', async () => {
    const { app, id } = await withEndpoint();
    const alice = await world.account(app, 'alice');
    world.cheap.answerAll('bad-key');
    expect((await world.lookup(app, alice, 'DA111AA')).headers['x-lookup-source']).toBe('middle');
    world.clock.advance(86_400_000);
    expect((await world.lookup(app, alice, 'DA222AA')).headers['x-lookup-source']).toBe('middle');
    expect(await sent(app, id)).toEqual([{ type: 'upstream.disabled', data: { provider: 'cheap', state: 'disabled', reason: 'the key was refused (HTTP 401)', until: null } }]);

    // A restart asks it again; still refused, that is a new alert (the operator's fix did not take).
    const restarted = await world.instance(HOOKS);
    expect((await world.lookup(restarted, alice, 'DA333AA')).headers['x-lookup-source']).toBe('middle');
    expect((await sent(app, id)).map((m) => m.type)).toEqual(['upstream.disabled', 'upstream.disabled']);
  });

  it('sends upstream.budget.warning at 80 % and upstream.budget.reached at 100 % once a month, re-armed when the month turns', async () => {
    const budget = { cheap: { CHEAP_MONTHLY_BUDGET: '0.12' } };
    const { app, id } = await withEndpoint(budget);
    const alice = await world.account(app, 'alice');
    // A minute between lookups, so the outbox lists the alerts in the order they were sent.
    const ask = async (plate: string): Promise<unknown> => {
      world.clock.advance(60_000);
      return (await world.lookup(app, alice, plate)).headers['x-lookup-source'];
    };
    // 0.05 of 0.12: under the warning.
    expect(await ask('BA111AA')).toBe('cheap');
    expect(await sent(app, id)).toEqual([]);
    // 0.10: past 80 %, the warning alone.
    expect(await ask('BA222AA')).toBe('cheap');
    expect(await sent(app, id)).toEqual([{ type: 'upstream.budget.warning', data: { provider: 'cheap', budget: 0.12, spent: 0.1, month: '2026-11' } }]);
    // 0.15: reached; cheap is not asked again this month, and nothing more is sent.
    expect(await ask('BA333AA')).toBe('cheap');
    expect(await ask('BA444AA')).toBe('middle');
    expect(await ask('BA555AA')).toBe('middle');
    expect((await sent(app, id)).slice(1)).toEqual([{ type: 'upstream.budget.reached', data: { provider: 'cheap', budget: 0.12, spent: 0.15, month: '2026-11' } }]);

    // The month turns: the budget and both alerts start again.
    world.clock.set('2026-12-01T00:00:01Z');
    for (const plate of ['BB111AA', 'BB222AA', 'BB333AA']) expect(await ask(plate)).toBe('cheap');
    expect(await ask('BB444AA')).toBe('middle');
    expect((await sent(app, id)).slice(2)).toEqual([
      { type: 'upstream.budget.warning', data: { provider: 'cheap', budget: 0.12, spent: 0.1, month: '2026-12' } },
      { type: 'upstream.budget.reached', data: { provider: 'cheap', budget: 0.12, spent: 0.15, month: '2026-12' } },
    ]);
  });
});
