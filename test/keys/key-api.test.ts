import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { as, customer, FRANCE, operator } from '../admin/admin-harness.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const USA = { operation: 'CheckUSA', key: { RegistrationNumber: 'ABC1234', State: 'NJ' }, vehicle: { Description: '2004 Dodge Durango' } };

interface KeyBody {
  id: number;
  name: string;
  cap: { credits: number; period: string } | null;
  operations: string[] | null;
  perSecond: number | null;
  perDay: number | null;
  allowedIps: string[] | null;
  labels: Record<string, string>;
  spend?: { period: string; periodKey: string; credits: number };
}

/**
 * Issue 33 on the account API (a customer's own keys) and the admin API (any account's): a key is
 * made with its rules, changed later (null clears), listed with its spend, and its lookups are
 * found by key in the ledger and the usage.
 */
describe.each(await enginesToTest())('keys as products through the APIs on %s', (engine) => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp({}, undefined, engine);
    await t.importRecords([FRANCE, USA]);
  });
  afterEach(async () => t.close());

  it("makes, changes and lists a customer's keys with their rules and spend, and finds their lookups by key", async () => {
    await t.account('acme', 600);
    const owner = as(t, await customer(t, 'acme', 'olivia'));
    const staging = await owner('POST', '/account/api/keys', { name: 'staging', cap: { credits: 500, period: 'month' }, labels: { env: 'staging' } });
    expect(staging.statusCode, staging.body).toBe(201);
    const made = staging.json<{ key: KeyBody; apiKey: string }>();
    expect(made.key).toMatchObject({ name: 'staging', cap: { credits: 500, period: 'month' }, operations: null, perSecond: null, allowedIps: null, labels: { env: 'staging' } });
    const contractor = (await owner('POST', '/account/api/keys', { name: 'contractor', operations: ['CheckUSA'] })).json<{ key: KeyBody; apiKey: string }>();

    for (const [key, url] of [
      [made.apiKey, '/api/json.aspx/CheckFrance/EG258MA'],
      [made.apiKey, '/api/json.aspx/CheckFrance/EG258MA'],
      [contractor.apiKey, '/api/json.aspx/CheckUSA/ABC1234/NJ'],
    ] as const) {
      expect((await t.app.inject({ url, headers: { authorization: t.basic('acme', key) } })).statusCode).toBe(200);
    }
    const refused = await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('acme', contractor.apiKey) } });
    expect(refused.statusCode).toBe(403);

    const listed = (await owner('GET', '/account/api/keys')).json<{ keys: KeyBody[] }>().keys;
    const month = new Date().toISOString().slice(0, 7);
    expect(listed.find((k) => k.name === 'staging')?.spend).toEqual({ period: 'month', periodKey: month, credits: 2 });
    expect(listed.find((k) => k.name === 'contractor')?.spend).toEqual({ period: 'month', periodKey: month, credits: 1 });

    const ledger = (await owner('GET', '/account/api/ledger?key=staging')).json<{ rows: Array<{ key: string | null; keyId: number | null; operation: string }> }>().rows;
    expect(ledger).toHaveLength(2);
    expect(ledger.every((r) => r.key === 'staging' && r.keyId === made.key.id)).toBe(true);
    const csv = (await owner('GET', '/account/api/ledger.csv?key=contractor')).body;
    expect(csv.split('\r\n')[0]).toMatch(/,key,user$/);
    expect(csv).toContain(',contractor,');

    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 86_400_000).toISOString();
    const byKey = (await owner('GET', `/account/api/usage/keys?from=${from}&to=${to}`)).json<{ days: Array<{ key: string | null; lookups: number; credits: number }> }>().days;
    expect(byKey.map((d) => [d.key, d.lookups, d.credits]).sort()).toEqual([
      ['contractor', 1, 1],
      ['staging', 2, 2],
    ]);
    const oneKey = (await owner('GET', `/account/api/usage?from=${from}&to=${to}&key=contractor`)).json<{ days: Array<{ operation: string; lookups: number }> }>().days;
    expect(oneKey.map((d) => [d.operation, d.lookups])).toEqual([['CheckUSA', 1]]);

    const changed = await owner('PATCH', `/account/api/keys/${contractor.key.id}`, { operations: null, perSecond: 5, allowedIps: ['203.0.113.0/24'] });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json<{ key: KeyBody }>().key).toMatchObject({ operations: null, perSecond: 5, allowedIps: ['203.0.113.0/24'] });
    const bad = await owner('PATCH', `/account/api/keys/${contractor.key.id}`, { operations: ['CheckNowhere'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ message: string }>().message).toContain('unknown operation CheckNowhere');
    const unknownField = await owner('PATCH', `/account/api/keys/${contractor.key.id}`, { colour: 'red' });
    expect(unknownField.statusCode).toBe(400);
  });

  it("lets an operator set any account's key rules through the admin API, and a member only read them", async () => {
    await t.account('acme', 10);
    const admin = as(t, await operator(t, 'root'));
    const created = await admin('POST', '/admin/api/accounts/acme/keys', { name: 'contractor', operations: ['CheckUSA'], perDay: 100 });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ key: KeyBody }>().key.id;
    const patched = await admin('PATCH', `/admin/api/accounts/acme/keys/${id}`, { cap: { credits: 50, period: 'day' }, perDay: null });
    expect(patched.json<{ key: KeyBody }>().key).toMatchObject({ cap: { credits: 50, period: 'day' }, perDay: null, operations: ['CheckUSA'] });
    const audit = (await admin('GET', '/admin/api/audit?action=key.update')).json<{ rows: Array<{ actor: { name: string }; before: Record<string, unknown>; after: Record<string, unknown> }> }>().rows;
    expect(audit[0]).toMatchObject({ actor: { name: 'root' }, before: { perDay: 100, cap: null }, after: { perDay: null, cap: { credits: 50, period: 'day' } } });
    const member = as(t, await customer(t, 'acme', 'mo', 'member'));
    expect((await member('PATCH', `/account/api/keys/${id}`, { perDay: 1 })).statusCode).toBe(403);
    expect((await member('GET', '/account/api/keys')).json<{ keys: KeyBody[] }>().keys.find((k) => k.id === id)?.cap).toEqual({ credits: 50, period: 'day' });
  });
});
