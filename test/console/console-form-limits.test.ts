import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, post, type ConsoleSession } from './console-harness.js';

/**
 * Issue 26 item 10: no console field cuts what is typed (`maxlength`); each says its limit, and an
 * over-long value comes back at its field (aria-invalid, aria-describedby) with the values kept,
 * under the logged-in header, instead of a separate error page.
 */
describe('console: text fields state their limits and refuse over-long values at the field', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ SIGNUP_ENABLED: 'true' });
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 10);
  });
  afterEach(async () => {
    await t.close();
  });

  async function operator(): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createOperator('olga', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    return consoleLogin(t, 'olga');
  }
  async function customer(): Promise<ConsoleSession> {
    await users(t).acceptInvite(await users(t).createCustomer('acme', 'carol', 'owner').then((c) => c.inviteToken), PASSWORD);
    return consoleLogin(t, 'carol');
  }
  const LOGGED_IN = 'action="/console/logout"';
  const EVENTS = { 'event_credits.low': 'true', 'event_credits.depleted': 'true' };
  const fieldOf = (body: string, id: string) => new RegExp(`<input[^>]*id="${id}"[^>]*>`).exec(body)?.[0] ?? '';
  /** The field came back refused: marked invalid, described by its message (and hint), the message shown. */
  function refusedAt(body: string, id: string, text: string): void {
    const field = fieldOf(body, id);
    expect(field).toContain('aria-invalid="true"');
    expect(field).toMatch(new RegExp(`aria-describedby="${id}-error( ${id}-hint)?"`));
    expect(body).toContain(`<p class="field-error" id="${id}-error" role="alert">${text}</p>`);
    expect(body).toContain(LOGGED_IN);
    expect(body).not.toContain('Cannot do that');
  }

  it('no console page cuts what is typed: no maxlength on any field', async () => {
    const op = await operator();
    const operatorPages = ['/console/admin/accounts', '/console/admin/accounts/acme', '/console/admin/accounts/acme/alerts', '/console/admin/webhooks', '/console/admin/tokens', '/console/admin/imports', '/console/admin/test-plates', '/console/admin/audit', '/console/password'];
    const cust = await customer();
    const customerPages = ['/console/account', '/console/account/alerts', '/console/account/try'];
    const pages = [...operatorPages.map((url) => [url, op] as const), ...customerPages.map((url) => [url, cust] as const), ...['/console/login', '/console/invite', '/account/invite', '/console/signup'].map((url) => [url, undefined] as const)];
    for (const [url, session] of pages) {
      const res = await get(t, url, session);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toMatch(/<input/);
      expect(res.body, url).not.toContain('maxlength');
    }
    const opened = await post(t, '/console/invite/open', { token: await users(t).createCustomer('acme', 'dana', 'member').then((c) => c.inviteToken) });
    expect(opened.body).not.toContain('maxlength');
  });

  it('inviting a user: an over-long name is refused with its limit at the field, the name and role kept', async () => {
    const s = await operator();
    const name = `${'d'.repeat(70)}@acme.example`;
    const res = await post(t, '/console/admin/accounts/acme/users', { name, role: 'member' }, s);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Account acme');
    refusedAt(res.body, 'u-name', `Name may be at most 64 characters long (this one has ${name.length}).`);
    expect(fieldOf(res.body, 'u-name')).toContain(`value="${name}"`);
    expect(res.body).toContain('<option value="member" selected>');
    expect(res.body).toContain('at most 64 characters');
    expect(await t.services.storage.db.selectFrom('users').select('name').where('name', '=', name).executeTakeFirst()).toBeUndefined();
  });

  it('inviting a user: a taken name is said at the field, not on an error page', async () => {
    const s = await operator();
    const res = await post(t, '/console/admin/accounts/acme/users', { name: 'olga', role: 'owner' }, s);
    expect(res.statusCode).toBe(400);
    refusedAt(res.body, 'u-name', 'User olga already exists.');
  });

  it('a webhook: an over-long URL or description is refused at its field with its limit, every value kept', async () => {
    const s = await customer();
    const url = `https://hooks.example.com/${'x'.repeat(2100)}`;
    const long = await post(t, '/console/account/webhooks', { url, description: 'billing', ...EVENTS }, s);
    expect(long.statusCode).toBe(400);
    refusedAt(long.body, 'w-url', `URL may be at most 2,048 characters long (this one has ${url.length.toLocaleString('en')}).`);
    expect(fieldOf(long.body, 'w-url')).toContain(`value="${url}"`);
    expect(fieldOf(long.body, 'w-description')).toContain('value="billing"');
    expect(long.body).toContain('at most 2,048 characters');
    const description = 'd'.repeat(501);
    const wordy = await post(t, '/console/account/webhooks', { url: 'https://hooks.example.com/in', description, ...EVENTS }, s);
    expect(wordy.statusCode).toBe(400);
    refusedAt(wordy.body, 'w-description', 'Description may be at most 500 characters long (this one has 501).');
    expect(fieldOf(wordy.body, 'w-url')).toContain('value="https://hooks.example.com/in"');
    expect(await t.services.storage.db.selectFrom('webhook_endpoints').select('id').execute()).toEqual([]);
  });

  it('a webhook URL already registered is said at the URL field, not on an error page', async () => {
    const s = await customer();
    const url = 'https://hooks.example.com/in';
    expect((await post(t, '/console/account/webhooks', { url, ...EVENTS }, s)).statusCode).toBe(201);
    const again = await post(t, '/console/account/webhooks', { url, ...EVENTS }, s);
    expect(again.statusCode).toBe(400);
    refusedAt(again.body, 'w-url', `Not registered: an endpoint with the URL ${url} is already registered.`);
  });

  it('thresholds: over-long text is refused at the field with its limit', async () => {
    const s = await customer();
    const text = Array.from({ length: 60 }, (_, i) => i).join(', ');
    const res = await post(t, '/console/account/alerts/thresholds', { thresholds: text }, s);
    expect(res.statusCode).toBe(400);
    refusedAt(res.body, 't-values', `Thresholds may be at most 200 characters long (this one has ${text.length}).`);
    expect(fieldOf(res.body, 't-values')).toContain(`value="${text}"`);
  });

  it('an operator token: an over-long name is refused at the field, name and scope kept', async () => {
    const s = await operator();
    const name = 'n'.repeat(65);
    const res = await post(t, '/console/admin/tokens', { name, scope: 'write' }, s);
    expect(res.statusCode).toBe(400);
    refusedAt(res.body, 'tk-name', 'Name may be at most 64 characters long (this one has 65).');
    expect(fieldOf(res.body, 'tk-name')).toContain(`value="${name}"`);
    expect(res.body).toContain('<option value="write" selected>');
    expect(await t.services.users.tokens()).toEqual([]);
  });

  it('a test plate: an over-long key value is refused at its field, named as its parameter', async () => {
    const s = await operator();
    const value = 'A'.repeat(70);
    const res = await post(t, '/console/admin/test-plates', { operation: 'CheckFrance', value_RegistrationNumber: value }, s);
    expect(res.statusCode).toBe(400);
    refusedAt(res.body, 'tp-RegistrationNumber', 'RegistrationNumber may be at most 64 characters long (this one has 70).');
    expect(fieldOf(res.body, 'tp-RegistrationNumber')).toContain(`value="${value}"`);
  });

  it('an import: an over-long source name is refused at its field, before the file is stored', async () => {
    const s = await operator();
    const source = 's'.repeat(65);
    const boundary = 'xLimitBoundary';
    const part = (name: string, value: string, file = '') => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file}\r\n${file ? 'Content-Type: application/x-ndjson\r\n' : ''}\r\n${value}\r\n`;
    const payload = `${part('_csrf', s.csrf)}${part('source', source)}${part('file', '{}', '; filename="a.jsonl"')}--${boundary}--\r\n`;
    const res = await t.app.inject({ method: 'POST', url: '/console/admin/imports', headers: { cookie: s.cookie, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
    expect(res.statusCode).toBe(400);
    refusedAt(res.body, 'i-source', 'Source name may be at most 64 characters long (this one has 65).');
    expect(fieldOf(res.body, 'i-source')).toContain(`value="${source}"`);
    expect(await t.services.imports.list(10)).toEqual([]);
  });

  it('the accounts search and the audit filters refuse over-long text at the field, typed text kept', async () => {
    const s = await operator();
    const search = await get(t, `/console/admin/accounts?search=${'q'.repeat(65)}`, s);
    expect(search.statusCode).toBe(400);
    refusedAt(search.body, 'search', 'Search may be at most 64 characters long (this one has 65).');
    expect(fieldOf(search.body, 'search')).toContain(`value="${'q'.repeat(65)}"`);
    const audit = await get(t, `/console/admin/audit?action=${'a'.repeat(65)}&actor=olga`, s);
    expect(audit.statusCode).toBe(400);
    refusedAt(audit.body, 'a-action', 'Action may be at most 64 characters long (this one has 65).');
    expect(fieldOf(audit.body, 'a-actor')).toContain('value="olga"');
  });

  it('Try it: an over-long value is refused at its field and nothing runs', async () => {
    const s = await customer();
    const value = 'E'.repeat(201);
    const res = await post(t, '/console/account/try', { operation: 'CheckFrance', shown: 'CheckFrance', RegistrationNumber: value }, s);
    expect(res.statusCode).toBe(400);
    refusedAt(res.body, 'p-RegistrationNumber', 'RegistrationNumber may be at most 200 characters long (this one has 201).');
    expect(res.body).not.toContain('data-testid="cost"');
    expect(await t.services.accounts.balance('acme')).toBe(10);
  });

  it('login and sign-up: an over-long value is said on the form, not on an error page', async () => {
    const login = await post(t, '/console/login', { username: 'u'.repeat(201), password: PASSWORD });
    expect(login.statusCode).toBe(400);
    expect(login.body).toContain('User name may be at most 200 characters long (this one has 201).');
    expect(login.body).toContain('action="/console/login"');
    const signupPage = await get(t, '/console/signup');
    expect(signupPage.body).toContain('at most 64 characters');
    const cookie = ([] as string[]).concat(signupPage.headers['set-cookie'] ?? []).map((c) => c.split(';', 1)[0] ?? '').join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(signupPage.body)?.[1] ?? '';
    const long = 'p'.repeat(257);
    const signup = await post(t, '/console/signup', { username: 'newcomer', password: long, confirm: long }, { cookie, csrf });
    expect(signup.statusCode).toBe(400);
    expect(signup.body).toContain('Password may be at most 256 characters long.');
    expect(signup.body).toContain('value="newcomer"');
  });
});
