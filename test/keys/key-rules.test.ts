import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/credits/credit-ledger.repository.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, post } from '../console/console-harness.js';
import { as, customer, FRANCE, users } from '../admin/admin-harness.js';
import { until } from '../helpers/until.js';
import { ManualClock } from '../redis/redis-harness.js';

const USA = { operation: 'CheckUSA', key: { RegistrationNumber: 'ABC1234', State: 'NJ' }, vehicle: { Description: '2004 Dodge Durango' } };
const VIN = '1HGCM82633A004352';
const VIN_RECORD = { operation: 'VinCheck', key: { Vin: VIN }, vehicle: { Description: 'Honda Accord' } };
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const FRANCE_JSON = '/api/json.aspx/CheckFrance/EG258MA';

const envelope = (version: string, username: string): string =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${version}"><soap:Body>` +
  `<CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>EG258MA</RegistrationNumber><username>${username}</username></CheckFrance>` +
  '</soap:Body></soap:Envelope>';

/**
 * Issue 33: keys as products. Every lookup's ledger row names its key (and the console user);
 * each of a key's own rules allows what it names and refuses the rest at no cost, in each
 * binding's own error form; a cap is exact and turns with its period (the test clock's).
 */
describe.each(await enginesToTest())('keys as products on %s', (engine) => {
  let t: TestApp;
  let clock: ManualClock;

  beforeEach(async () => {
    clock = new ManualClock(Date.parse('2026-11-28T10:00:00.000Z'));
    t = await createTestApp({}, clock, engine);
    await t.importRecords([FRANCE, USA, VIN_RECORD]);
  });
  afterEach(async () => t.close());

  const json = (username: string, key: string, url = FRANCE_JSON, remoteAddress?: string) =>
    t.app.inject({ url, headers: { authorization: t.basic(username, key) }, ...(remoteAddress ? { remoteAddress } : {}) });

  /** The lookups' ledger rows (not the opening credits), oldest first. */
  async function lookups(username: string): Promise<LedgerEntry[]> {
    return (await t.services.accounts.usage(username)).filter((r) => r.kind === 'debit' || r.kind === 'free');
  }

  async function newKey(username: string, name: string, settings: Parameters<TestApp['services']['accounts']['createKey']>[2] = {}) {
    return t.services.accounts.createKey(username, name, settings);
  }

  it('names the key that made each lookup on all five bindings, the console user on Try it, and no key for a username alone', async () => {
    await t.account('acme', 100);
    const { key, apiKey } = await newKey('acme', 'production');
    const auth = { authorization: t.basic('acme', apiKey) };
    const responses = [
      await t.app.inject({ url: FRANCE_JSON, headers: auth }),
      await t.app.inject({ method: 'POST', url: '/api/reg.asmx', headers: { ...auth, 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/CheckFrance"' }, payload: envelope(SOAP11, 'acme') }),
      await t.app.inject({ method: 'POST', url: '/api/reg.asmx', headers: { ...auth, 'content-type': 'application/soap+xml; charset=utf-8' }, payload: envelope(SOAP12, 'acme') }),
      await t.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=EG258MA&username=acme', headers: auth }),
      await t.app.inject({ method: 'POST', url: '/api/reg.asmx/CheckFrance', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'RegistrationNumber=EG258MA&username=acme' }),
      // The username alone: no key was presented, so none is named.
      await t.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=EG258MA&username=acme' }),
    ];
    for (const res of responses) expect(res.statusCode, res.body).toBe(200);
    await users(t).createCustomer('acme', 'carol', 'member').then(async ({ inviteToken }) => users(t).acceptInvite(inviteToken, 'correct horse battery staple'));
    const carol = await consoleLogin(t, 'carol');
    const tried = await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'EG258MA' }, carol);
    expect(tried.statusCode, tried.body).toBe(200);
    const carolId = (await t.services.storage.db.selectFrom('users').select('id').where('name', '=', 'carol').executeTakeFirstOrThrow()).id;
    const rows = await lookups('acme');
    expect(rows.map((r) => [r.interface, r.apiKeyId, r.userId])).toEqual([
      ['json', key.id, null],
      ['soap11', key.id, null],
      ['soap12', key.id, null],
      ['http-get', key.id, null],
      ['http-post', key.id, null],
      ['http-get', null, null],
      ['console', null, carolId],
    ]);
  });

  it('keeps a key to its operations (names, country:, vin) and refuses the rest at no cost, naming the rule, on JSON and SOAP', async () => {
    await t.account('acme', 100);
    const { apiKey: contractor } = await newKey('acme', 'contractor', { operations: ['CheckUSA'] });
    const { apiKey: french } = await newKey('acme', 'french', { operations: ['country:france', 'vin'] });
    expect((await json('acme', contractor, '/api/json.aspx/CheckUSA/ABC1234/NJ')).statusCode).toBe(200);
    const refused = await json('acme', contractor);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toBe('API key contractor may not call CheckFrance: it is limited to CheckUSA');
    const soap = await t.app.inject({
      method: 'POST',
      url: '/api/reg.asmx',
      headers: { authorization: t.basic('acme', contractor), 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/CheckFrance"' },
      payload: envelope(SOAP11, 'acme'),
    });
    expect(soap.statusCode).toBe(500);
    expect(soap.body).toContain('<faultcode>soap:Client</faultcode>');
    expect(soap.body).toContain('API key contractor may not call CheckFrance');
    expect((await json('acme', french)).statusCode).toBe(200);
    expect((await json('acme', french, `/api/json.aspx/VinCheck/${VIN}`)).statusCode).toBe(200);
    expect((await json('acme', french, '/api/json.aspx/CheckUSA/ABC1234/NJ')).statusCode).toBe(403);
    const rows = await lookups('acme');
    expect(rows.map((r) => r.operation)).toEqual(['CheckUSA', 'CheckFrance', 'VinCheck']);
    expect((await t.services.accounts.show('acme')).credits).toBe(100 - rows.reduce((s, r) => s - r.delta, 0));
  });

  it('refuses a key outside its allowed addresses (CIDR, IPv4 as mapped IPv6 too) and allows it inside', async () => {
    await t.account('acme', 10);
    const { apiKey } = await newKey('acme', 'office', { allowedIps: ['203.0.113.0/24', '2001:db8::/32'] });
    expect((await json('acme', apiKey, FRANCE_JSON, '203.0.113.9')).statusCode).toBe(200);
    expect((await json('acme', apiKey, FRANCE_JSON, '::ffff:203.0.113.10')).statusCode).toBe(200);
    expect((await json('acme', apiKey, FRANCE_JSON, '2001:db8::5')).statusCode).toBe(200);
    const refused = await json('acme', apiKey, FRANCE_JSON, '198.51.100.7');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toBe('API key office may not be used from 198.51.100.7: the address is not in its allowed addresses');
    expect((await t.services.accounts.show('acme')).credits).toBe(7);
  });

  it("applies a key's own rate limits per second and per day inside the account's, at no cost", async () => {
    await t.account('acme', 100);
    const { apiKey: slow } = await newKey('acme', 'slow', { perSecond: 2, perDay: 3 });
    const { apiKey: other } = await newKey('acme', 'other');
    expect((await json('acme', slow)).statusCode).toBe(200);
    expect((await json('acme', slow)).statusCode).toBe(200);
    const second = await json('acme', slow);
    expect(second.statusCode).toBe(429);
    expect(second.body).toBe('Rate limit exceeded: API key slow may make 2 requests per second; retry after 1 s');
    // Another key of the account is not limited by this key's rule.
    expect((await json('acme', other)).statusCode).toBe(200);
    clock.advance(1000);
    expect((await json('acme', slow)).statusCode).toBe(200);
    clock.advance(1000);
    const day = await json('acme', slow);
    expect(day.statusCode).toBe(429);
    expect(day.body).toContain('API key slow may make 3 requests per day (UTC)');
    clock.set('2026-11-29T00:00:01.000Z');
    expect((await json('acme', slow)).statusCode).toBe(200);
    expect((await t.services.accounts.show('acme')).credits).toBe(100 - 5);
  });

  it('caps a key per day: exactly the cap is charged, the next lookup is refused with Retry-After, and the day turns on the test clock', async () => {
    await t.account('acme', 100);
    const { key, apiKey } = await newKey('acme', 'staging', { cap: { credits: 3, period: 'day' } });
    for (let i = 0; i < 3; i++) expect((await json('acme', apiKey)).statusCode).toBe(200);
    const refused = await json('acme', apiKey);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe(String(14 * 3600));
    expect(refused.body).toBe(`API key staging has reached its cap of 3 credits per day (UTC); retry after ${14 * 3600} s`);
    const get = await t.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=EG258MA&username=acme', headers: { authorization: t.basic('acme', apiKey) } });
    expect(get.statusCode).toBe(500);
    expect(get.body).toContain('API key staging has reached its cap');
    expect((await t.services.accounts.show('acme')).credits).toBe(97);
    clock.set('2026-11-29T00:00:00.000Z');
    expect((await json('acme', apiKey)).statusCode).toBe(200);
    const [listed] = (await t.services.accounts.listKeysWithSpend('acme')).filter((k) => k.id === key.id);
    expect(listed?.spend).toEqual({ period: 'day', periodKey: '2026-11-29', credits: 1 });
  });

  it('caps a key per month and in total, and a cap set mid-month counts what the key spent this month', async () => {
    await t.account('acme', 100);
    const { key, apiKey } = await newKey('acme', 'staging');
    for (let i = 0; i < 2; i++) expect((await json('acme', apiKey)).statusCode).toBe(200);
    await t.services.accounts.updateKey('acme', key.id, { cap: { credits: 3, period: 'month' } });
    expect((await json('acme', apiKey)).statusCode).toBe(200);
    expect((await json('acme', apiKey)).statusCode).toBe(429);
    clock.set('2026-12-01T00:00:00.000Z');
    expect((await json('acme', apiKey)).statusCode).toBe(200);
    const { apiKey: once } = await newKey('acme', 'once', { cap: { credits: 1, period: 'total' } });
    expect((await json('acme', once)).statusCode).toBe(200);
    const total = await json('acme', once);
    expect(total.statusCode).toBe(429);
    expect(total.headers['retry-after']).toBeUndefined();
    expect(total.body).toBe('API key once has reached its cap of 1 credit in total');
    clock.set('2027-06-01T00:00:00.000Z');
    expect((await json('acme', once)).statusCode).toBe(429);
    // Cleared: the key spends freely again.
    const onceKey = await t.services.accounts.findKey('acme', 'once');
    await t.services.accounts.updateKey('acme', onceKey.id, { cap: null });
    expect((await json('acme', once)).statusCode).toBe(200);
  });

  it('never counts a lookup the balance did not cover against the key cap', async () => {
    await t.account('acme', 1);
    const { apiKey } = await newKey('acme', 'staging', { cap: { credits: 2, period: 'day' } });
    expect((await json('acme', apiKey)).statusCode).toBe(200);
    expect((await json('acme', apiKey)).statusCode).toBe(500);
    await t.services.accounts.grantCredits({ account: 'acme', amount: 5 });
    expect((await json('acme', apiKey)).statusCode).toBe(200);
    expect((await json('acme', apiKey)).statusCode).toBe(429);
  });

  it('charges exactly the cap when 50 lookups of a key capped at 10 race', async () => {
    await t.account('acme', 1000);
    const { apiKey } = await newKey('acme', 'staging', { cap: { credits: 10, period: 'month' } });
    const results = await Promise.all(Array.from({ length: 50 }, () => json('acme', apiKey)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(10);
    expect(results.filter((r) => r.statusCode === 429)).toHaveLength(40);
    expect((await t.services.accounts.show('acme')).credits).toBe(990);
    expect((await lookups('acme')).filter((r) => r.kind === 'debit')).toHaveLength(10);
  });

  it('records key creation and changes with their settings in the audit log, and refuses settings that cannot be rules', async () => {
    await t.account('acme', 10);
    const { key } = await newKey('acme', 'contractor', { operations: ['CheckUSA'], labels: { team: 'partners' } });
    await t.services.accounts.updateKey('acme', key.id, { cap: { credits: 500, period: 'month' }, operations: null });
    const rows = await t.services.audit.list({ target: 'acme', limit: 10 });
    const update = rows.find((r) => r.action === 'key.update');
    expect(update?.before).toMatchObject({ keyId: key.id, keyName: 'contractor', operations: ['CheckUSA'], cap: null, labels: { team: 'partners' } });
    expect(update?.after).toMatchObject({ keyId: key.id, operations: null, cap: { credits: 500, period: 'month' }, labels: { team: 'partners' } });
    expect(rows.find((r) => r.action === 'key.create')?.after).toMatchObject({ keyName: 'contractor', operations: ['CheckUSA'] });
    await expect(t.services.accounts.updateKey('acme', key.id, { operations: ['CheckNowhere'] })).rejects.toThrow(/unknown operation CheckNowhere/);
    await expect(t.services.accounts.updateKey('acme', key.id, { allowedIps: ['10.0.0.0/33'] })).rejects.toThrow(/not an IP address or CIDR block/);
    await expect(t.services.accounts.updateKey('acme', key.id, { cap: { credits: 0, period: 'day' } })).rejects.toThrow(/cap must be/);
  });

  it("raises the account's alert (webhook key.cap.warning at 80%, key.cap.reached at 100%) once each per period", async () => {
    await t.account('acme', 100);
    const owner = as(t, await customer(t, 'acme', 'olivia'));
    expect((await owner('POST', '/account/api/webhooks', { url: 'https://hooks.example.org/in' })).statusCode).toBe(201);
    const { key, apiKey } = await newKey('acme', 'staging', { cap: { credits: 5, period: 'day' } });
    const alerts = async () =>
      (await t.services.storage.db.selectFrom('webhook_messages').select(['event_type', 'payload']).where('event_type', 'like', 'key.cap.%').orderBy('created_at').execute()).map((m) => ({
        type: m.event_type,
        data: (JSON.parse(m.payload) as { data: Record<string, unknown> }).data,
      }));
    for (let i = 0; i < 3; i++) expect((await json('acme', apiKey)).statusCode).toBe(200);
    expect(await alerts()).toEqual([]);
    expect((await json('acme', apiKey)).statusCode).toBe(200);
    await until(async () => (await alerts()).length === 1);
    expect((await json('acme', apiKey)).statusCode).toBe(200);
    await until(async () => (await alerts()).length === 2);
    expect((await json('acme', apiKey)).statusCode).toBe(429);
    expect(await alerts()).toEqual([
      { type: 'key.cap.warning', data: { account: { id: expect.any(Number) as number, username: 'acme' }, key: { id: key.id, name: 'staging' }, cap: 5, period: 'day', periodKey: '2026-11-28', spent: 4, percent: 80 } },
      { type: 'key.cap.reached', data: expect.objectContaining({ key: { id: key.id, name: 'staging' }, spent: 5, percent: 100 }) as Record<string, unknown> },
    ]);
    // The next day counts again from 0: the marks fire again when reached again.
    clock.set('2026-11-29T08:00:00.000Z');
    for (let i = 0; i < 4; i++) expect((await json('acme', apiKey)).statusCode).toBe(200);
    await until(async () => (await alerts()).length === 3);
    expect((await alerts())[2]).toMatchObject({ type: 'key.cap.warning', data: { periodKey: '2026-11-29', spent: 4 } });
  });
});
