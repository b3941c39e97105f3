import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { lookupKey } from '../../src/http/console/account-sections.js';
import { consoleLogin, get, post, type ConsoleSession } from './console-harness.js';

/**
 * Issue 26 items 3 and 9: a refused form value shows the form again with the message by its field
 * in plain words and the typed values kept, under the logged-in header; error and missing pages
 * show the logged-in header whenever the session is valid.
 */
describe('console: form errors and missing pages', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  async function operator(): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createOperator('olga', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    return consoleLogin(t, 'olga');
  }
  const LOGGED_IN = 'action="/console/logout"';
  const fieldOf = (body: string, id: string) => new RegExp(`<input[^>]*id="${id}"[^>]*>`).exec(body)?.[0] ?? '';

  it('a space in a new account name shows the form again, the name kept, the message by the field', async () => {
    const s = await operator();
    const res = await post(t, '/console/admin/accounts', { username: 'acme corp', credits: 25 }, s);
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('Cannot do that');
    expect(res.body).not.toContain('^[A-Za-z');
    expect(res.body).toContain(LOGGED_IN);
    expect(fieldOf(res.body, 'new-username')).toContain('value="acme corp"');
    expect(fieldOf(res.body, 'new-username')).toContain('aria-invalid="true"');
    expect(fieldOf(res.body, 'new-credits')).toContain('value="25"');
    expect(res.body).toContain('id="new-username-error"');
    expect(res.body).toContain('User name may hold only letters, digits and . _ @ - (no spaces).');
    await expect(t.services.accounts.show('acme corp')).rejects.toThrow();
  });

  it('an over-long account name is refused with its limit, not cut to 64 characters', async () => {
    const s = await operator();
    const name = 'a'.repeat(70);
    const res = await post(t, '/console/admin/accounts', { username: name }, s);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('User name may be at most 64 characters long (this one has 70).');
    expect(fieldOf(res.body, 'new-username')).not.toContain('maxlength');
    expect(res.body).toContain('at most 64 characters');
    expect((await t.services.accounts.list({ search: '', limit: 10, offset: 0 })).total).toBe(0);
  });

  it('an existing account name is said at the form, values kept', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 0);
    const s = await operator();
    const res = await post(t, '/console/admin/accounts', { username: 'acme', credits: 5 }, s);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(LOGGED_IN);
    expect(fieldOf(res.body, 'new-username')).toContain('value="acme"');
    expect(res.body).toMatch(/class="field-error" role="alert">[^<]*acme/);
  });

  it('amount 0 shows the account page again with the credits form kept', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 10);
    const s = await operator();
    const res = await post(t, '/console/admin/accounts/acme/credits', { operation: 'remove', amount: 0, reference: 'INV-7', note: 'oops' }, s);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Account acme');
    expect(res.body).toContain(LOGGED_IN);
    expect(res.body).toContain('Amount must be at least 1.');
    expect(fieldOf(res.body, 'c-amount')).toContain('aria-describedby="c-amount-error"');
    expect(fieldOf(res.body, 'c-reference')).toContain('value="INV-7"');
    expect(fieldOf(res.body, 'c-note')).toContain('value="oops"');
    expect(res.body).toContain('<option value="remove" selected>');
    expect((await t.services.accounts.show('acme')).credits).toBe(10);
  });

  it('an over-long key name shows the account page again, the name kept and its limit said (operator and customer)', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 0);
    const long = 'k'.repeat(65);
    const op = await post(t, '/console/admin/accounts/acme/keys', { name: long }, await operator());
    expect(op.statusCode).toBe(400);
    expect(op.body).toContain('Account acme');
    expect(fieldOf(op.body, 'key-name')).toContain(`value="${long}"`);
    expect(op.body).toContain('Name may be at most 64 characters long (this one has 65).');
    const { inviteToken } = await users(t).createCustomer('acme', 'carla', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    const own = await post(t, '/console/account/keys', { name: long }, await consoleLogin(t, 'carla'));
    expect(own.statusCode).toBe(400);
    expect(own.body).toContain(LOGGED_IN);
    expect(fieldOf(own.body, 'key-name')).toContain('aria-invalid="true"');
    expect(await t.services.accounts.listKeys('acme')).toHaveLength(1);
  });

  it('the notice after a credit change says what happened (issue 26 item 14)', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 250);
    const s = await operator();
    const res = await post(t, '/console/admin/accounts/acme/credits', { operation: 'grant', amount: 1000 }, s);
    expect(res.statusCode).toBe(303);
    const shown = await get(t, String(res.headers.location), s);
    expect(shown.body).toContain('Granted 1,000 credits to acme: balance 1,250.');
    const removed = await post(t, '/console/admin/accounts/acme/credits', { operation: 'remove', amount: 1 }, s);
    expect((await get(t, String(removed.headers.location), s)).body).toContain('Removed 1 credit from acme: balance 1,249.');
  });

  it('a customer opening an operator URL sees the refusal under their logged-in header', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 0);
    const { inviteToken } = await users(t).createCustomer('acme', 'carla', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    const s = await consoleLogin(t, 'carla');
    const res = await get(t, '/console/admin/accounts', s);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain(LOGGED_IN);
    expect(res.body).toContain('href="/console/account"');
  });

  it('an unknown console URL is a console page with the navigation, logged in or not', async () => {
    const s = await operator();
    const res = await get(t, '/console/admin/no-such-page', s);
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('Page not found');
    expect(res.body).toContain(LOGGED_IN);
    expect(res.body).toContain('href="/console/admin/accounts"');
    const anonymous = await get(t, '/console/nothing<here>');
    expect(anonymous.statusCode).toBe(404);
    expect(anonymous.body).toContain('href="/console/login"');
    expect(anonymous.body).not.toContain('<here>');
    // Outside the console the service's own 404 stays.
    expect((await get(t, '/no-such-thing')).headers['content-type']).toContain('text/plain');
  });

  it('the ledger "Operation" filter is a select of the catalogue\'s operations, the chosen one kept', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 0);
    const s = await operator();
    const res = await get(t, '/console/admin/accounts/acme?operation=CheckUSA', s);
    expect(res.statusCode).toBe(200);
    const select = /<select id="f-operation" name="operation">([\s\S]*?)<\/select>/.exec(res.body)?.[1] ?? '';
    expect(select).toContain('<option value="">all</option>');
    expect(select).toContain('<option selected>CheckUSA</option>');
    expect(select.match(/<option/g)).toHaveLength(t.services.catalogue.operations.length + 1);
  });
});

describe('console: the navigation marks the current page', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('aria-current="page" on the section of the page shown, and on no other link', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 0);
    const { inviteToken } = await users(t).createOperator('olga', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    const s = await consoleLogin(t, 'olga');
    const marked = (body: string) => [...body.matchAll(/<a href="([^"]+)" aria-current="page">/g)].map((m) => m[1]);
    expect(marked((await get(t, '/console/admin', s)).body)).toEqual(['/console/admin']);
    expect(marked((await get(t, '/console/admin/accounts/acme', s)).body)).toEqual(['/console/admin/accounts']);
    expect(marked((await get(t, '/console/admin/audit?action=x', s)).body)).toEqual(['/console/admin/audit']);
  });
});

describe('console: Try it runs what was chosen', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('a run after the select changed to another operation runs nothing and opens the chosen one', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 10);
    const { inviteToken } = await users(t).createCustomer('acme', 'carla', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    const s = await consoleLogin(t, 'carla');
    const page = await get(t, '/console/account/try?operation=CheckFrance', s);
    // The select is in the form that runs the lookup, beside the operation whose fields are shown.
    const runForm = /<form method="post" action="\/console\/account\/try"[\s\S]*?<\/form>/.exec(page.body)?.[0] ?? '';
    expect(runForm).toContain('<select id="t-operation" name="operation">');
    expect(runForm).toContain('name="shown" value="CheckFrance"');
    const res = await post(t, '/console/account/try', { operation: 'CheckUSA', shown: 'CheckFrance', RegistrationNumber: 'EG258MA' }, s);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/account/try?operation=CheckUSA&switched=1');
    const next = await get(t, String(res.headers.location), s);
    expect(next.body).toContain('You chose CheckUSA: nothing was run.');
    expect(next.body).toContain('name="shown" value="CheckUSA"');
    expect(await t.services.accounts.balance('acme')).toBe(10);
    const chose = await post(t, '/console/account/try', { operation: 'CheckUSA', shown: 'CheckFrance', choose: '1' }, s);
    expect(chose.headers.location).toBe('/console/account/try?operation=CheckUSA');
  });
});

describe('console polish (issue 26 item 16)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('serves a favicon: the pages link an SVG icon and /favicon.ico leads to it, so no 404', async () => {
    const login = await get(t, '/console/login');
    const href = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)">/.exec(login.body)?.[1] ?? '';
    const icon = await get(t, href);
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.body).toContain('<svg');
    const legacy = await get(t, '/favicon.ico');
    expect(legacy.statusCode).toBe(301);
    expect(legacy.headers.location).toBe(href);
  });

  it('the ledger reads a lookup key "7KDJ294|CA" as "7KDJ294 (CA)"', () => {
    expect(lookupKey('7KDJ294|CA')).toBe('7KDJ294 (CA)');
    expect(lookupKey('AB123CD')).toBe('AB123CD');
    expect(lookupKey(null)).toBe('');
  });
});

describe('console: viewers are told the pages are read-only (issue 26 item 13)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('a viewer sees the read-only notice on every page; an admin does not', async () => {
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 0);
    for (const [name, role] of [['vera', 'viewer'], ['olga', 'admin']] as const) {
      const { inviteToken } = await users(t).createOperator(name, role, true);
      await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    }
    const viewer = await consoleLogin(t, 'vera');
    for (const url of ['/console/admin', '/console/admin/accounts', '/console/admin/accounts/acme']) {
      expect((await get(t, url, viewer)).body, url).toContain('data-testid="read-only"');
    }
    expect((await get(t, '/console/admin/accounts', await consoleLogin(t, 'olga'))).body).not.toContain('data-testid="read-only"');
  });
});
