import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, login, operator, PASSWORD, users, type Login } from './admin-harness.js';

/** Every operation of the served document: method, a concrete path, whether it is public. */
interface Operation {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly url: string;
  readonly public: boolean;
}

async function operations(t: TestApp): Promise<Operation[]> {
  const document = (await t.app.inject({ url: '/admin/api/openapi.json' })).json<{ paths: Record<string, Record<string, { security: unknown[] }>> }>();
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase() as Operation['method'],
      path,
      url: path.replace('{username}', 'holder').replace(/\{[a-z]+\}/gi, '1'),
      public: operation.security.length === 0,
    })),
  );
}

/** Routes a user reaches before it changed its one-time password (the password change and logout). */
const OWN_SESSION = new Set(['/me/password', '/logout', '/logout-everywhere']);
const isOwnSession = (path: string): boolean => OWN_SESSION.has(path.replace(/^\/(admin|account)\/api/, ''));

const auditRows = async (t: TestApp): Promise<number> =>
  Number((await t.services.storage.db.selectFrom('audit_log').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe.each(await enginesToTest())('API access rules on %s (issue 23 findings 1, 4, 6, 7)', (engine) => {
  let t: TestApp;
  let root: Login;
  let ops: Operation[];

  beforeAll(async () => {
    t = await createTestApp({}, undefined, engine);
    root = await operator(t, 'root');
    await t.account('holder', 5);
    ops = await operations(t);
  });
  afterAll(async () => t.close());

  it('a read-scope operator token changes nothing: every write route of the admin API answers 403 before reading its body', async () => {
    const created = await as(t, root)('POST', '/admin/api/tokens', { name: 'reader', scope: 'read' });
    const token = created.json<{ secret: string }>().secret;
    const writes = ops.filter((op) => op.path.startsWith('/admin/') && !op.public && op.method !== 'GET');
    expect(writes.length).toBeGreaterThan(20);
    const before = await auditRows(t);
    for (const op of writes) {
      const res = await t.app.inject({ method: op.method, url: op.url, headers: { authorization: `Bearer ${token}` }, payload: {} });
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(403);
      expect(res.json(), `${op.method} ${op.path}`).toMatchObject({ error: 'forbidden' });
    }
    expect(await auditRows(t)).toBe(before);
    // The admin's session survived the read token's logout-everywhere.
    expect((await as(t, root)('GET', '/admin/api/me')).statusCode).toBe(200);
  });

  it('a one-time password reaches only the password change and logout, on every route of both APIs', async () => {
    const { password } = await users(t).createOperator('fresh', 'admin', false);
    const fresh = await login(t, 'admin', 'fresh', password);
    const guarded = ops.filter((op) => op.path.startsWith('/admin/') && !op.public && !isOwnSession(op.path));
    for (const op of guarded) {
      const res = await as(t, fresh)(op.method, op.url, op.method === 'GET' ? undefined : {});
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(403);
      expect(res.json(), `${op.method} ${op.path}`).toMatchObject({ error: 'password-change-required' });
    }
    const { inviteToken } = await users(t).createCustomer('holder', 'owner1', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    await t.services.storage.db.updateTable('users').set({ must_change_password: 1 }).where('name', '=', 'owner1').execute();
    const owner = await login(t, 'account', 'owner1');
    for (const op of ops.filter((o) => o.path.startsWith('/account/') && !o.public && !isOwnSession(o.path))) {
      const res = await as(t, owner)(op.method, op.url, op.method === 'GET' ? undefined : {});
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(403);
    }
    expect((await as(t, fresh)('POST', '/admin/api/me/password', { currentPassword: password, newPassword: 'a much better password' })).statusCode).toBe(200);
    expect((await as(t, fresh)('GET', '/admin/api/accounts')).statusCode).toBe(200);
  });

  it('a viewer may still log itself out everywhere: a session acts on itself', async () => {
    const viewer = await operator(t, 'watcher', 'viewer');
    expect((await as(t, viewer)('POST', '/admin/api/logout-everywhere')).json()).toEqual({ sessionsEnded: 1 });
  });

  it('requests with made-up session cookies or tokens count against the address: the 601st in a minute is refused', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 601; i++) {
      const headers = i % 2 === 0 ? { cookie: `vl_session=${randomBytes(32).toString('base64url')}` } : { authorization: `Bearer vlop_${randomBytes(32).toString('base64url')}` };
      statuses.push((await t.app.inject({ url: '/admin/api/me', headers, remoteAddress: '203.0.113.9' })).statusCode);
    }
    expect(statuses.slice(0, 600).every((s) => s === 401)).toBe(true);
    expect(statuses[600]).toBe(429);
    // Another address is not affected, nor is a signed-in caller from that one.
    expect((await t.app.inject({ url: '/admin/api/me', headers: { cookie: root.cookie } })).statusCode).toBe(200);
  });

  it('every answer of both APIs is Cache-Control: no-store, the webhook secret create and rotation included', async () => {
    const created = await as(t, root)('POST', '/admin/api/accounts/holder/webhooks', { url: 'https://hooks.example.org/nostore', enabled: false });
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const id = created.json<{ endpoint: { id: number } }>().endpoint.id;
    const rotated = await as(t, root)('POST', `/admin/api/accounts/holder/webhooks/${id}/rotate-secret`, {});
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const me = await as(t, root)('GET', '/admin/api/me');
    expect(me.json()).toHaveProperty('csrfToken');
    expect(me.headers['cache-control']).toBe('no-store');
  });
});
