import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/http/console/html.js';
import type { Viewer } from '../../src/http/console/layout.js';
import { overviewPage } from '../../src/http/console/overview-page.js';
import { CONTENT_SECURITY_POLICY } from '../../src/http/security-headers.js';
import { FRANCE, PASSWORD, users } from '../admin/admin-harness.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, openForm, post, type ConsoleSession } from './console-harness.js';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';

/** The session cookie a response sets (a login also clears its form's token cookie). */
function sessionCookieOf(res: LightMyRequestResponse): string {
  return ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('vl_session=')) ?? '';
}

describe('html template', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const evil = `<script>alert("x")</script>' onmouseover='x`;
    const out = html`<p title="${evil}">${evil}</p>${[evil, 1]}`.text;
    expect(out).not.toContain('<script>');
    expect(out).not.toContain(`' onmouseover`);
    expect(out).toBe(`<p title="${escapeHtml(evil)}">${escapeHtml(evil)}</p>${escapeHtml(evil)}1`);
  });

  it('places fragments made by html as they are, and renders nothing for null, undefined and booleans', () => {
    expect(html`<div>${html`<b>${'a&b'}</b>`}${null}${undefined}${false}${true}</div>`.text).toBe('<div><b>a&amp;b</b></div>');
  });
});

describe.each(await enginesToTest())('web console on %s', (engine) => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp(await engineEnv(engine), undefined, engine);
    await t.importRecords([FRANCE]);
  });
  afterEach(async () => {
    await t.close();
  });

  async function operatorSession(name: string, role: 'admin' | 'viewer' = 'admin'): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createOperator(name, role, true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    return consoleLogin(t, name);
  }

  async function customerSession(account: string, name: string, role: 'owner' | 'member' = 'owner'): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createCustomer(account, name, role);
    await users(t).acceptInvite(inviteToken, PASSWORD);
    return consoleLogin(t, name);
  }

  const lookup = (username: string, key: string) => t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic(username, key) } });

  it('serves the front page without a login: version, both services with help page and WSDL, JSON interface, console login, /healthz', async () => {
    const res = await get(t, '/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    for (const link of ['href="/api/reg.asmx"', 'href="/api/reg.asmx?WSDL"', 'href="/api/bespokeapi.asmx"', 'href="/api/bespokeapi.asmx?WSDL"', 'href="/console/login"', 'href="/healthz"', '/api/json.aspx/']) {
      expect(res.body).toContain(link);
    }
    expect(res.body).toContain('Version <strong>0.1.0</strong>');
  });

  it('puts the CSP and the other security headers on console pages, and none on JSON or SOAP answers', async () => {
    for (const url of ['/', '/console/login']) {
      const page = await get(t, url);
      expect(page.headers['content-security-policy'], url).toBe(CONTENT_SECURITY_POLICY);
      expect(page.headers['x-content-type-options'], url).toBe('nosniff');
      expect(page.headers['x-frame-options'], url).toBe('DENY');
      expect(page.headers['access-control-allow-origin'], url).toBeUndefined();
    }
    const key = await t.account('alice', 5);
    const json = await lookup('alice', key);
    expect(json.statusCode).toBe(200);
    const wsdl = await get(t, '/api/reg.asmx?WSDL');
    for (const res of [json, wsdl]) {
      expect(res.headers['content-security-policy']).toBeUndefined();
      expect(res.headers['x-frame-options']).toBeUndefined();
      expect(res.headers['access-control-allow-origin']).toBe('*');
    }
  });

  it('serves its stylesheet and script under content-hashed paths cached for a year', async () => {
    const page = await get(t, '/');
    const css = /href="(\/console\/assets\/[0-9a-f]{12}\/console\.css)"/.exec(page.body)?.[1] ?? '';
    const res = await get(t, css);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('logs in through the form with an HttpOnly SameSite cookie, Secure behind a TLS-terminating proxy, and redirects by role', async () => {
    await users(t).createOperator('root', 'admin', true).then(({ inviteToken }) => users(t).acceptInvite(inviteToken ?? '', PASSWORD));
    const res = await post(t, '/console/login', { username: 'root', password: PASSWORD });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/admin');
    expect(sessionCookieOf(res)).toMatch(/^vl_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const wrong = await post(t, '/console/login', { username: 'root', password: 'not the password' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('Wrong user name or password.');
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const proxied = await createTestApp({ TRUST_PROXY: 'true' });
    try {
      await users(proxied).createOperator('root', 'admin', true).then(({ inviteToken }) => users(proxied).acceptInvite(inviteToken ?? '', PASSWORD));
      const tls = await post(proxied, '/console/login', { username: 'root', password: PASSWORD }, undefined, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'lookup.example.com' } });
      expect(tls.statusCode).toBe(303);
      expect(tls.headers.location).toBe('/console/admin');
      expect(sessionCookieOf(tls)).toMatch(/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
      expect(tls.headers['strict-transport-security']).toBe('max-age=31536000');
      const front = await proxied.app.inject({ url: '/', headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'lookup.example.com' } });
      expect(front.body).toContain('https://lookup.example.com/api/reg.asmx');
    } finally {
      await proxied.close();
    }
  });

  it('sends a page without a session to the login page, which brings the user back to it, and a customer away from the operator console', async () => {
    expect((await get(t, '/console')).headers.location).toBe('/console/login');
    for (const url of ['/console/admin', '/console/account', '/console/admin/accounts/alice']) {
      const res = await get(t, url);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location, url).toBe(`/console/login?next=${encodeURIComponent(url)}`);
    }
    await t.account('alice', 5);
    const alice = await customerSession('alice', 'alice-owner');
    const res = await get(t, '/console/admin/accounts/alice', alice);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('this API is for operators');
  });

  it('refuses a form posted without the CSRF token, or with another session\'s, and changes nothing', async () => {
    await t.account('alice', 5);
    const root = await operatorSession('root');
    const other = await operatorSession('other');
    const missing = await post(t, '/console/admin/accounts/alice/credits', { operation: 'grant', amount: 100 }, root, { csrf: false });
    expect(missing.statusCode).toBe(403);
    expect(missing.headers['content-type']).toBe('text/html; charset=utf-8');
    const foreign = await post(t, '/console/admin/accounts/alice/credits', { operation: 'grant', amount: 100, _csrf: other.csrf }, root, { csrf: false });
    expect(foreign.statusCode).toBe(403);
    expect(await t.services.accounts.balance('alice')).toBe(5);
    const ok = await post(t, '/console/admin/accounts/alice/credits', { operation: 'grant', amount: 100, reference: 'INV-1' }, root);
    expect(ok.statusCode).toBe(303);
    expect(await t.services.accounts.balance('alice')).toBe(105);
  });

  it('lets an operator create an account (first key shown once), grant credits with a reference, disable and enable it, and records who did it', async () => {
    const root = await operatorSession('root');
    const created = await post(t, '/console/admin/accounts', { username: 'bob', credits: 3 }, root);
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const key = /data-testid="secret">([^<]+)</.exec(created.body)?.[1] ?? '';
    expect((await lookup('bob', key)).statusCode).toBe(200);
    expect(created.body).toContain(`curl -u &#39;bob:${key}&#39;`);

    expect((await post(t, '/console/admin/accounts/bob/credits', { operation: 'grant', amount: 50, reference: 'INV-7', note: 'October' }, root)).headers.location).toBe('/console/admin/accounts/bob?done=granted&amount=50');
    const page = await get(t, '/console/admin/accounts/bob', root);
    expect(page.body).toContain('data-testid="balance">52<');
    expect(page.body).toContain('50 credits granted by an operator, reference <code>INV-7</code>: October.');
    expect(page.body).toMatch(/A successful <strong>CheckFrance<\/strong> lookup of <code>EG258MA<\/code> over json costs 1 credit\./);

    await post(t, '/console/admin/accounts/bob/status', { disabled: 'true' }, root);
    expect((await t.services.accounts.show('bob')).disabled).toBe(true);
    expect((await lookup('bob', key)).statusCode).not.toBe(200);
    await post(t, '/console/admin/accounts/bob/status', { disabled: 'false' }, root);
    expect((await t.services.accounts.show('bob')).disabled).toBe(false);

    const audit = await t.services.audit.list({ target: 'bob', limit: 50 });
    expect(audit.map((r) => r.action)).toEqual(expect.arrayContaining(['account.create']));
    expect(audit.every((r) => r.actor.name === 'root' && r.actor.kind === 'operator')).toBe(true);
    const trail = await get(t, '/console/admin/audit?target=bob', root);
    expect(trail.body).toContain('account.create');
  });

  it('sets rate limits and the API-key flag from the form: empty means the server default, 0 none', async () => {
    await t.account('alice', 5);
    const root = await operatorSession('root');
    const res = await post(t, '/console/admin/accounts/alice/settings', { requireApiKey: 'true', perSecond: '5', perDay: '' }, root);
    expect(res.statusCode).toBe(303);
    const account = await t.services.accounts.show('alice');
    expect(account.requireApiKey).toBe(true);
    expect(account.rateLimits).toEqual({ perSecond: 5, perDay: null });
    await post(t, '/console/admin/accounts/alice/settings', { requireApiKey: 'false', perSecond: '', perDay: '0' }, root);
    expect((await t.services.accounts.show('alice')).rateLimits).toEqual({ perSecond: null, perDay: 0 });
  });

  it('answers bad form input with a 400 page naming the field, and moves no credit', async () => {
    await t.account('alice', 5);
    const root = await operatorSession('root');
    for (const fields of [{ operation: 'grant', amount: 'lots' }, { operation: 'steal', amount: 5 }, { operation: 'grant', amount: 5, surprise: 'x' }, { operation: 'grant', amount: 0 }]) {
      const res = await post(t, '/console/admin/accounts/alice/credits', fields, root);
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      // Shown again at the form, in plain words (issue 26 item 3).
      expect(res.body).toMatch(/class="field-error"[^>]*>(Amount|Change|Input) /);
    }
    expect(await t.services.accounts.balance('alice')).toBe(5);
    const unknown = await get(t, '/console/admin/accounts/nobody', root);
    expect(unknown.statusCode).toBe(404);
  });

  it('shows a viewer everything with no buttons, and refuses its writes', async () => {
    await t.account('alice', 5);
    const viewer = await operatorSession('watcher', 'viewer');
    const page = await get(t, '/console/admin/accounts/alice', viewer);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-testid="balance">5<');
    expect(page.body).not.toMatch(/<form method="post" action="\/console\/admin\/accounts\/alice\//);
    expect((await get(t, '/console/admin/accounts', viewer)).body).not.toContain('Create an account');
    for (const [url, fields] of [
      ['/console/admin/accounts/alice/credits', { operation: 'grant', amount: 10 }],
      ['/console/admin/accounts/alice/status', { disabled: 'true' }],
      ['/console/admin/accounts/alice/keys', { name: 'mine' }],
      ['/console/admin/accounts', { username: 'sneaky' }],
    ] as const) {
      const res = await post(t, url, fields, viewer);
      expect(res.statusCode, url).toBe(403);
    }
    expect(await t.services.accounts.balance('alice')).toBe(5);
    expect((await t.services.accounts.show('alice')).disabled).toBe(false);
  });

  it('renders markup typed by users as text: ledger notes, references and search terms', async () => {
    await t.account('alice', 5);
    const root = await operatorSession('root');
    const evil = '<script>alert(1)</script>';
    await post(t, '/console/admin/accounts/alice/credits', { operation: 'grant', amount: 1, reference: `"><img src=x onerror=alert(1)>`, note: evil }, root);
    for (const url of ['/console/admin/accounts/alice', `/console/admin/accounts?search=${encodeURIComponent(evil)}`, '/console/admin/audit']) {
      const res = await get(t, url, root);
      expect(res.body, url).not.toContain('<script>alert');
      expect(res.body, url).not.toContain('<img src=x');
    }
    expect((await get(t, '/console/admin/accounts/alice', root)).body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('gives a customer its own balance, ledger and keys: creates a key shown once, rolls it (the old one works for the grace period), revokes it', async () => {
    await t.account('alice', 10);
    await t.account('mallory', 10);
    const owner = await customerSession('alice', 'alice-owner');
    const created = await post(t, '/console/account/keys', { name: 'production' }, owner);
    expect(created.statusCode).toBe(201);
    const key = /data-testid="secret">([^<]+)</.exec(created.body)?.[1] ?? '';
    expect((await lookup('alice', key)).statusCode).toBe(200);

    const page = await get(t, '/console/account', owner);
    expect(page.body).toContain('data-testid="balance">9<');
    expect(page.body).toContain('lookup of <code>EG258MA</code>');
    expect(page.body).toContain('data-total="1"');
    expect(page.body).not.toContain('mallory');
    expect(page.body).toContain('href="/account/api/ledger.csv"');

    const id = Number(/action="\/console\/account\/keys\/(\d+)\/roll"/.exec(page.body.slice(page.body.indexOf('production')))?.[1]);
    const rolled = await post(t, `/console/account/keys/${id}/roll`, {}, owner);
    expect(rolled.statusCode).toBe(200);
    const next = /data-testid="secret">([^<]+)</.exec(rolled.body)?.[1] ?? '';
    expect(next).not.toBe(key);
    expect((await lookup('alice', next)).statusCode).toBe(200);
    expect((await lookup('alice', key)).statusCode).toBe(200);

    const keysPage = (await get(t, '/console/account', owner)).body;
    const newId = [...keysPage.matchAll(/action="\/console\/account\/keys\/(\d+)\/revoke"/g)].map((m) => Number(m[1])).reduce((newest, n) => Math.max(newest, n), 0); // the rolled key: the newest
    expect((await post(t, `/console/account/keys/${newId}/revoke`, {}, owner)).statusCode).toBe(303);
    expect((await lookup('alice', next)).statusCode).toBe(401);

    // Another account's key cannot be named from a customer's console.
    const mallorysKeys = await t.services.accounts.listKeys('mallory');
    const foreign = await post(t, `/console/account/keys/${mallorysKeys[0]?.id ?? 0}/revoke`, {}, owner);
    expect(foreign.statusCode).toBe(404);
    expect((await t.services.accounts.listKeys('mallory'))[0]?.revokedAt).toBeNull();
  });

  it('lets a member read but not change keys', async () => {
    await t.account('alice', 10);
    const member = await customerSession('alice', 'alice-member', 'member');
    const page = await get(t, '/console/account', member);
    expect(page.body).not.toContain('Create key');
    expect((await post(t, '/console/account/keys', { name: 'x' }, member)).statusCode).toBe(403);
  });

  it('invites a customer from the operator console; the invite page sets the password once and logs the customer in', async () => {
    await t.account('alice', 10);
    const root = await operatorSession('root');
    const invited = await post(t, '/console/admin/accounts/alice/users', { name: 'carol@example.com', role: 'owner' }, root);
    expect(invited.statusCode).toBe(201);
    const url = /data-testid="invite-url">([^<]+)</.exec(invited.body)?.[1] ?? '';
    expect(url).toMatch(/\/account\/invite#[\w-]+$/);
    expect((await get(t, '/account/invite')).statusCode).toBe(200);
    const token = url.split('#')[1] ?? '';
    expect((await post(t, '/console/invite/open', { token })).body).toContain('data-testid="invited-account">alice<');
    const accepted = await post(t, '/console/invite', { token, password: PASSWORD, confirm: PASSWORD });
    expect(accepted.headers.location).toBe('/console/account?joined=1');
    expect(sessionCookieOf(accepted)).toMatch(/^vl_session=[\w-]+;/);
    const again = await post(t, '/console/invite', { token, password: PASSWORD, confirm: PASSWORD });
    expect(again.statusCode).toBe(410);
    const carol = await consoleLogin(t, 'carol@example.com');
    expect((await get(t, '/console/account', carol)).body).toContain('Account alice');
  });

  it('refuses a login or an invite acceptance posted without its form token (login CSRF), before looking at the password', async () => {
    await users(t).createOperator('root', 'admin', true).then(({ inviteToken }) => users(t).acceptInvite(inviteToken ?? '', PASSWORD));
    const page = await t.app.inject({ url: '/console/login' });
    expect(([] as string[]).concat(page.headers['set-cookie'] ?? [])).toEqual([expect.stringMatching(/^vl_login_form=[\w-]{43}; Path=\/console\/login; HttpOnly; SameSite=Strict; Max-Age=3600$/)]);
    // A hostile page can post the right password, but neither our cookie (SameSite=Strict) nor our page's token.
    const forged = [
      await post(t, '/console/login', { username: 'root', password: PASSWORD }, undefined, { csrf: false }),
      await post(t, '/console/login', { username: 'root', password: PASSWORD, _csrf: 'guessed' }, undefined, { csrf: false }),
      await post(t, '/console/login', { username: 'root', password: PASSWORD }, { ...(await openForm(t, '/console/login')), csrf: 'x'.repeat(43) }),
      await post(t, '/console/login', { username: 'root', password: PASSWORD, _csrf: (await openForm(t, '/console/login')).csrf }, undefined, { csrf: false }),
    ];
    for (const res of forged) {
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('This form has expired or was not sent from this site');
      expect(sessionCookieOf(res)).toBe('');
    }
    // Refused before the password check: none of them counted as a failed login.
    for (let i = 0; i < 4; i += 1) expect((await post(t, '/console/login', { username: 'root', password: 'not the password' })).statusCode).toBe(401);
    expect((await post(t, '/console/login', { username: 'root', password: PASSWORD })).statusCode).toBe(303);

    const { inviteToken } = await users(t).createOperator('second', 'viewer', true);
    const invite = await post(t, '/console/invite', { token: inviteToken ?? '', password: PASSWORD, confirm: PASSWORD }, undefined, { csrf: false });
    expect(invite.statusCode).toBe(403);
    expect((await post(t, '/console/invite', { token: inviteToken ?? '', password: PASSWORD, confirm: PASSWORD })).headers.location).toBe('/console/admin');
  });

  it('makes an operator created with a one-time password set its own before anything else', async () => {
    const { password } = await users(t).createOperator('first', 'admin', false);
    const res = await post(t, '/console/login', { username: 'first', password: password ?? '' });
    expect(res.headers.location).toBe('/console/password');
    const cookie = sessionCookieOf(res).split(';', 1)[0] ?? '';
    const overview = await get(t, '/console/admin', { cookie, csrf: '' });
    expect(overview.headers.location).toBe('/console/password');
    const form = await get(t, '/console/password', { cookie, csrf: '' });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
    const changed = await post(t, '/console/password', { currentPassword: password ?? '', newPassword: PASSWORD, confirm: PASSWORD }, { cookie, csrf });
    // Straight on into the console (issue 34): no confirmation page with a link to click.
    expect(changed.headers.location).toBe('/console/admin');
    expect((await get(t, '/console/admin', { cookie, csrf })).statusCode).toBe(200);
    // A change chosen later, from the console, is still confirmed on its page (issue 26 item 12).
    const again = await post(t, '/console/password', { currentPassword: PASSWORD, newPassword: `${PASSWORD}2`, confirm: `${PASSWORD}2` }, { cookie, csrf });
    expect(again.headers.location).toBe('/console/password?changed=1');
    const confirmed = await get(t, '/console/password?changed=1', { cookie, csrf });
    expect(confirmed.body).toContain('Your password is changed.');
    expect(confirmed.body).toContain('<a href="/console/admin">Go on to the console</a>');
  });

  it('after the forced change the operator goes on to the page the first login asked for', async () => {
    const { password } = await users(t).createOperator('deeplinked', 'admin', false);
    const res = await post(t, '/console/login', { username: 'deeplinked', password: password ?? '', next: '/console/admin/accounts' });
    expect(res.headers.location).toBe('/console/password?next=%2Fconsole%2Fadmin%2Faccounts');
    const cookie = sessionCookieOf(res).split(';', 1)[0] ?? '';
    const form = await get(t, '/console/password?next=%2Fconsole%2Fadmin%2Faccounts', { cookie, csrf: '' });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
    const next = /name="next" value="([^"]+)"/.exec(form.body)?.[1];
    expect(next).toBe('/console/admin/accounts');
    const changed = await post(t, '/console/password', { currentPassword: password ?? '', newPassword: PASSWORD, confirm: PASSWORD, next: next ?? '' }, { cookie, csrf });
    expect(changed.headers.location).toBe('/console/admin/accounts');
  });

  it('logs out: the session ends on the server', async () => {
    const root = await operatorSession('root');
    const res = await post(t, '/console/logout', {}, root);
    expect(res.headers.location).toBe('/console/login');
    // A browser drops the cleared cookie; one that kept it names a session the store no longer has.
    expect((await get(t, '/console/admin', root)).headers.location).toBe('/console/login?session=ended&next=%2Fconsole%2Fadmin');
    expect((await t.app.inject({ url: '/console/admin' })).headers.location).toBe('/console/login?next=%2Fconsole%2Fadmin');
  });
});

describe('web console limits', () => {
  it('answers a caller over its per-minute budget with a 429 page and Retry-After', async () => {
    const t = await createTestApp();
    try {
      let last = await get(t, '/console/login');
      for (let i = 0; i < 600 && last.statusCode !== 429; i += 1) last = await get(t, '/console/login');
      expect(last.statusCode).toBe(429);
      expect(last.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });
});

describe('console Try it and upstream status', () => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp();
    await t.importRecords([FRANCE]);
  });
  afterEach(async () => {
    await t.close();
  });

  async function customerSession(account: string, name: string, role: 'owner' | 'member' = 'owner'): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createCustomer(account, name, role);
    await users(t).acceptInvite(inviteToken, PASSWORD);
    return consoleLogin(t, name);
  }

  it('runs a lookup as the session\'s account (a member too): charged once, in the ledger, answered in JSON and GET-binding XML', async () => {
    await t.account('alice', 10);
    const member = await customerSession('alice', 'alice-member', 'member');
    const form = await get(t, '/console/account/try?operation=CheckFrance', member);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('<label for="p-RegistrationNumber">RegistrationNumber</label>');
    expect(form.body).toContain("spends your account's credits");

    const res = await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'EG258MA' }, member);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Charged: <strong>1</strong> credit.');
    expect(res.body).toContain('data-testid="try-balance">9<');
    expect(res.body).toMatch(/data-testid="json-answer">[^<]*Peugeot 208 Allure/);
    expect(res.body).toMatch(/data-testid="xml-answer">&lt;\?xml[^<]*Peugeot 208 Allure/);

    const account = await get(t, '/console/account', member);
    expect(account.body).toContain('data-testid="balance">9<');
    expect(account.body.match(/lookup of <code>EG258MA<\/code>/g)).toHaveLength(1);
  });

  it('marks a test plate free and charges nothing for it', async () => {
    await t.account('alice', 0);
    await t.services.testPlates.add('CheckFrance', 'EG258MA', SYSTEM_ACTOR);
    const owner = await customerSession('alice', 'alice-owner');
    const res = await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'EG258MA' }, owner);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Charged: 0 credits — this lookup <strong data-testid="free-reason" data-reason="free test plate">is free: a test plate</strong>.');
    expect(await t.services.accounts.balance('alice')).toBe(0);
    // The page says what the ledger row says.
    expect((await get(t, '/console/account', owner)).body).toContain('lookup of <code>EG258MA</code> over console is free: a test plate.');
  });

  it('says a lookup whose answer holds nothing to charge for is free for that reason, and charges nothing', async () => {
    await t.account('alice', 3);
    const owner = await customerSession('alice', 'alice-owner');
    const res = await post(t, '/console/account/try', { operation: 'CheckEuroNCap', Make: 'Nonexistent', Model: 'Car' }, owner);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data-reason="free: no result">is free: the answer held no data to charge for (an empty search or list)</strong>');
    expect(res.body).toContain('data-testid="try-balance">3<');
    expect(await t.services.accounts.balance('alice')).toBe(3);
  });

  it('gives no free reason for a charged lookup', async () => {
    await t.account('alice', 3);
    const owner = await customerSession('alice', 'alice-owner');
    const res = await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'EG258MA' }, owner);
    expect(res.body).toContain('Charged: <strong>1</strong> credit.');
    expect(res.body).not.toContain('free-reason');
  });

  it("shows free lookups in the customer's ledger with why they were free, filters them, and charts them apart from the charged ones", async () => {
    const key = await t.account('alice', 5);
    await t.services.testPlates.add('CheckFrance', 'EG258MA', SYSTEM_ACTOR);
    const owner = await customerSession('alice', 'alice-owner');
    expect((await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'EG258MA' }, owner)).statusCode).toBe(200);
    await t.app.inject({ url: '/api/json.aspx/CheckEuroNCap/Nonexistent/Car', headers: { authorization: t.basic('alice', key) } });
    await t.services.testPlates.remove('CheckFrance', 'EG258MA', SYSTEM_ACTOR);
    expect((await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('alice', key) } })).headers['x-credits-charged']).toBe('1');

    const page = (await get(t, '/console/account', owner)).body;
    expect(page).toContain('lookup of <code>EG258MA</code> over console is free: a test plate.');
    expect(page).toContain('lookup of <code>NONEXISTENT (CAR)</code> over json is free: the answer held no data to charge for');
    expect(page).toContain('data-testid="lookups-30d">1<');
    expect(page).toContain('data-testid="free-30d">and 2 free<');
    // Three lookups in the chart: one charged segment, one grey free segment of 2.
    expect(page).toContain('data-total="3"');
    expect(page).toMatch(/fill="#888888"><title>\d{4}-\d\d-\d\d free \(no credits\): 2<\/title>/);

    const free = (await get(t, '/console/account?type=free', owner)).body;
    expect(free).toContain('is free: a test plate.');
    expect(free).not.toContain('costs 1 credit');
    expect(free).toContain('<option value="free" selected>');
    expect(free).toContain('href="/account/api/ledger.csv?type=free"');
    const charged = (await get(t, '/console/account?type=charged', owner)).body;
    expect(charged).toContain('costs 1 credit');
    expect(charged).not.toContain('is free:');
    // Links from before free rows had a type of their own keep working.
    const older = (await get(t, '/console/account?charged=true', owner)).body;
    expect(older).toContain('<option value="charged" selected>');
    expect(older).not.toContain('is free:');
    const both = await get(t, '/console/account?type=free&charged=true', owner);
    expect(both.statusCode).toBe(400);
    expect(both.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(both.body).toContain('give either type or charged');
  });

  it('runs for an account whose XML bindings require the API key: the session, not a key, authenticates it', async () => {
    await t.account('alice', 10);
    await t.services.accounts.withActor({ kind: 'operator', name: 'ops', address: '127.0.0.1' }).setRequireApiKey('alice', true);
    const owner = await customerSession('alice', 'alice-owner');
    const res = await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'EG258MA' }, owner);
    expect(res.statusCode).toBe(200);
    expect(await t.services.accounts.balance('alice')).toBe(9);
  });

  it('charges nothing for a plate that is not found, and shows the error', async () => {
    await t.account('alice', 10);
    const owner = await customerSession('alice', 'alice-owner');
    const res = await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'ZZ999ZZ' }, owner);
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('<div class="error" role="alert">France Lookup failed</div>');
    expect(res.body).toContain('Charged: 0 credits');
    const account = await get(t, '/console/account', owner);
    expect(account.body).toContain('data-testid="balance">10<');
    expect(account.body).not.toContain('ZZ999ZZ');
  });

  it('refuses a run without the CSRF token and charges nothing', async () => {
    await t.account('alice', 10);
    const owner = await customerSession('alice', 'alice-owner');
    const res = await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: 'EG258MA' }, owner, { csrf: false });
    expect(res.statusCode).toBe(403);
    expect((await get(t, '/console/account', owner)).body).toContain('data-testid="balance">10<');
  });

  it('renders typed values and error messages as text', async () => {
    await t.account('alice', 10);
    const owner = await customerSession('alice', 'alice-owner');
    const evil = '"><script>alert(1)</script>';
    const res = await post(t, '/console/account/try', { operation: 'CheckFrance', RegistrationNumber: evil }, owner);
    expect(res.body).not.toContain('<script>alert(1)</script>');
    expect(res.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
  });

  it('shows upstream providers on the operator overview as /readyz reports them', async () => {
    const { inviteToken } = await users(t).createOperator('ops', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    const session = await consoleLogin(t, 'ops');
    const res = await get(t, '/console/admin', session);
    expect(res.body).toContain('data-testid="upstream"');
    const readyz = (await t.app.inject({ url: '/readyz' })).json<{ providers: Record<string, unknown> }>();
    for (const name of Object.keys(readyz.providers)) expect(res.body).toContain(`<td>${name}</td>`);
  });

  it('renders a provider\'s breaker, latency, failures and last error, escaped', () => {
    const viewer = { user: { name: 'ops', role: 'admin', accountId: null, account: null, mustChangePassword: false }, csrf: 'x', canWrite: true } as unknown as Viewer;
    const out = overviewPage(viewer, {
      accounts: 0,
      low: { accounts: [], total: 0 },
      usage: [],
      days: [],
      rates: { day: [], month: [] },
      upstream: {
        ukvd: { enabled: true, status: 'down', breaker: 'open', consecutiveFailures: 5, lastLatencyMs: 1234, requests: { total: 9, failed: 5 }, lookups: { upstream: 4, cache: 2, unavailable: 3 }, lastFailure: { at: '2026-11-25T17:00:00.000Z', kind: 'timeout', message: '<b>slow</b>' } },
        dvla: { enabled: false, status: 'disabled', reason: 'DVLA_API_KEY is not set' },
      },
    });
    expect(out).toContain('<td>ukvd</td><td>down</td><td>open');
    expect(out).toContain('<td class="num">1234</td><td class="num">5 / 9</td><td class="num">4 / 2 / 3</td>');
    expect(out).toContain('timeout: &lt;b&gt;slow&lt;/b&gt;');
    expect(out).toContain('DVLA_API_KEY is not set');
  });
});
