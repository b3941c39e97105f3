import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, customer, operator, type Login } from './admin-harness.js';

/** Issue 23 finding 2: an account with webhook endpoints or its own thresholds could not be deleted (a foreign-key 500). */
describe.each(await enginesToTest())('deleting an account on %s', (engine) => {
  let t: TestApp;
  let root: Login;

  beforeAll(async () => {
    t = await createTestApp({}, undefined, engine);
    root = await operator(t, 'root');
  });
  afterAll(async () => t.close());

  it('deletes an account without a ledger together with its endpoints, thresholds and users, in one audited change', async () => {
    expect((await as(t, root)('POST', '/admin/api/accounts', { username: 'delX' })).statusCode).toBe(201);
    // What a customer invited to the empty account can add on its own.
    const owner = await customer(t, 'delX', 'delx-owner');
    expect((await as(t, owner)('POST', '/account/api/webhooks', { url: 'https://hooks.example.org/d', enabled: false })).statusCode).toBe(201);
    expect((await as(t, owner)('PUT', '/account/api/alerts', { thresholds: [5] })).statusCode).toBe(200);
    const { id } = await t.services.accounts.show('delX');

    const deleted = await as(t, root)('DELETE', '/admin/api/accounts/delX');
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ username: 'delX', outcome: 'deleted' });

    const db = t.services.storage.db;
    expect(await db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', id).execute()).toEqual([]);
    expect(await db.selectFrom('credit_alert_settings').selectAll().where('account_id', '=', id).execute()).toEqual([]);
    expect(await db.selectFrom('users').selectAll().where('account_id', '=', id).execute()).toEqual([]);
    const audit = await db.selectFrom('audit_log').select(['before']).where('action', '=', 'account.delete').where('target', '=', 'delX').executeTakeFirstOrThrow();
    expect(JSON.parse(audit.before ?? '{}')).toMatchObject({ removed: { users: ['delx-owner'], keys: 1, alertThresholds: true } });
    expect((JSON.parse(audit.before ?? '{}') as { removed: { webhookEndpoints: number[] } }).removed.webhookEndpoints).toHaveLength(1);
    expect((await as(t, root)('GET', '/admin/api/accounts/delX')).statusCode).toBe(404);
  });
});
