import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loginPath, safeReturnPath } from '../../src/http/console/return-path.js';
import { SESSION_TTL_MS } from '../../src/users/user.service.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { form } from './console-harness.js';

/**
 * Issue 26 item 12: a page opened while logged out comes back after the login (and after a first
 * login's forced password change), only ever to a console path of this site; and a session ended
 * by "Log out everywhere" or by its expiry sends the user to the login page saying so.
 */
describe('the return target after a login', () => {
  it('keeps console paths of this site, normalised, with their query', () => {
    expect(safeReturnPath('/console/admin/accounts/acme')).toBe('/console/admin/accounts/acme');
    expect(safeReturnPath('/console/account/keys')).toBe('/console/account/keys');
    expect(safeReturnPath('/console/admin/accounts/acme/ledger?operation=CheckUSA')).toBe('/console/admin/accounts/acme/ledger?operation=CheckUSA');
    expect(safeReturnPath('/console/admin/./accounts')).toBe('/console/admin/accounts');
    expect(safeReturnPath('/console')).toBe('/console');
  });

  it('refuses absolute URLs, //host, backslashes, control characters, other paths and ways out of /console', () => {
    for (const bad of [
      'https://evil.example/console/admin',
      'http:/console/admin',
      'javascript:alert(1)',
      '//evil.example/console/admin',
      '///evil.example/console',
      '/\\evil.example/console',
      '\\\\evil.example\\console',
      '/console\\..\\..\\evil',
      '/\t/evil.example/console',
      '/console/admin\n',
      '/console /admin',
      '/admin/api/accounts',
      '/api/json.aspx/CheckUSA/X',
      '/consoles',
      '/console/../admin/api/accounts',
      '/console/%2e%2e/admin/api/accounts',
      '/console/login',
      '/console/logout-everywhere',
      'console/admin',
      '',
      `/console/${'a'.repeat(1100)}`,
    ]) {
      expect(safeReturnPath(bad), JSON.stringify(bad)).toBeUndefined();
    }
    expect(safeReturnPath(undefined)).toBeUndefined();
    expect(loginPath({ next: '//evil.example/', reason: 'ended' })).toBe('/console/login?session=ended');
  });
});

/** A browser's cookies, shared by its tabs: what the answers set, sent back with every request. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const line of ([] as string[]).concat(res.headers['set-cookie'] ?? [])) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
  has(name: string): boolean {
    return this.cookies.has(name);
  }
  header(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }
}

describe.each(await enginesToTest())('console sessions: deep links, log out everywhere, expiry on %s', (engine) => {
  let t: TestApp;
  let now = Date.parse('2026-03-01T09:00:00Z');
  const clock = { now: () => new Date(now) };

  beforeEach(async () => {
    now = Date.parse('2026-03-01T09:00:00Z');
    t = await createTestApp(await engineEnv(engine, {}), clock, engine);
    await t.account('acme', 50);
  });
  afterEach(async () => {
    await t.close();
  });

  const csrfOf = (body: string): string => /name="_csrf" value="([^"]+)"/.exec(body)?.[1] ?? '';

  async function open(jar: CookieJar, url: string): Promise<LightMyRequestResponse> {
    return jar.take(await t.app.inject({ method: 'GET', url, headers: jar.header() }));
  }
  async function submit(jar: CookieJar, url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return jar.take(await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...jar.header(), ...headers }, payload: form(fields) }));
  }
  /** Follows the redirect to the login page, fills the form as a person does (its hidden fields kept) and posts it. */
  async function logInThrough(jar: CookieJar, loginUrl: string, username: string, password = PASSWORD): Promise<LightMyRequestResponse> {
    const page = await open(jar, loginUrl);
    expect(page.statusCode).toBe(200);
    const hidden = Object.fromEntries([...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1] ?? '', (m[2] ?? '').replace(/&amp;/g, '&')]));
    return submit(jar, '/console/login', { ...hidden, username, password });
  }
  async function operator(name: string): Promise<void> {
    const { inviteToken } = await users(t).createOperator(name, 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
  }
  async function customer(name: string): Promise<void> {
    const { inviteToken } = await users(t).createCustomer('acme', name, 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
  }

  it('brings an operator and a customer back to the deep link they opened logged out, not the overview', async () => {
    await operator('root');
    await customer('dana');
    for (const [name, link] of [
      ['root', '/console/admin/accounts/acme'],
      ['root', '/console/admin/accounts?search=ac&offset=0'],
      ['dana', '/console/account/alerts'],
    ] as const) {
      const jar = new CookieJar();
      const refused = await open(jar, link);
      expect(refused.statusCode).toBe(303);
      const loginUrl = String(refused.headers.location);
      expect(loginUrl).toBe(`/console/login?next=${encodeURIComponent(link)}`);
      const page = await open(jar, loginUrl);
      expect(page.body).toContain(`<input type="hidden" name="next" value="${link.replace(/&/g, '&amp;')}">`);
      expect(page.body).not.toContain('role="status"');

      const landed = await logInThrough(jar, loginUrl, name);
      expect(landed.statusCode).toBe(303);
      expect(landed.headers.location).toBe(link);
      expect((await open(jar, link)).statusCode).toBe(200);
    }
  });

  it('keeps the page asked for through a wrong password, and goes home for a target of the other side', async () => {
    await operator('root');
    await customer('dana');
    const jar = new CookieJar();
    const wrong = await logInThrough(jar, '/console/login?next=%2Fconsole%2Fadmin%2Faudit', 'root', 'not the password');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('<input type="hidden" name="next" value="/console/admin/audit">');
    expect((await logInThrough(jar, '/console/login?next=%2Fconsole%2Fadmin%2Faudit', 'root')).headers.location).toBe('/console/admin/audit');
    // A customer sent an operator's link (or the other way round) lands on its own home, not on "Not allowed".
    expect((await logInThrough(new CookieJar(), '/console/login?next=%2Fconsole%2Fadmin%2Faudit', 'dana')).headers.location).toBe('/console/account');
    expect((await logInThrough(new CookieJar(), '/console/login?next=%2Fconsole%2Faccount', 'root')).headers.location).toBe('/console/admin');
  });

  it('never redirects a login to another site, whatever the form or the address says', async () => {
    await operator('root');
    for (const next of ['https://evil.example/', '//evil.example/console', '/\\evil.example/console', '\\\\evil.example', '/admin/api/accounts', '/console/../admin/api/accounts', 'javascript:alert(1)']) {
      // Posted in the form's hidden field by a forged page or an edited form...
      const jar = new CookieJar();
      const loginPage = await open(jar, '/console/login');
      const posted = await submit(jar, '/console/login', { _csrf: csrfOf(loginPage.body), username: 'root', password: PASSWORD, next });
      expect(posted.headers.location, next).toBe('/console/admin');
      // ... or put in a link to the login page: the page drops it.
      const linked = await open(new CookieJar(), `/console/login?next=${encodeURIComponent(next)}`);
      expect(linked.statusCode).toBe(200);
      expect(linked.body, next).not.toContain('name="next"');
    }
  });

  it('goes on to the deep link after the forced change of a one-time password', async () => {
    const { password } = await users(t).createOperator('first', 'admin', false);
    const jar = new CookieJar();
    const link = '/console/admin/accounts/acme';
    const loginUrl = String((await open(jar, link)).headers.location);
    const landed = await logInThrough(jar, loginUrl, 'first', password ?? '');
    expect(landed.headers.location).toBe(`/console/password?next=${encodeURIComponent(link)}`);
    // Any page meanwhile asks for the password first, and keeps where it was going.
    expect((await open(jar, link)).headers.location).toBe(`/console/password?next=${encodeURIComponent(link)}`);
    const passwordPage = await open(jar, String(landed.headers.location));
    expect(passwordPage.body).toContain(`<input type="hidden" name="next" value="${link}">`);
    const changed = await submit(jar, '/console/password', { _csrf: csrfOf(passwordPage.body), currentPassword: password ?? '', newPassword: PASSWORD, next: link });
    expect(changed.statusCode).toBe(303);
    expect(changed.headers.location).toBe(link);
    expect((await open(jar, link)).statusCode).toBe(200);
  });

  it('tells another tab of the browser that logged out everywhere, and another device, why they are at the login page', async () => {
    await customer('dana');
    const browser = new CookieJar();
    const phone = new CookieJar();
    for (const jar of [browser, phone]) expect((await logInThrough(jar, '/console/login', 'dana')).headers.location).toBe('/console/account');
    expect(browser.has('vl_session_state')).toBe(true);
    const keysPage = await open(browser, '/console/account');
    expect(keysPage.statusCode).toBe(200);

    // Tab 1 logs out everywhere: the session cookie is cleared, the browser remembers why.
    const ended = await submit(browser, '/console/logout-everywhere', { _csrf: csrfOf(keysPage.body) });
    expect(ended.headers.location).toBe('/console/login?ended=1');
    expect(browser.has('vl_session')).toBe(false);

    // Tab 2 of the same browser navigates...
    const navigated = await open(browser, '/console/account/alerts');
    expect(navigated.headers.location).toBe('/console/login?session=ended&next=%2Fconsole%2Faccount%2Falerts');
    const told = await open(browser, String(navigated.headers.location));
    expect(told.body).toContain('<div class="notice" role="status">You were logged out everywhere');
    expect(told.body).toContain('<input type="hidden" name="next" value="/console/account/alerts">');
    // ... or posts a form of the page it shows: back to that page after the login.
    const posted = await submit(browser, '/console/account/keys', { _csrf: csrfOf(keysPage.body), name: 'late' }, { referer: 'http://localhost/console/account' });
    expect(posted.statusCode).toBe(303);
    expect(posted.headers.location).toBe('/console/login?session=ended&next=%2Fconsole%2Faccount');
    expect((await t.services.accounts.listKeys('acme')).map((k) => k.name)).not.toContain('late');

    // The phone still has its cookie, of a session the store no longer has.
    expect((await open(phone, '/console/account')).headers.location).toBe('/console/login?session=ended&next=%2Fconsole%2Faccount');

    // Logged in again, the browser has nothing to be told any more; a plain logout says nothing either.
    expect((await logInThrough(browser, '/console/login?session=ended&next=%2Fconsole%2Faccount', 'dana')).headers.location).toBe('/console/account');
    const home = await open(browser, '/console/account');
    await submit(browser, '/console/logout', { _csrf: csrfOf(home.body) });
    expect(browser.has('vl_session_state')).toBe(false);
    expect((await open(browser, '/console/account')).headers.location).toBe('/console/login?next=%2Fconsole%2Faccount');
  });

  it('says the session expired when it did, whether or not the browser still sends its cookie', async () => {
    await operator('root');
    const jar = new CookieJar();
    await logInThrough(jar, '/console/login', 'root');
    expect((await open(jar, '/console/admin/audit')).statusCode).toBe(200);
    now += SESSION_TTL_MS + 1000;
    const kept = await open(jar, '/console/admin/audit');
    expect(kept.headers.location).toBe('/console/login?session=expired&next=%2Fconsole%2Fadmin%2Faudit');
    expect((await open(jar, String(kept.headers.location))).body).toContain('<div class="notice" role="status">Your session expired.');
    // The browser dropped the session cookie when it expired (its Max-Age is the session's).
    const state = jar.header().cookie?.split('; ').find((c) => c.startsWith('vl_session_state=')) ?? '';
    const dropped = await t.app.inject({ url: '/console/admin/audit', headers: { cookie: state } });
    expect(dropped.headers.location).toBe('/console/login?session=expired&next=%2Fconsole%2Fadmin%2Faudit');
    expect((await logInThrough(jar, String(kept.headers.location), 'root')).headers.location).toBe('/console/admin/audit');
  });
});
