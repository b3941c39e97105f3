import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, customer, operator, type Login } from './admin-harness.js';

interface Operation {
  responses: Record<string, unknown>;
}
type Paths = Record<string, Record<string, Operation>>;

/** The one success status the document gives an operation. */
function successOf(paths: Paths, method: string, path: string): number {
  const operation = paths[path]?.[method.toLowerCase()];
  if (operation === undefined) throw new Error(`the document has no ${method} ${path}`);
  const successes = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
  expect(successes, `${method} ${path}`).toHaveLength(1);
  return Number(successes[0]);
}

/**
 * The admin OpenAPI document says what the wire does: each route that answers something other
 * than 200 on success (creates, accepted jobs, deletions without content) is called for real here
 * and its status compared with the document's, and the collisions it declares (409) happen.
 */
describe.each(await enginesToTest())('the admin and account OpenAPI document’s statuses on %s', (engine) => {
  let t: TestApp;
  let root: Login;
  let owner: Login;
  let paths: Paths;

  beforeEach(async () => {
    t = await createTestApp(await engineEnv(engine, { SEED_DEMO: 'false', SIGNUP_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_MS: '600000', CREDIT_ALERT_SWEEP_MS: '3600000' }), undefined, engine);
    await t.account('alice', 50);
    root = await operator(t, 'root');
    owner = await customer(t, 'alice', 'alice-owner');
    paths = (await t.app.inject({ url: '/admin/api/openapi.json' })).json<{ paths: Paths }>().paths;
  });
  afterEach(async () => {
    await t.close();
  });

  it('gives every route that does not answer 200 the status it answers, as calling it shows', async () => {
    const operatorCall = as(t, root);
    const customerCall = as(t, owner);
    const checked = new Set<string>();
    const check = async (method: 'POST' | 'DELETE', path: string, call: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> => {
      const res = await call();
      expect(res.statusCode, `${method} ${path}: ${res.body}`).toBeLessThan(300);
      expect(res.statusCode, `${method} ${path}`).toBe(successOf(paths, method, path));
      checked.add(`${method} ${path}`);
      return res;
    };
    const url = 'http://127.0.0.1:9/hook';

    await check('POST', '/admin/api/accounts', () => operatorCall('POST', '/admin/api/accounts', { username: 'bob', credits: 5 }));
    await check('POST', '/admin/api/accounts/{username}/keys', () => operatorCall('POST', '/admin/api/accounts/bob/keys', { name: 'second' }));
    await check('POST', '/admin/api/accounts/{username}/users', () => operatorCall('POST', '/admin/api/accounts/bob/users', { name: 'bob-owner', role: 'owner' }));
    await check('POST', '/admin/api/tokens', () => operatorCall('POST', '/admin/api/tokens', { name: 'ci', scope: 'read' }));
    await check('POST', '/admin/api/test-plates', () => operatorCall('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['AB123CD'] }));
    await check('POST', '/account/api/keys', () => customerCall('POST', '/account/api/keys', { name: 'mine' }));
    await check('POST', '/account/api/signup', () => t.app.inject({ method: 'POST', url: '/account/api/signup', payload: { username: 'carol', password: 'a long enough password' } }));

    for (const [call, base] of [
      [operatorCall, '/admin/api'],
      [operatorCall, '/admin/api/accounts/{username}'],
      [customerCall, '/account/api'],
    ] as const) {
      const real = base.replace('{username}', 'alice');
      const created = await check('POST', `${base}/webhooks`, () => call('POST', `${real}/webhooks`, { url }));
      const id = created.json<{ endpoint: { id: number } }>().endpoint.id;
      const sent = (await check('POST', `${base}/webhooks/{id}/test`, () => call('POST', `${real}/webhooks/${id}/test`))).json<{ message: { id: string } }>().message.id;
      await t.services.alerting.dispatcher.drain(); // no attempt in flight: a resend is not refused
      await check('POST', `${base}/webhooks/{id}/messages/{messageId}/resend`, () => call('POST', `${real}/webhooks/${id}/messages/${sent}/resend`));
      await check('DELETE', `${base}/webhooks/{id}`, () => call('DELETE', `${real}/webhooks/${id}`));
    }

    // Every operation the document gives a success other than 200 was called above (the upload of
    // an import, 202, has its own suite: test/admin/admin-imports.test.ts checks its 202).
    const notOk = Object.entries(paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([method]) => successOf(paths, method, path) !== 200)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(notOk.filter((operation) => !checked.has(operation))).toEqual(['POST /admin/api/imports']);
  });

  it('lists 409 for the creates that can collide, and they do', async () => {
    const operatorCall = as(t, root);
    const collide = async (path: string, call: () => Promise<LightMyRequestResponse>): Promise<void> => {
      const res = await call();
      expect(res.statusCode, `${path}: ${res.body}`).toBe(409);
      expect(res.json(), path).toMatchObject({ error: 'already-exists' });
      expect(Object.keys(paths[path]?.post?.responses ?? {}), path).toContain('409');
    };
    await collide('/admin/api/accounts', () => operatorCall('POST', '/admin/api/accounts', { username: 'alice' }));
    await collide('/admin/api/accounts/{username}/users', () => operatorCall('POST', '/admin/api/accounts/alice/users', { name: 'alice-owner', role: 'member' }));
    await collide('/account/api/signup', () => t.app.inject({ method: 'POST', url: '/account/api/signup', payload: { username: 'alice', password: 'a long enough password' } }));
    // A removal of more credits than the balance is the other 409 of the API.
    const removal = await operatorCall('POST', '/admin/api/accounts/alice/credits', { operation: 'remove', amount: 51 });
    expect(removal.statusCode).toBe(409);
    expect(Object.keys(paths['/admin/api/accounts/{username}/credits']?.post?.responses ?? {})).toContain('409');
    // A route that names nothing in its path and collides with nothing lists neither 404 nor 409;
    // a body over the limit (413) or in another media type (415) is refused before its handler.
    expect(Object.keys(paths['/admin/api/tokens']?.post?.responses ?? {})).toEqual(['201', '400', '401', '403', '413', '415', '429']);
    // Public routes are not refused for a missing login; login answers 401 for a wrong password.
    expect(Object.keys(paths['/admin/api/login']?.post?.responses ?? {})).toEqual(['200', '400', '401', '413', '415', '429']);
    expect((await t.app.inject({ method: 'POST', url: '/admin/api/login', payload: { username: 'root', password: 'wrong' } })).statusCode).toBe(401);
  });
});
