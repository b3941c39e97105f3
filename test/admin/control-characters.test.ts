import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, customer, operator, type Login } from './admin-harness.js';

/**
 * Issue 23 finding 3: NUL and other control characters were stored raw, and on PostgreSQL (which
 * refuses NUL in text) any customer could cause a 500. One rule, in the schemas of every route:
 * no C0 control in a string, tab and newline only in notes and descriptions, no bidirectional
 * override in names.
 */
describe.each(await enginesToTest())('control characters in the APIs on %s', (engine) => {
  let t: TestApp;
  let root: Login;
  let owner: Login;

  beforeAll(async () => {
    t = await createTestApp({}, undefined, engine);
    root = await operator(t, 'root');
    await t.account('acme', 10);
    owner = await customer(t, 'acme', 'acme-owner');
  });
  afterAll(async () => t.close());

  const refused = (res: { statusCode: number; json: () => unknown }, what: string) => {
    expect(res.statusCode, what).toBe(400);
    expect(res.json(), what).toMatchObject({ error: 'invalid-request', message: expect.stringMatching(/control characters|bidirectional/) as unknown });
  };

  it('refuses NUL in every string query parameter of every read route of both APIs (never a 500)', async () => {
    const document = (await t.app.inject({ url: '/admin/api/openapi.json' })).json<{
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; schema: { type?: string; enum?: unknown; pattern?: string; format?: string } }> }>>;
    }>();
    let tried = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      const get = methods.get;
      if (!get) continue;
      const url = path.replace('{username}', 'acme').replace(/\{[a-z]+\}/gi, '1');
      for (const parameter of get.parameters ?? []) {
        const { type, enum: choices, format } = parameter.schema;
        if (parameter.in !== 'query' || type !== 'string' || choices !== undefined || format !== undefined) continue;
        const who = path.startsWith('/admin/') ? root : owner;
        const res = await as(t, who)('GET', `${url}?${parameter.name}=a%00b`);
        expect(res.statusCode, `${path}?${parameter.name}`).toBe(400);
        tried += 1;
      }
    }
    // The account ledger and its CSV, the admin ledger, accounts search, the audit filters...
    expect(tried).toBeGreaterThan(8);
    refused(await as(t, owner)('GET', '/account/api/ledger?operation=%00'), 'ledger');
    refused(await as(t, owner)('GET', '/account/api/ledger.csv?operation=a%00b'), 'ledger.csv');
  });

  it('refuses control characters in webhook URLs and descriptions, credit notes and references, and bidi overrides in names', async () => {
    refused(await as(t, owner)('POST', '/account/api/webhooks', { url: 'https://hooks.example.org/a\u0000', enabled: false }), 'url NUL');
    refused(await as(t, owner)('POST', '/account/api/webhooks', { url: 'https://hooks.example.org/a\nb', enabled: false }), 'url newline');
    refused(await as(t, owner)('POST', '/account/api/webhooks', { url: 'https://hooks.example.org/d', description: 'x\u0000y', enabled: false }), 'description');
    refused(await as(t, root)('POST', '/admin/api/accounts/acme/credits', { operation: 'grant', amount: 1, note: 'n\u0000' }), 'note');
    refused(await as(t, root)('POST', '/admin/api/accounts/acme/credits', { operation: 'grant', amount: 1, reference: 'INV\u00001' }), 'reference');
    refused(await as(t, root)('POST', '/admin/api/accounts/acme/credits', { operation: 'grant', amount: 1, reference: 'INV\t1' }), 'reference tab');
    refused(await as(t, root)('POST', '/admin/api/tokens', { name: 'deploy\u202Egnp.exe', scope: 'read' }), 'token name');
    refused(await as(t, owner)('POST', '/account/api/keys', { name: 'ci\u2066x' }), 'key name');
    refused(await as(t, root)('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['AB\u0000123'] }), 'plate');
    expect((await t.services.storage.db.selectFrom('ledger').select('id').where('kind', '=', 'topup').execute()).length).toBe(1);
  });

  it('keeps tab and newline in notes and descriptions, and stores a webhook URL normalised', async () => {
    const granted = await as(t, root)('POST', '/admin/api/accounts/acme/credits', { operation: 'grant', amount: 1, note: 'line one\nline two\tend' });
    expect(granted.statusCode, granted.body).toBe(200);
    const created = await as(t, owner)('POST', '/account/api/webhooks', { url: 'https://Hooks.EXAMPLE.org:443/in', description: 'first\nsecond', enabled: false });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ endpoint: { url: 'https://hooks.example.org/in', description: 'first\nsecond' } });
  });

  it('refuses NUL in console forms and query strings with a 400 page', async () => {
    const page = await t.app.inject({ url: '/console/account?operation=%00', headers: { cookie: owner.cookie } });
    expect(page.statusCode).toBe(400);
  });
});
