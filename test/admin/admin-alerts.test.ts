import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, customer, operator, PASSWORD, users } from './admin-harness.js';

/**
 * The alert and webhook routes (docs/webhooks.md) as the built app serves them: behind the admin
 * and account APIs' own logins, roles, token scopes and CSRF check.
 */
describe.each(ENGINES)('alert routes in the admin and account APIs on %s', (engine) => {
  let t: TestApp;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    // Private URLs allowed: the endpoints point at 127.0.0.1; the sweep never runs during a test.
    t = await createTestApp({ SEED_DEMO: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', CREDIT_ALERT_SWEEP_MS: '3600000' }, undefined, engine);
    await t.account('alice', 50);
    await t.account('bob', 50);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  it('lets a customer register an endpoint and set thresholds on its own account only', async () => {
    const alice = as(t, await customer(t, 'alice', 'alice-owner'));
    const created = await alice('POST', '/account/api/webhooks', { url: 'http://127.0.0.1:9/in' });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ endpoint: { id: number; accountId: number } }>().endpoint.id;
    expect(created.json<{ endpoint: { accountId: number } }>().endpoint.accountId).toBe((await t.services.accounts.show('alice')).id);
    const set = await alice('PUT', '/account/api/alerts', { thresholds: [10, 5] });
    expect(set.statusCode, set.body).toBe(200);
    expect((await alice('GET', '/account/api/alerts')).json()).toMatchObject({ thresholds: [10, 5] });

    // Bob's owner can neither see nor change Alice's endpoint, and his thresholds are his own.
    const bob = as(t, await customer(t, 'bob', 'bob-owner'));
    expect((await bob('GET', '/account/api/webhooks')).json()).toEqual({ endpoints: [] });
    expect((await bob('GET', `/account/api/webhooks/${id}`)).statusCode).toBe(404);
    expect((await bob('PATCH', `/account/api/webhooks/${id}`, { enabled: false })).statusCode).toBe(404);
    expect((await bob('DELETE', `/account/api/webhooks/${id}`)).statusCode).toBe(404);
    expect((await bob('GET', '/account/api/alerts')).json()).not.toMatchObject({ thresholds: [10, 5] });
    expect((await alice('GET', `/account/api/webhooks/${id}`)).json()).toMatchObject({ enabled: true });
  });

  it('lets a member read the alerts but not change them', async () => {
    const member = as(t, await customer(t, 'alice', 'alice-member', 'member'));
    expect((await member('GET', '/account/api/alerts')).statusCode).toBe(200);
    const refused = await member('POST', '/account/api/webhooks', { url: 'http://127.0.0.1:9/in' });
    expect(refused.statusCode).toBe(403);
    // Answered as the account API's other refusals are.
    expect(refused.json()).toMatchObject({ error: 'forbidden' });
  });

  it('refuses a cookie write without the CSRF token, and any route without a login', async () => {
    const alice = as(t, await customer(t, 'alice', 'alice-owner'));
    const noCsrf = await alice('POST', '/account/api/webhooks', { url: 'http://127.0.0.1:9/in' }, false);
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json()).toMatchObject({ error: 'csrf' });
    expect((await alice('GET', '/account/api/webhooks')).json()).toEqual({ endpoints: [] });
    const root = as(t, await operator(t, 'root'));
    expect((await root('POST', '/admin/api/webhooks', { url: 'http://127.0.0.1:9/op' }, false)).json()).toMatchObject({ error: 'csrf' });
    for (const url of ['/account/api/alerts', '/admin/api/webhooks']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(401);
      expect(res.json(), url).toMatchObject({ error: 'unauthorized' });
    }
    // A customer's session is not an operator's.
    expect((await alice('GET', '/admin/api/webhooks')).statusCode).toBe(403);
  });

  it('lets an admin change any account’s alerts and a viewer only read them', async () => {
    const root = as(t, await operator(t, 'root'));
    const created = await root('POST', '/admin/api/accounts/bob/webhooks', { url: 'http://127.0.0.1:9/bob' });
    expect(created.statusCode, created.body).toBe(201);
    const viewer = as(t, await operator(t, 'watcher', 'viewer'));
    expect((await viewer('GET', '/admin/api/accounts/bob/webhooks')).json()).toMatchObject({ endpoints: [{ url: 'http://127.0.0.1:9/bob' }] });
    const refused = await viewer('POST', '/admin/api/accounts/bob/webhooks', { url: 'http://127.0.0.1:9/x' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'forbidden' });
    expect((await viewer('PUT', '/admin/api/accounts/bob/alerts', { thresholds: [1] })).statusCode).toBe(403);
    expect((await viewer('POST', '/admin/api/webhooks', { url: 'http://127.0.0.1:9/x' })).statusCode).toBe(403);
  });

  it('names the account by its username, as every other operator route does, and answers 404 for an unknown one', async () => {
    const root = as(t, await operator(t, 'root'));
    const bobs = (await root('POST', '/admin/api/accounts/bob/webhooks', { url: 'http://127.0.0.1:9/bob' })).json<{ endpoint: { id: number; accountId: number } }>().endpoint;
    expect(bobs.accountId).toBe((await t.services.accounts.show('bob')).id);
    expect((await root('GET', `/admin/api/accounts/bob/webhooks/${bobs.id}`)).statusCode).toBe(200);
    // Bob's endpoint is not Alice's, whatever the id says.
    expect((await root('GET', `/admin/api/accounts/alice/webhooks/${bobs.id}`)).statusCode).toBe(404);
    expect((await root('DELETE', `/admin/api/accounts/alice/webhooks/${bobs.id}`)).statusCode).toBe(404);
    const unknown = await root('PUT', '/admin/api/accounts/nobody/alerts', { thresholds: [1] });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'not-found', message: 'no account named nobody' });
    // The account's numeric id is not a username.
    expect((await root('GET', `/admin/api/accounts/${bobs.accountId}/alerts`)).statusCode).toBe(404);
  });

  it('lets a read-scoped operator token read but not write, and a write-scoped one write', async () => {
    const { user, inviteToken } = await users(t).createOperator('robot', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    const read = await users(t).createToken(user, 'reader', 'read');
    const write = await users(t).createToken(user, 'writer', 'write');
    const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
    expect((await t.app.inject({ url: '/admin/api/webhooks', headers: bearer(read.secret) })).statusCode).toBe(200);
    const refused = await t.app.inject({ method: 'POST', url: '/admin/api/webhooks', headers: bearer(read.secret), payload: { url: 'http://127.0.0.1:9/x' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'forbidden' });
    const done = await t.app.inject({ method: 'POST', url: '/admin/api/webhooks', headers: bearer(write.secret), payload: { url: 'http://127.0.0.1:9/x' } });
    expect(done.statusCode, done.body).toBe(201);
  });

  it('appears in the OpenAPI document of both APIs', async () => {
    const doc = (await t.app.inject({ url: '/admin/api/openapi.json' })).json<{ paths: Record<string, Record<string, { tags?: string[]; summary?: string }>> }>();
    for (const path of ['/account/api/alerts', '/account/api/webhooks/{id}/rotate-secret', '/admin/api/accounts/{username}/alerts', '/admin/api/accounts/{username}/webhooks/{id}', '/admin/api/webhooks']) {
      expect(Object.keys(doc.paths), path).toContain(path);
    }
    expect(doc.paths['/account/api/alerts']?.put).toMatchObject({ tags: ['account: alerts'], summary: expect.stringContaining('thresholds') as unknown });
    expect(doc.paths['/admin/api/webhooks/{id}']?.patch?.tags).toEqual(['admin: alerts']);
  });
});
