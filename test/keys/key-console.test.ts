import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FRANCE, users } from '../admin/admin-harness.js';
import { consoleLogin, get, post } from '../console/console-harness.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 33 in the console: a key's rules are set from its row (an empty field removes a rule), the
 * keys table shows them with the spend against the cap (and its 80% / reached marks), the ledger
 * names each lookup's key (or console user) and filters by key, and the usage page charts credits
 * by key.
 */
describe.each(await enginesToTest())('keys as products in the console on %s', (engine) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({}, undefined, engine);
    await t.importRecords([FRANCE]);
  });
  afterEach(async () => t.close());

  it("sets a key's rules from the account page, shows them with its spend, and names and filters keys in the ledger", async () => {
    await t.account('acme', 50);
    const { inviteToken } = await users(t).createCustomer('acme', 'olivia', 'owner');
    await users(t).acceptInvite(inviteToken, 'correct horse battery staple');
    const owner = await consoleLogin(t, 'olivia');
    const { key, apiKey } = await t.services.accounts.createKey('acme', 'staging');
    const saved = await post(t, `/console/account/keys/${key.id}/settings`, { cap: '5', capPeriod: 'day', operations: 'CheckFrance, vin', perSecond: '', perDay: '100', allowedIps: '', labels: 'env=staging' }, owner);
    expect(saved.statusCode, saved.body).toBe(303);
    expect((await t.services.accounts.findKey('acme', 'staging')).cap).toEqual({ credits: 5, period: 'day' });
    for (let i = 0; i < 4; i++) expect((await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('acme', apiKey) } })).statusCode).toBe(200);
    expect((await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'EG258MA' }, owner)).statusCode).toBe(200);

    const page = await get(t, '/console/account', owner);
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/data-testid="key-rules">cap 5 credits per day; only CheckFrance, vin; 100\/day; env=staging</);
    expect(page.body).toMatch(/data-testid="key-spend">4 of 5 \([0-9-]+\) <strong class="warn" data-testid="key-cap-alert">80% of cap<\/strong>/);
    expect(page.body).toContain('data-testid="ledger-key"><code>staging</code>');
    expect(page.body).toContain('data-testid="ledger-key">console: olivia');
    expect(page.body).toContain('data-testid="usage-by-key"');
    expect(page.body).toContain('Credits per day by API key');

    const filtered = await get(t, '/console/account?key=staging', owner);
    expect(filtered.body.match(/data-testid="ledger-key"><code>staging<\/code>/g)).toHaveLength(4);
    expect(filtered.body).not.toContain('console: olivia');

    const refused = await post(t, `/console/account/keys/${key.id}/settings`, { cap: '5', capPeriod: 'day', operations: 'CheckNowhere', perSecond: '', perDay: '', allowedIps: '', labels: '' }, owner);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Unknown operation CheckNowhere');
    const cleared = await post(t, `/console/account/keys/${key.id}/settings`, { cap: '', capPeriod: 'month', operations: '', perSecond: '', perDay: '', allowedIps: '', labels: '' }, owner);
    expect(cleared.statusCode).toBe(303);
    expect(await t.services.accounts.findKey('acme', 'staging')).toMatchObject({ cap: null, operations: null, perDay: null, labels: {} });
  });
});
