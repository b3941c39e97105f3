import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli } from '../cli/cli-harness.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, customer, FRANCE, login, operator, PASSWORD, users } from './admin-harness.js';

const STACK_FRAME = /\bat\s+\S+\s+\(|node_modules|\.ts:\d+/;

describe.each(ENGINES)('admin API on %s', (engine) => {
  let t: TestApp;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    t = await createTestApp({}, undefined, engine);
    await t.importRecords([FRANCE]);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  const lookup = (username: string, key: string) => t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic(username, key) } });

  it('refuses every route without a login, in JSON, and unknown routes with a JSON 404', async () => {
    for (const url of ['/admin/api/accounts', '/admin/api/audit', '/admin/api/me', '/account/api/account', '/account/api/ledger']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(401);
      expect(res.json(), url).toMatchObject({ error: 'unauthorized' });
    }
    const missing = await t.app.inject({ url: '/admin/api/nothing-here' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'not-found' });
  });

  it('logs in with the invited password, sets an HttpOnly SameSite=Lax cookie, and throttles failed logins per user', async () => {
    await operator(t, 'root');
    const ok = await t.app.inject({ method: 'POST', url: '/admin/api/login', payload: { username: 'root', password: PASSWORD } });
    expect(ok.statusCode).toBe(200);
    expect(String(ok.headers['set-cookie'])).toMatch(/^vl_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    const https = await t.app.inject({ method: 'POST', url: '/admin/api/login', headers: { 'x-forwarded-proto': 'https' }, payload: { username: 'root', password: PASSWORD } });
    expect(https.statusCode).toBe(200);
    for (let i = 0; i < 5; i++) {
      const wrong = await t.app.inject({ method: 'POST', url: '/admin/api/login', payload: { username: 'root', password: 'wrong password!' } });
      expect(wrong.statusCode).toBe(401);
    }
    const throttled = await t.app.inject({ method: 'POST', url: '/admin/api/login', payload: { username: 'root', password: PASSWORD } });
    expect(throttled.statusCode).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('requires the CSRF header on cookie writes, and "log out everywhere" ends every session at once', async () => {
    const root = await operator(t, 'root');
    const second = await login(t, 'admin', 'root');
    const noCsrf = await as(t, root)('POST', '/admin/api/accounts', { username: 'acme' }, false);
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json()).toMatchObject({ error: 'csrf' });
    expect((await as(t, root)('POST', '/admin/api/accounts', { username: 'acme' })).statusCode).toBe(201);
    expect((await as(t, second)('POST', '/admin/api/logout-everywhere')).json()).toEqual({ sessionsEnded: 2 });
    expect((await as(t, root)('GET', '/admin/api/me')).statusCode).toBe(401);
  });

  it('lets a viewer read but not change, and an operator with a one-time password change nothing before changing it', async () => {
    const viewer = await operator(t, 'watcher', 'viewer');
    expect((await as(t, viewer)('GET', '/admin/api/accounts')).statusCode).toBe(200);
    const refused = await as(t, viewer)('POST', '/admin/api/accounts', { username: 'acme' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'forbidden' });

    const { password } = await users(t).createOperator('fresh', 'admin', false);
    const fresh = await login(t, 'admin', 'fresh', password);
    expect((await as(t, fresh)('POST', '/admin/api/accounts', { username: 'acme' })).json()).toMatchObject({ error: 'password-change-required' });
    expect((await as(t, fresh)('POST', '/admin/api/me/password', { currentPassword: password, newPassword: 'a much better password' })).statusCode).toBe(200);
    expect((await as(t, fresh)('POST', '/admin/api/accounts', { username: 'acme' })).statusCode).toBe(201);
  });

  it('accepts operator tokens by scope, refuses them once revoked and on the customer API', async () => {
    const root = await operator(t, 'root');
    const make = async (scope: string) => (await as(t, root)('POST', '/admin/api/tokens', { name: `ci ${scope}`, scope })).json<{ token: { id: number }; secret: string }>();
    const read = await make('read');
    const write = await make('write');
    const bearer = (secret: string, method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
      t.app.inject({ method, url, headers: { authorization: `Bearer ${secret}` }, ...(payload ? { payload } : {}) });
    expect((await bearer(read.secret, 'GET', '/admin/api/accounts')).statusCode).toBe(200);
    expect((await bearer(read.secret, 'POST', '/admin/api/accounts', { username: 'acme' })).statusCode).toBe(403);
    expect((await bearer(write.secret, 'POST', '/admin/api/accounts', { username: 'acme' })).statusCode).toBe(201);
    expect((await bearer(write.secret, 'GET', '/account/api/account')).statusCode).toBe(401);
    const stored = await t.services.storage.db.selectFrom('operator_tokens').select('token_hash').execute();
    expect(stored.map((r) => r.token_hash)).not.toContain(write.secret);
    expect((await as(t, root)('POST', `/admin/api/tokens/${write.token.id}/revoke`)).statusCode).toBe(200);
    expect((await bearer(write.secret, 'GET', '/admin/api/accounts')).statusCode).toBe(401);
  });

  it('validates every input: unknown fields, wrong types and bad JSON are 400s naming the field, never a stack trace', async () => {
    const root = await operator(t, 'root');
    const call = as(t, root);
    const unknown = await call('POST', '/admin/api/accounts', { username: 'acme', isAdmin: true });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ error: 'invalid-request', field: 'isAdmin' });
    const wrongType = await call('POST', '/admin/api/accounts', { username: 'acme', credits: 'lots' });
    expect(wrongType.json()).toMatchObject({ field: 'credits' });
    const badName = await call('POST', '/admin/api/accounts', { username: 'has space' });
    expect(badName.json()).toMatchObject({ field: 'username' });
    const missing = await call('POST', '/admin/api/accounts', {});
    expect(missing.json()).toMatchObject({ field: 'username' });
    const tooLong = await call('POST', '/admin/api/accounts/x/credits', { operation: 'grant', amount: 1, note: 'n'.repeat(501) });
    expect(tooLong.json()).toMatchObject({ field: 'note' });
    const badQuery = await call('GET', '/admin/api/accounts?limit=100000');
    expect(badQuery.json()).toMatchObject({ field: 'limit' });
    const badJson = await t.app.inject({ method: 'POST', url: '/admin/api/accounts', headers: { cookie: root.cookie, 'x-csrf-token': root.csrf, 'content-type': 'application/json' }, payload: '{"username": ' });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.body).not.toMatch(STACK_FRAME);
    expect((await call('GET', '/admin/api/accounts/nobody')).json()).toMatchObject({ error: 'not-found' });
  });

  it('lists, searches, shows, disables, limits and deletes or closes accounts', async () => {
    const call = as(t, await operator(t, 'root'));
    for (const name of ['alpha', 'beta', 'alpine']) expect((await call('POST', '/admin/api/accounts', { username: name, credits: name === 'beta' ? 5 : 0 })).statusCode).toBe(201);
    expect((await call('GET', '/admin/api/accounts?search=alp')).json()).toMatchObject({ total: 2, accounts: [{ username: 'alpha' }, { username: 'alpine' }] });
    // Case does not matter on either engine (LIKE ignores it on SQLite only), and % is literal.
    expect((await call('GET', '/admin/api/accounts?search=ALP')).json()).toMatchObject({ total: 2, accounts: [{ username: 'alpha' }, { username: 'alpine' }] });
    expect((await call('GET', '/admin/api/accounts?search=a%25e')).json()).toMatchObject({ total: 0, accounts: [] });
    expect((await call('GET', '/admin/api/accounts?limit=1&offset=1')).json()).toMatchObject({ total: 3, accounts: [{ username: 'alpine' }] });
    const patched = await call('PATCH', '/admin/api/accounts/beta', { disabled: true, requireApiKey: true, rateLimits: { perSecond: 5, perDay: null } });
    expect(patched.json()).toMatchObject({ status: 'disabled', requireApiKey: true, rateLimits: { perSecond: 5, perDay: null } });
    expect((await call('GET', '/admin/api/accounts/beta/balance')).json()).toEqual({ credits: 5, status: 'disabled' });
    expect((await call('DELETE', '/admin/api/accounts/alpha')).json()).toEqual({ username: 'alpha', outcome: 'deleted' });
    expect((await call('GET', '/admin/api/accounts/alpha')).statusCode).toBe(404);
    expect((await call('DELETE', '/admin/api/accounts/beta')).json()).toEqual({ username: 'beta', outcome: 'closed' });
    expect((await call('GET', '/admin/api/accounts/beta/balance')).json()).toEqual({ credits: 5, status: 'closed' });
    expect((await call('PATCH', '/admin/api/accounts/beta', { disabled: false })).statusCode).toBe(400);
  });

  it('creates, rolls and revokes keys through the API; the lookup path follows at once', async () => {
    const call = as(t, await operator(t, 'root'));
    const created = (await call('POST', '/admin/api/accounts', { username: 'acme', credits: 10 })).json<{ apiKey: string }>();
    const second = (await call('POST', '/admin/api/accounts/acme/keys', { name: 'backup' })).json<{ key: { id: number }; apiKey: string }>();
    expect((await lookup('acme', second.apiKey)).statusCode).toBe(200);
    const listed = (await call('GET', '/admin/api/accounts/acme/keys')).json<{ keys: Array<{ id: number; name: string }> }>();
    expect(listed.keys.map((k) => k.name)).toEqual(['default', 'backup']);
    expect(JSON.stringify(listed)).not.toContain(created.apiKey);
    const rolled = (await call('POST', `/admin/api/accounts/acme/keys/${listed.keys[0]?.id ?? 0}/roll`, { graceSeconds: 0 })).json<{ apiKey: string }>();
    expect((await lookup('acme', created.apiKey)).statusCode).toBe(401);
    expect((await lookup('acme', rolled.apiKey)).statusCode).toBe(200);
    expect((await call('POST', `/admin/api/accounts/acme/keys/${second.key.id}/revoke`)).statusCode).toBe(200);
    expect((await lookup('acme', second.apiKey)).statusCode).toBe(401);
    // Without a body, a roll keeps the old key for the default 24 hours.
    const third = await call('POST', `/admin/api/accounts/acme/keys/${listed.keys[0]?.id ?? 0}/roll`);
    expect(third.statusCode).toBe(404);
    const fresh = (await call('GET', '/admin/api/accounts/acme/keys')).json<{ keys: Array<{ id: number; revokedAt: string | null; expiresAt: string | null }> }>();
    const live = fresh.keys.find((k) => k.revokedAt === null && k.expiresAt === null);
    const defaultRoll = await call('POST', `/admin/api/accounts/acme/keys/${live?.id ?? 0}/roll`);
    expect(defaultRoll.statusCode, defaultRoll.body).toBe(200);
    expect(Date.parse(defaultRoll.json<{ old: { expiresAt: string } }>().old.expiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect((await lookup('acme', rolled.apiKey)).statusCode).toBe(200);
  });

  it('grants and removes credits with a reference, and shows why each ledger row cost what it did, as JSON, CSV and usage', async () => {
    const call = as(t, await operator(t, 'root'));
    const { apiKey } = (await call('POST', '/admin/api/accounts', { username: 'acme', credits: 3 })).json<{ apiKey: string }>();
    expect((await call('POST', '/admin/api/accounts/acme/credits', { operation: 'grant', amount: 10, reference: 'INV-1', note: 'November' })).json()).toEqual({ username: 'acme', credits: 13 });
    expect((await call('POST', '/admin/api/accounts/acme/credits', { operation: 'remove', amount: 2, reference: 'CN-7' })).json()).toEqual({ username: 'acme', credits: 11 });
    expect((await call('POST', '/admin/api/accounts/acme/credits', { operation: 'remove', amount: 100 })).statusCode).toBe(409);
    expect((await lookup('acme', apiKey)).statusCode).toBe(200);
    const ledger = (await call('GET', '/admin/api/accounts/acme/ledger')).json<{ rows: Array<Record<string, unknown>> }>();
    expect(ledger.rows.map((r) => [r.reason, r.delta, r.balanceAfter, r.reference])).toEqual([
      ['charged', -1, 10, null],
      ['removal', -2, 11, 'CN-7'],
      ['top-up', 10, 13, 'INV-1'],
      ['initial credits', 3, 3, null],
    ]);
    expect((await call('GET', '/admin/api/accounts/acme/ledger?charged=true')).json()).toMatchObject({ rows: [{ reason: 'charged', operation: 'CheckFrance', interface: 'json', query: 'EG258MA' }] });
    expect(((await call('GET', '/admin/api/accounts/acme/ledger?charged=false&limit=2')).json<{ rows: unknown[]; next: number }>()).next).toEqual(expect.any(Number));
    expect(((await call('GET', '/admin/api/accounts/acme/ledger?operation=CheckUSA')).json<{ rows: unknown[] }>()).rows).toEqual([]);
    const csv = await call('GET', '/admin/api/accounts/acme/ledger.csv');
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.body.split('\r\n')[0]).toBe('id,at,reason,delta,balanceAfter,operation,interface,query,requestId,reference,note,key,user');
    expect(csv.body).toContain(',top-up,10,13,,,,,INV-1,November');
    const today = new Date().toISOString().slice(0, 10);
    const usage = await call('GET', `/admin/api/accounts/acme/usage?from=${today}T00:00:00Z&to=2999-01-01T00:00:00Z`);
    expect(usage.statusCode).toBe(400);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await call('GET', `/admin/api/accounts/acme/usage?from=${today}T00:00:00Z&to=${tomorrow}T00:00:00Z`)).json()).toMatchObject({ days: [{ day: today, operation: 'CheckFrance', lookups: 1, credits: 1 }] });
  });

  it('builds an invite link from the request host only when it is a valid host, as every other link', async () => {
    const who = await operator(t, 'root');
    await as(t, who)('POST', '/admin/api/accounts', { username: 'acme' });
    const invite = (host: string) =>
      t.app.inject({ method: 'POST', url: '/admin/api/accounts/acme/users', headers: { host, cookie: who.cookie, 'x-csrf-token': who.csrf }, payload: { name: `u${host.length}`, role: 'member' } });
    const good = await invite('lookup.example.com:8443');
    expect(good.statusCode).toBe(201);
    expect(good.json<{ inviteUrl: string }>().inviteUrl).toMatch(/^http:\/\/lookup\.example\.com:8443\/account\/invite#[\w-]+$/);
    const bad = await invite('evil.example"><script>');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).not.toContain('invite#');
  });

  it('records every kind of change in the audit log, the CLI included, never a secret', async () => {
    const call = as(t, await operator(t, 'root'));
    const { apiKey } = (await call('POST', '/admin/api/accounts', { username: 'acme', credits: 3 })).json<{ apiKey: string }>();
    await call('PATCH', '/admin/api/accounts/acme', { disabled: true });
    await call('POST', '/admin/api/accounts/acme/credits', { operation: 'grant', amount: 1 });
    const key = (await call('POST', '/admin/api/accounts/acme/keys', { name: 'k2' })).json<{ key: { id: number }; apiKey: string }>();
    await call('POST', `/admin/api/accounts/acme/keys/${key.key.id}/roll`, {});
    await call('POST', `/admin/api/accounts/acme/keys/${key.key.id}/revoke`);
    const invite = (await call('POST', '/admin/api/accounts/acme/users', { name: 'cust', role: 'member' })).json<{ inviteToken: string }>();
    const token = (await call('POST', '/admin/api/tokens', { name: 'ci', scope: 'read' })).json<{ secret: string }>();
    const run = await cli({ DATA_DIR: t.dataDir, LOG_LEVEL: 'silent', ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}) }, ['credits', 'add', 'acme', '4']);
    expect(run.code, run.err).toBe(0);
    const audit = (await call('GET', '/admin/api/audit?limit=500')).json<{ rows: Array<{ action: string; actor: { kind: string; name: string; address?: string }; target: string }> }>();
    const actions = audit.rows.map((r) => r.action);
    for (const action of ['user.create', 'user.accept-invite', 'account.create', 'account.update', 'credits.grant', 'key.create', 'key.roll', 'key.revoke', 'token.create']) expect(actions).toContain(action);
    expect(audit.rows.find((r) => r.action === 'account.update')).toMatchObject({ actor: { kind: 'operator', name: 'root', address: '127.0.0.1' }, target: 'acme', before: { disabled: false }, after: { disabled: true } });
    expect(audit.rows[0]).toMatchObject({ action: 'credits.grant', actor: { kind: 'cli' }, target: 'acme', after: { credits: 8, amount: 4 } });
    const text = JSON.stringify(audit);
    for (const secret of [apiKey, key.apiKey, invite.inviteToken, token.secret, PASSWORD]) expect(text).not.toContain(secret);
    expect((await call('GET', '/admin/api/audit?action=key.revoke')).json()).toMatchObject({ rows: [{ action: 'key.revoke' }] });
    const listed = await cli({ DATA_DIR: t.dataDir, LOG_LEVEL: 'silent', ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}) }, ['audit', '--target', 'acme', '--json']);
    expect(listed.code, listed.err).toBe(0);
    expect((JSON.parse(listed.out) as unknown[]).length).toBeGreaterThanOrEqual(7);
  });

  it('creates the first admin from the CLI with a one-time password that must be changed', async () => {
    const env = { DATA_DIR: t.dataDir, LOG_LEVEL: 'silent', ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}) };
    const run = await cli(env, ['admin', 'create', 'first', '--role', 'admin', '--json']);
    expect(run.code, run.err).toBe(0);
    const { password } = JSON.parse(run.out) as { password: string };
    const loggedIn = await t.app.inject({ method: 'POST', url: '/admin/api/login', payload: { username: 'first', password } });
    expect(loggedIn.json()).toMatchObject({ user: { name: 'first', role: 'admin', mustChangePassword: true } });
    expect((await cli(env, ['admin', 'create', 'first'])).code).toBe(1);
    expect((await cli(env, ['admin', 'create', 'x', '--role', 'god'])).code).toBe(1);
  });
});

describe.each(ENGINES)('account API on %s: a customer sees and changes only its own account', (engine) => {
  let t: TestApp;
  let mine: string;
  let theirs: string;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    t = await createTestApp({}, undefined, engine);
    await t.importRecords([FRANCE]);
    mine = await t.account('mine', 5);
    theirs = await t.account('theirs', 7);
    await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('theirs', theirs) } });
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  it('shows its own account, balance, keys, ledger, CSV and usage, and nothing of another account', async () => {
    const call = as(t, await customer(t, 'mine', 'owner@mine'));
    expect((await call('GET', '/account/api/account')).json()).toMatchObject({ username: 'mine', credits: 5 });
    expect((await call('GET', '/account/api/balance')).json()).toEqual({ credits: 5, status: 'active' });
    const everything = [
      await call('GET', '/account/api/account'),
      await call('GET', '/account/api/keys'),
      await call('GET', '/account/api/ledger'),
      await call('GET', '/account/api/ledger.csv'),
      await call('GET', `/account/api/usage?from=2000-01-01T00:00:00Z&to=2000-12-31T00:00:00Z`),
    ];
    for (const res of everything) {
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('theirs');
      expect(res.body).not.toContain('EG258MA');
    }
    // There is no route that names an account: the admin API refuses a customer session.
    expect((await call('GET', '/admin/api/accounts/theirs')).statusCode).toBe(403);
    expect((await call('GET', '/account/api/accounts/theirs/ledger')).statusCode).toBe(404);
  });

  it("cannot revoke or roll another account's key, even knowing its id", async () => {
    const call = as(t, await customer(t, 'mine', 'owner@mine'));
    const [theirKey] = await t.services.accounts.listKeys('theirs');
    expect((await call('POST', `/account/api/keys/${theirKey?.id ?? 0}/revoke`)).statusCode).toBe(404);
    expect((await call('POST', `/account/api/keys/${theirKey?.id ?? 0}/roll`, {})).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('theirs', theirs) } })).statusCode).toBe(200);
    const own = (await call('POST', '/account/api/keys', { name: 'mine 2' })).json<{ apiKey: string }>();
    expect((await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('mine', own.apiKey) } })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('theirs', own.apiKey) } })).statusCode).toBe(401);
    expect(mine).not.toBe(own.apiKey);
  });

  it('lets a member read but not change, and refuses a customer login on the admin API', async () => {
    const member = as(t, await customer(t, 'mine', 'member@mine', 'member'));
    expect((await member('GET', '/account/api/keys')).statusCode).toBe(200);
    expect((await member('POST', '/account/api/keys', { name: 'nope' })).statusCode).toBe(403);
    const adminLogin = await t.app.inject({ method: 'POST', url: '/admin/api/login', payload: { username: 'member@mine', password: PASSWORD } });
    expect(adminLogin.statusCode).toBe(401);
  });

  it('uses an invite link once only', async () => {
    const { inviteToken } = await users(t).createCustomer('mine', 'once@mine', 'owner');
    const accept = () => t.app.inject({ method: 'POST', url: '/account/api/invite/accept', payload: { token: inviteToken, password: PASSWORD } });
    expect((await accept()).statusCode).toBe(200);
    expect((await accept()).statusCode).toBe(404);
    const short = await t.app.inject({ method: 'POST', url: '/account/api/invite/accept', payload: { token: 'x', password: 'short' } });
    expect(short.statusCode).toBe(400);
    const unknown = await t.app.inject({ method: 'POST', url: '/account/api/invite/accept', payload: { token: 'x', password: PASSWORD } });
    expect(unknown.statusCode).toBe(404);
  });
});
