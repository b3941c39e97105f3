import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LookupStatsRepository } from '../../src/ops/lookup-stats.repository.js';
import { FRANCE, PASSWORD, users } from '../admin/admin-harness.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, type ConsoleSession } from './console-harness.js';

/** The operator overview, server-rendered (issue 18): usage of every account, rates per interface, accounts close to zero. */
describe.each(await enginesToTest())('operator overview page on %s', (engine) => {
  let t: TestApp;
  const NOW = Date.parse('2026-11-25T17:30:00.000Z');

  beforeEach(async () => {
    t = await createTestApp(await engineEnv(engine), { now: () => new Date(NOW) }, engine);
    await t.importRecords([FRANCE]);
  });
  afterEach(async () => {
    await t.close();
  });

  async function operatorSession(name: string, role: 'admin' | 'viewer'): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createOperator(name, role, true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    return consoleLogin(t, name);
  }

  const json = (username: string, key: string, plate = 'EG258MA') => t.app.inject({ url: `/api/json.aspx/CheckFrance/${plate}`, headers: { authorization: t.basic(username, key) } });

  /** The text of one row of the rates table, tags removed. */
  function ratesRow(body: string, iface: string): string {
    const row = new RegExp(`<tr data-interface="${iface}">(.*?)</tr>`, 's').exec(body)?.[1] ?? '';
    return row.replace(/<[^>]+>/g, '|').replace(/\s*\|[\s|]*/g, '|');
  }

  it('charts every account\'s lookups and credits, shows the rates per interface over 24 hours and 30 days, and lists accounts close to zero, lowest first', async () => {
    const alice = await t.account('alice', 100);
    const bob = await t.account('bob', 100);
    await t.account('dave', 15);
    await t.account('carol', 0);
    await t.account('erin', 500);
    await t.account('frank', 0);
    await t.services.accounts.setDisabled('frank', true);
    expect((await json('alice', alice)).statusCode).toBe(200);
    expect((await json('alice', alice)).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=EG258MA&username=alice' })).statusCode).toBe(200);
    expect((await json('bob', bob)).statusCode).toBe(200);
    expect((await json('bob', bob, 'ZZ999ZZ')).statusCode).toBe(500);
    await t.lookupRollup.flush();
    // Ten days ago, on another instance: inside the 30 days, outside the 24 hours.
    await t.services.storage.transaction((tx) =>
      new LookupStatsRepository(t.services.storage.db).add(tx, [
        { hour: '2026-11-15T09:00:00.000Z', interface: 'soap12', operation: 'CheckFrance', outcome: 'success', count: 4 },
        { hour: '2026-11-15T09:00:00.000Z', interface: 'soap12', operation: 'CheckFrance', outcome: 'unauthorized', count: 1 },
      ]),
    );

    const res = await get(t, '/console/admin', await operatorSession('watcher', 'viewer'));
    expect(res.statusCode).toBe(200);
    const body = res.body;
    // Both charts cover every account: alice's three charged lookups and bob's one, a credit each.
    expect(body).toMatch(/<svg[^>]*aria-labelledby="chart-lookups-title" data-total="4"/);
    expect(body).toMatch(/<svg[^>]*aria-labelledby="chart-credits-title" data-total="4"/);
    expect(body).toContain('Charged lookups per day and operation, last 30 days (UTC): 4 in 30 days');
    expect(body).toContain('<td>2026-11-25</td><td>CheckFrance</td><td class="num">4</td><td class="num">0</td><td class="num">4</td>');

    expect(ratesRow(body, 'json')).toBe('|json|4|75.0 %|not_found|1|4|75.0 %|not_found|1|');
    expect(ratesRow(body, 'http-get')).toBe('|http-get|1|100.0 %|–|1|100.0 %|–|');
    expect(ratesRow(body, 'soap12')).toBe('|soap12|0|–|–|5|80.0 %|unauthorized|1|');

    expect(body).toContain('data-testid="low-total">2<');
    const low = /<section aria-labelledby="low">(.*?)<\/section>/s.exec(body)?.[1] ?? '';
    expect([...low.matchAll(/accounts\/([a-z]+)">/g)].map((m) => m[1])).toEqual(['carol', 'dave']);
    // A viewer's overview has no form but the logout.
    expect(body.match(/<form method="post"/g)).toHaveLength(1);
  });

  it('counts no lookup twice and none before it reaches the store', async () => {
    const alice = await t.account('alice', 100);
    expect((await json('alice', alice)).statusCode).toBe(200);
    const session = await operatorSession('root', 'admin');
    expect((await get(t, '/console/admin', session)).body).toContain('No lookups recorded yet.');
    await t.lookupRollup.flush();
    await t.lookupRollup.flush();
    expect(ratesRow((await get(t, '/console/admin', session)).body, 'json')).toBe('|json|1|100.0 %|–|1|100.0 %|–|');
  });

  it('is for operators only: a customer gets a 403 page, a visitor the login page', async () => {
    await t.account('alice', 100);
    const { inviteToken } = await users(t).createCustomer('alice', 'alice-owner', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    const owner = await consoleLogin(t, 'alice-owner');
    const refused = await get(t, '/console/admin', owner);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).not.toContain('data-testid="rates"');
    const visitor = await get(t, '/console/admin');
    expect(visitor.statusCode).toBe(303);
    expect(visitor.headers.location).toBe('/console/login?next=%2Fconsole%2Fadmin');
  });
});
