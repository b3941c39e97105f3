import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, installErrorHandling } from '../../src/http/auth/api-auth.js';
import { accountAlertsRoutes, operatorAlertsRoutes } from '../../src/http/api/alerts.routes.js';
import type { Actor } from '../../src/audit/audit-log.js';
import { FakeHttpServer } from '../fakes/fake-http-server.js';
import { enginesToTest, type TestEngine } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { verifyStandardWebhook } from './standard-webhooks-verifier.js';
import { until } from '../helpers/until.js';

/** A refusal as the real guards throw it. */
function refuse(statusCode: 401 | 403, message: string): Error {
  return new ApiError(statusCode, statusCode === 401 ? 'unauthorized' : 'forbidden', message);
}

/**
 * Stand-in authorisers, for tests only: `x-test-account: <id>` is a logged-in customer of that
 * account; `x-test-operator: admin|viewer` an operator (viewers may only read).
 */
function standInAccount(request: FastifyRequest): Promise<number> {
  const id = Number(request.headers['x-test-account']);
  return Number.isInteger(id) && id > 0 ? Promise.resolve(id) : Promise.reject(refuse(401, 'log in first'));
}
function standInOperator(request: FastifyRequest, access: 'read' | 'write'): Promise<void> {
  const role = request.headers['x-test-operator'];
  if (role !== 'admin' && role !== 'viewer') return Promise.reject(refuse(401, 'log in first'));
  if (access === 'write' && role !== 'admin') return Promise.reject(refuse(403, 'viewers may only read'));
  return Promise.resolve();
}

/** The audit log's actor for a stand-in caller. */
function standInActor(request: FastifyRequest): Actor {
  return request.headers['x-test-operator'] === undefined ? { kind: 'customer', name: `customer-of-${String(request.headers['x-test-account'])}` } : { kind: 'operator', name: 'stand-in-operator' };
}

/** The account id of a username, as the admin API resolves it. */
function accountIdOf(t: TestApp): (username: string) => Promise<number | undefined> {
  return async (username) => (await t.services.storage.db.selectFrom('accounts').select('id').where('username', '=', username).executeTakeFirst())?.id;
}

interface Json {
  [key: string]: unknown;
}

describe.each(await enginesToTest())('alert and webhook routes on %s', (engine: TestEngine) => {
  let t: TestApp;
  let api: FastifyInstance;
  let base: string;
  let receiver: FakeHttpServer;
  let alice: number;
  let bob: number;

  beforeEach(async () => {
    receiver = await FakeHttpServer.start(() => ({ status: 200, text: 'ok' }));
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_MS: '20', CREDIT_ALERT_SWEEP_MS: '3600000' }, undefined, engine);
    await t.account('alice', 50);
    await t.account('bob', 50);
    alice = (await t.services.accounts.show('alice')).id;
    bob = (await t.services.accounts.show('bob')).id;
    api = Fastify();
    // The plugins have no error handler of their own: the enclosing API's answers their errors.
    installErrorHandling(api, '');
    await api.register(accountAlertsRoutes, { prefix: '/account/api', alerting: t.services.alerting, actorOf: standInActor, resolveAccountId: standInAccount });
    await api.register(operatorAlertsRoutes, { prefix: '/admin/api', alerting: t.services.alerting, actorOf: standInActor, authorise: standInOperator, accountIdOf: accountIdOf(t) });
    base = await api.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    await api.close();
    await t.close();
    await receiver.close();
  });

  async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: Json }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Json) };
  }
  const as = (id: number): Record<string, string> => ({ 'x-test-account': String(id) });
  const admin = { 'x-test-operator': 'admin' };
  const viewer = { 'x-test-operator': 'viewer' };

  it('registers, lists, shows, changes and deletes an account’s endpoint, showing the secret only once', async () => {
    const created = await call('POST', '/account/api/webhooks', as(alice), { url: `${receiver.url}/in`, description: 'billing' });
    expect(created.status).toBe(201);
    expect(created.json.secret).toMatch(/^whsec_/);
    const endpoint = created.json.endpoint as Json;
    expect(endpoint).toMatchObject({ accountId: alice, url: `${receiver.url}/in`, description: 'billing', enabled: true, events: ['credits.low', 'credits.depleted', 'key.cap.warning', 'key.cap.reached'], createdBy: 'account' });
    expect(JSON.stringify(endpoint)).not.toContain('whsec_');

    const listed = await call('GET', '/account/api/webhooks', as(alice));
    expect(listed.status).toBe(200);
    expect(listed.json.endpoints).toHaveLength(1);
    expect(JSON.stringify(listed.json)).not.toContain('whsec_');
    expect((await call('GET', `/account/api/webhooks/${String(endpoint.id)}`, as(alice))).json).toMatchObject({ id: endpoint.id });

    const changed = await call('PATCH', `/account/api/webhooks/${String(endpoint.id)}`, as(alice), { enabled: false, events: ['credits.depleted'] });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ enabled: false, events: ['credits.depleted'] });

    expect((await call('DELETE', `/account/api/webhooks/${String(endpoint.id)}`, as(alice))).status).toBe(204);
    expect((await call('GET', `/account/api/webhooks/${String(endpoint.id)}`, as(alice))).status).toBe(404);
  });

  it('test-sends through the outbox, logs the delivery, and rotates the secret with a grace period', async () => {
    const created = await call('POST', '/account/api/webhooks', as(alice), { url: `${receiver.url}/in` });
    const id = String((created.json.endpoint as Json).id);
    const rotated = await call('POST', `/account/api/webhooks/${id}/rotate-secret`, as(alice), { graceSeconds: 600 });
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).not.toBe(created.json.secret);

    const sent = await call('POST', `/account/api/webhooks/${id}/test`, as(alice));
    expect(sent.status).toBe(202);
    expect((sent.json.message as Json).eventType).toBe('test');
    let deliveries: Json[] = [];
    await until(async () => {
      deliveries = (await call('GET', `/account/api/webhooks/${id}/deliveries`, as(alice))).json.deliveries as Json[];
      return deliveries.length > 0;
    }, 20);
    expect(deliveries).toMatchObject([{ attempt: 1, statusCode: 200, succeeded: true, error: null, responseBody: 'ok' }]);
    const request = receiver.requests[0];
    expect(verifyStandardWebhook([String(rotated.json.secret), String(created.json.secret)], request?.headers ?? {}, request?.body ?? '')).toEqual([0, 1]);
    const messages = (await call('GET', `/account/api/webhooks/${id}/messages?limit=5`, as(alice))).json.messages as Json[];
    expect(messages).toMatchObject([{ eventType: 'test', status: 'delivered', attempts: 1, payload: { type: 'test' } }]);

    // Resend: the same message (id, payload) once more, freshly signed, logged as its attempt 2.
    const messageId = String(messages[0]?.id);
    const resent = await call('POST', `/account/api/webhooks/${id}/messages/${messageId}/resend`, as(alice));
    expect(resent).toMatchObject({ status: 202, json: { message: { id: messageId, eventType: 'test', status: 'pending' } } });
    await until(async () => ((await call('GET', `/account/api/webhooks/${id}/deliveries`, as(alice))).json.deliveries as Json[]).length === 2, 20);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1]?.headers['webhook-id']).toBe(messageId);
    expect(receiver.requests[1]?.body).toBe(request?.body);
    expect((await call('GET', `/account/api/webhooks/${id}/messages`, as(alice))).json.messages).toMatchObject([{ id: messageId, status: 'delivered', attempts: 2 }]);
    expect(await call('POST', `/account/api/webhooks/${id}/messages/msg_unknown/resend`, as(alice))).toMatchObject({ status: 404, json: { error: 'not-found' } });
    expect(await call('POST', `/account/api/webhooks/${id}/messages/not-a-message/resend`, as(alice))).toMatchObject({ status: 400, json: { field: 'messageId' } });
    const audited = await t.services.audit.list({ action: 'webhook.resend', limit: 5 });
    expect(audited.map((r) => [r.actor.name, r.after])).toEqual([[`customer-of-${alice}`, { endpointId: Number(id), messageId }]]);
  });

  it('shows and sets the account’s thresholds, and goes back to the server default', async () => {
    expect((await call('GET', '/account/api/alerts', as(alice))).json).toEqual({ thresholds: [100, 20, 0], custom: false, fired: [] });
    const set = await call('PUT', '/account/api/alerts', as(alice), { thresholds: [5, 500, 50] });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ thresholds: [500, 50, 5], custom: true, fired: [] });
    expect((await call('GET', '/account/api/alerts', as(bob))).json).toMatchObject({ thresholds: [100, 20, 0], custom: false });
    expect((await call('PUT', '/account/api/alerts', as(alice), { thresholds: null })).json).toMatchObject({ thresholds: [100, 20, 0], custom: false });
  });

  it('answers 400 naming the field for bad input and refuses unknown fields', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/account/api/webhooks', { description: 'x' }, 'url'],
      ['POST', '/account/api/webhooks', { url: `${receiver.url}/in`, colour: 'red' }, 'colour'],
      ['POST', '/account/api/webhooks', { url: `${receiver.url}/in`, events: ['credits.high'] }, 'events.0'],
      ['POST', '/account/api/webhooks', { url: `${receiver.url}/in`, enabled: 'maybe' }, 'enabled'],
      ['PUT', '/account/api/alerts', { thresholds: [-1] }, 'thresholds.0'],
      ['PUT', '/account/api/alerts', { thresholds: [1], extra: 1 }, 'extra'],
      ['PUT', '/account/api/alerts', {}, 'thresholds'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await call(method, path, as(alice), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json, JSON.stringify(body)).toMatchObject({ error: 'invalid-request', field });
    }
    const badUrl = await call('POST', '/account/api/webhooks', as(alice), { url: 'ftp://example.com/' });
    expect(badUrl).toMatchObject({ status: 400, json: { error: 'invalid-request', message: 'url must use http or https' } });
    const badId = await call('GET', '/account/api/webhooks/abc', as(alice));
    expect(badId).toMatchObject({ status: 400, json: { error: 'invalid-request', field: 'id' } });
    const badGrace = await call('POST', '/account/api/webhooks/1/rotate-secret', as(alice), { graceSeconds: -5 });
    expect(badGrace).toMatchObject({ status: 400, json: { error: 'invalid-request', field: 'graceSeconds' } });
    expect(await t.services.alerting.webhooks.list({ actor: 'account', accountId: alice })).toHaveLength(0);
  });

  it('refuses requests the authoriser refuses, in JSON', async () => {
    expect(await call('GET', '/account/api/webhooks', {})).toMatchObject({ status: 401, json: { error: 'unauthorized', message: 'log in first' } });
    expect(await call('GET', '/admin/api/webhooks', {})).toMatchObject({ status: 401 });
    expect(await call('POST', '/admin/api/webhooks', viewer, { url: `${receiver.url}/op` })).toMatchObject({ status: 403, json: { error: 'forbidden', message: 'viewers may only read' } });
    expect(await call('POST', '/admin/api/webhooks/1/messages/msg_AAAAAAAAAAAAAAAAAAAAAA/resend', viewer)).toMatchObject({ status: 403, json: { error: 'forbidden' } });
    expect(await call('GET', '/admin/api/webhooks', viewer)).toMatchObject({ status: 200, json: { endpoints: [] } });
  });

  it('never lets one account read or change another account’s endpoints, thresholds or log', async () => {
    const created = await call('POST', '/account/api/webhooks', as(alice), { url: `${receiver.url}/alice` });
    const id = String((created.json.endpoint as Json).id);
    expect((await call('GET', '/account/api/webhooks', as(bob))).json.endpoints).toEqual([]);
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/account/api/webhooks/${id}`],
      ['PATCH', `/account/api/webhooks/${id}`, { url: `${receiver.url}/bob` }],
      ['DELETE', `/account/api/webhooks/${id}`],
      ['POST', `/account/api/webhooks/${id}/rotate-secret`, {}],
      ['POST', `/account/api/webhooks/${id}/test`],
      ['GET', `/account/api/webhooks/${id}/deliveries`],
      ['GET', `/account/api/webhooks/${id}/messages`],
      ['POST', `/account/api/webhooks/${id}/messages/msg_AAAAAAAAAAAAAAAAAAAAAA/resend`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(method, path, as(bob), body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json, `${method} ${path}`).toEqual({ error: 'not-found', message: `no webhook endpoint ${id}` });
    }
    // Alice's endpoint is as she left it, and nothing was sent to it.
    expect((await call('GET', `/account/api/webhooks/${id}`, as(alice))).json).toMatchObject({ url: `${receiver.url}/alice`, previousSecretUntil: null });
    expect(await t.services.alerting.webhooks.messages({ actor: 'account', accountId: alice }, Number(id))).toEqual([]);
    // An operator endpoint is not reachable through an account's routes either.
    const operator = await call('POST', '/admin/api/webhooks', admin, { url: `${receiver.url}/op` });
    expect((await call('GET', `/account/api/webhooks/${String((operator.json.endpoint as Json).id)}`, as(alice))).status).toBe(404);
  });

  it('lets an operator manage an account’s thresholds and endpoints, and its own endpoints for every account', async () => {
    const forAlice = await call('POST', '/admin/api/accounts/alice/webhooks', admin, { url: `${receiver.url}/for-alice` });
    expect(forAlice.status).toBe(201);
    expect(forAlice.json.endpoint).toMatchObject({ accountId: alice, createdBy: 'operator' });
    expect((await call('GET', '/account/api/webhooks', as(alice))).json.endpoints).toHaveLength(1);
    expect((await call('PUT', '/admin/api/accounts/alice/alerts', admin, { thresholds: [10] })).json).toMatchObject({ thresholds: [10], custom: true });
    expect((await call('GET', '/admin/api/accounts/alice/alerts', viewer)).json).toMatchObject({ thresholds: [10] });
    expect(await call('GET', '/admin/api/accounts/nobody/alerts', admin)).toMatchObject({ status: 404, json: { error: 'not-found' } });
    expect(await call('POST', '/admin/api/accounts/nobody/webhooks', admin, { url: `${receiver.url}/x` })).toMatchObject({ status: 404, json: { error: 'not-found', message: 'no account named nobody' } });
    // Accounts are named as on every other operator route: an id in their place is no username.
    expect(await call('GET', `/admin/api/accounts/${alice}/alerts`, admin)).toMatchObject({ status: 404, json: { error: 'not-found', message: `no account named ${alice}` } });
    expect(await call('GET', '/admin/api/accounts/not%20a%20name/alerts', admin)).toMatchObject({ status: 400, json: { error: 'invalid-request', field: 'username' } });
    const own = await call('POST', '/admin/api/webhooks', admin, { url: `${receiver.url}/op` });
    expect(own.json.endpoint).toMatchObject({ accountId: null, createdBy: 'operator' });
    expect((await call('GET', '/admin/api/webhooks', viewer)).json.endpoints).toHaveLength(1);
    // The operator's own endpoint is not one of Alice's.
    expect((await call('GET', `/admin/api/accounts/alice/webhooks/${String((own.json.endpoint as Json).id)}`, admin)).status).toBe(404);
  });
});
