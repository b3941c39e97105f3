import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, FRANCE, operator } from './admin-harness.js';

/** The operations routes of the admin API: providers' status and the free test plates. */
describe.each(ENGINES)('admin API operations routes on %s', (engine) => {
  let t: TestApp;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    t = await createTestApp({ SEED_DEMO: 'false' }, undefined, engine);
    await t.importRecords([FRANCE]);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  it("shows the upstream providers' status as /readyz does, to operators only", async () => {
    const viewer = as(t, await operator(t, 'watcher', 'viewer'));
    const res = await viewer('GET', '/admin/api/providers');
    expect(res.statusCode).toBe(200);
    const ready = (await t.app.inject({ url: '/readyz' })).json<{ providers: Record<string, unknown> }>();
    expect(Object.keys(ready.providers).length).toBeGreaterThan(0);
    // No paid upstream is configured here: the router's order is empty.
    expect(res.json()).toEqual({ providers: ready.providers, order: [] });
    expect((await t.app.inject({ url: '/admin/api/providers' })).statusCode).toBe(401);
  });

  it('makes a plate free through the same service lookups use, audits it, and makes it cost again', async () => {
    const key = await t.account('alice', 5);
    const lookup = () => t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('alice', key) } });
    const root = as(t, await operator(t, 'root'));

    // Key values are normalised as a lookup normalises them.
    const added = await root('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['eg-258-ma'] });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toEqual({ operation: 'CheckFrance', key: 'EG258MA' });
    expect((await root('GET', '/admin/api/test-plates')).json()).toEqual({ plates: [{ operation: 'CheckFrance', key: 'EG258MA' }] });
    expect((await lookup()).statusCode).toBe(200);
    expect((await t.services.accounts.show('alice')).credits).toBe(5);

    const removed = await root('DELETE', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['EG258MA'] });
    expect(removed.json()).toEqual({ operation: 'CheckFrance', key: 'EG258MA', removed: true });
    expect((await root('DELETE', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['EG258MA'] })).statusCode).toBe(404);
    expect((await lookup()).statusCode).toBe(200);
    expect((await t.services.accounts.show('alice')).credits).toBeLessThan(5);

    const audit = (await root('GET', '/admin/api/audit?targetKind=test-plate')).json<{ rows: Array<{ action: string; target: string; actor: { name: string } }> }>();
    expect(audit.rows.map((r) => [r.action, r.target, r.actor.name])).toEqual([
      ['test-plate.remove', 'CheckFrance EG258MA', 'root'],
      ['test-plate.add', 'CheckFrance EG258MA', 'root'],
    ]);
  });

  it('refuses test plate changes from a viewer, without the CSRF token, or for an unknown operation', async () => {
    const viewer = as(t, await operator(t, 'watcher', 'viewer'));
    expect((await viewer('GET', '/admin/api/test-plates')).statusCode).toBe(200);
    expect((await viewer('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['EG258MA'] })).json()).toMatchObject({ error: 'forbidden' });
    const root = as(t, await operator(t, 'root'));
    expect((await root('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['EG258MA'] }, false)).json()).toMatchObject({ error: 'csrf' });
    const unknown = await root('POST', '/admin/api/test-plates', { operation: 'CheckAtlantis', values: ['X'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ error: 'invalid-request', field: 'values' });
    expect((await root('GET', '/admin/api/test-plates')).json()).toEqual({ plates: [] });
  });
});
