import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/http/security-headers.js';
import { FRANCE, PASSWORD } from '../admin/admin-harness.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { form, get, type ConsoleSession } from './console-harness.js';

/** The console's sign-up page (issue 16), server-rendered, as a browser without JavaScript uses it. */

const STACK_FRAME = /\bat\s+\S+\s+\(|node_modules|\.ts:\d+/;

/** The page's anti-forgery cookie and the same token from its hidden field. */
interface SignupForm {
  readonly cookie: string;
  readonly token: string;
}

function setCookies(res: LightMyRequestResponse): string[] {
  const header = res.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [header];
}

async function openForm(t: TestApp): Promise<SignupForm> {
  const res = await get(t, '/console/signup');
  expect(res.statusCode).toBe(200);
  const cookie = setCookies(res).find((c) => c.startsWith('vl_signup='))?.split(';', 1)[0] ?? '';
  const token = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
  return { cookie, token };
}

/** Posts the form as a browser does: the page's cookie (and any other) and its fields. */
function submit(t: TestApp, fields: Record<string, string>, cookies: readonly string[], headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/console/signup',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookies.length > 0 ? { cookie: cookies.join('; ') } : {}), ...headers },
    payload: form(fields),
  });
}

async function signUp(t: TestApp, username: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const page = await openForm(t);
  return submit(t, { _csrf: page.token, username, password: PASSWORD, confirm: PASSWORD }, [page.cookie], headers);
}

/** The session a successful sign-up set, with the CSRF token of the page it lands on. */
async function landed(t: TestApp, res: LightMyRequestResponse): Promise<{ session: ConsoleSession; page: LightMyRequestResponse }> {
  const cookie = setCookies(res).find((c) => c.startsWith('vl_session='))?.split(';', 1)[0] ?? '';
  const page = await get(t, String(res.headers.location), { cookie, csrf: '' });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
  return { session: { cookie, csrf }, page };
}

describe('console sign-up page while sign-up is off (the default)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('answers 404 in HTML for the page and the form post, and links it from nowhere', async () => {
    for (const res of [await get(t, '/console/signup'), await submit(t, { username: 'alice', password: PASSWORD, confirm: PASSWORD }, [])]) {
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('There is no such page.');
      expect(setCookies(res).some((c) => c.startsWith('vl_signup=') || c.startsWith('vl_session='))).toBe(false);
    }
    for (const path of ['/', '/console/login']) expect((await get(t, path)).body, path).not.toContain('/console/signup');
    expect(await t.services.accounts.isEmpty()).toBe(true);
  });
});

describe.each(await enginesToTest())('console sign-up page on %s', (engine) => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp(await engineEnv(engine, { SIGNUP_ENABLED: 'true', SIGNUP_TRIAL_CREDITS: '25', SIGNUP_PER_ADDRESS_PER_DAY: '2', TRUST_PROXY: 'true' }), undefined, engine);
    await t.importRecords([FRANCE]);
  });
  afterEach(async () => {
    await t.close();
  });

  it('is linked from the front page and the login page', async () => {
    for (const path of ['/', '/console/login']) {
      const res = await get(t, path);
      expect(res.body, path).toContain('<a href="/console/signup">Sign up</a>');
    }
  });

  it('serves a labelled form whose CSRF field matches its HttpOnly, SameSite=Strict cookie, under the console security headers', async () => {
    const res = await get(t, '/console/signup');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers['cache-control']).toBe('no-store');
    const cookie = setCookies(res).find((c) => c.startsWith('vl_signup='));
    expect(cookie).toMatch(/^vl_signup=[A-Za-z0-9_-]{43}; Path=\/console\/signup; HttpOnly; SameSite=Strict; Max-Age=3600$/);
    expect(res.body).toContain(`name="_csrf" value="${cookie?.split(';', 1)[0]?.slice('vl_signup='.length) ?? 'none'}"`);
    for (const id of ['signup-username', 'signup-password', 'signup-confirm']) {
      expect(res.body).toContain(`<label for="${id}">`);
      expect(res.body).toContain(`id="${id}"`);
    }
    expect(res.body).toContain('<strong>25 trial credits</strong>');
    // Behind TLS (a trusted proxy), the form cookie is Secure too.
    const tls = await t.app.inject({ url: '/console/signup', headers: { 'x-forwarded-proto': 'https' } });
    expect(setCookies(tls).find((c) => c.startsWith('vl_signup='))).toMatch(/; Secure$/);
  });

  it('signs up, logs in and lands on the account page with a welcome and the trial balance', async () => {
    const res = await signUp(t, 'alice');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/account?welcome=1');
    const cookies = setCookies(res);
    expect(cookies.find((c) => c.startsWith('vl_session='))).toMatch(/^vl_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    expect(cookies).toContain('vl_signup=; Path=/console/signup; HttpOnly; SameSite=Strict; Max-Age=0');
    const { session, page } = await landed(t, res);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Account alice</h1>');
    expect(page.body).toContain('Welcome, your account <strong>alice</strong> is ready with 25 credits.');
    expect(page.body).toContain('<div class="value" data-testid="balance">25</div>');
    expect(page.body).toContain('Trial credits given at sign-up.');
    expect(page.body).toContain('<td colspan="8" class="muted">No keys yet.</td>');
    expect(page.body).toContain('action="/console/account/keys"');
    // The welcome shows once, on the landing only.
    expect((await get(t, '/console/account', session)).body).not.toContain('Welcome,');
    // The owner may create its first key from here; the secret is shown once.
    const key = await t.app.inject({
      method: 'POST',
      url: '/console/account/keys',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      payload: form({ _csrf: session.csrf, name: 'first' }),
    });
    expect(key.statusCode).toBe(201);
    const secret = /data-testid="secret">([^<]+)</.exec(key.body)?.[1] ?? '';
    expect((await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('alice', secret) } })).statusCode).toBe(200);
    const audit = await t.services.audit.list({ action: 'account.signup', limit: 5 });
    expect(audit.map((r) => r.actor)).toEqual([{ kind: 'customer', name: 'alice', address: '127.0.0.1' }]);
  });

  it('refuses a post without the page token, or with a token not its own, in HTML, creating nothing', async () => {
    const page = await openForm(t);
    const other = await openForm(t);
    const fields = { username: 'alice', password: PASSWORD, confirm: PASSWORD };
    const attempts = [
      await submit(t, fields, []),
      await submit(t, { ...fields, _csrf: page.token }, []),
      await submit(t, fields, [page.cookie]),
      await submit(t, { ...fields, _csrf: other.token }, [page.cookie]),
      await submit(t, { ...fields, _csrf: '' }, ['vl_signup=']),
    ];
    for (const res of attempts) {
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('This form has expired or was not sent from this site.');
      expect(setCookies(res).some((c) => c.startsWith('vl_session='))).toBe(false);
    }
    expect(await t.services.accounts.isEmpty()).toBe(true);
  });

  it('answers mistakes on the form itself, keeping the name (escaped) and the token, with the status of each', async () => {
    await t.account('taken', 0);
    const page = await openForm(t);
    const cases: ReadonlyArray<readonly [Record<string, string>, number, string]> = [
      [{ username: 'alice', password: PASSWORD, confirm: `${PASSWORD}!` }, 400, 'The two passwords differ; type the same password twice.'],
      [{ username: 'alice', password: 'too short', confirm: 'too short' }, 400, 'A password must be 12 to 256 characters.'],
      [{ username: '<b>bold</b>', password: PASSWORD, confirm: PASSWORD }, 400, 'A user name must be 1 to 64 letters, digits or . _ @ -.'],
      [{ username: 'taken', password: PASSWORD, confirm: PASSWORD }, 409, 'The name taken is taken; choose another.'],
    ];
    for (const [fields, status, text] of cases) {
      const res = await submit(t, { ...fields, _csrf: page.token }, [page.cookie]);
      expect(res.statusCode, text).toBe(status);
      expect(res.body, text).toContain(`<div class="error" role="alert">${text}</div>`);
      expect(res.body, text).toContain(`name="_csrf" value="${page.token}"`);
      expect(res.body).not.toMatch(STACK_FRAME);
    }
    const escaped = await submit(t, { username: '<b>bold</b>', password: PASSWORD, confirm: PASSWORD, _csrf: page.token }, [page.cookie]);
    expect(escaped.body).toContain('value="&lt;b&gt;bold&lt;/b&gt;"');
    expect(escaped.body).not.toContain('<b>bold</b>');
    // A field the form does not have is refused, in HTML.
    const extra = await submit(t, { username: 'alice', password: PASSWORD, confirm: PASSWORD, credits: '1000', _csrf: page.token }, [page.cookie]);
    expect(extra.statusCode).toBe(400);
    expect(extra.headers['content-type']).toBe('text/html; charset=utf-8');
    expect((await t.services.accounts.list({ limit: 10, offset: 0 })).total).toBe(1);
  });

  it('refuses past the per-address bound with 429, Retry-After and the form again', async () => {
    const from = { 'x-forwarded-for': '198.51.100.9' };
    expect((await signUp(t, 'one', from)).statusCode).toBe(303);
    expect((await signUp(t, 'two', from)).statusCode).toBe(303);
    const refused = await signUp(t, 'three', from);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(86_000);
    expect(refused.body).toContain('Too many sign-ups from your address: at most 2 sign-ups from one address in 24 hours; retry in');
    expect(refused.body).toContain('action="/console/signup"');
    expect(setCookies(refused).some((c) => c.startsWith('vl_session='))).toBe(false);
    expect((await signUp(t, 'three', { 'x-forwarded-for': '198.51.100.10' })).statusCode).toBe(303);
  });

  it("shows the new customer its own account only: not another account's name, ledger, keys or the operator pages", async () => {
    const theirs = await t.account('theirs', 7);
    expect((await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('theirs', theirs) } })).statusCode).toBe(200);
    const { session, page } = await landed(t, await signUp(t, 'mine'));
    for (const body of [page.body, (await get(t, '/console/account', session)).body, (await get(t, '/console/account/try', session)).body]) {
      expect(body).not.toContain('theirs');
      expect(body).not.toContain('EG258MA');
    }
    expect((await get(t, '/console/admin/accounts', session)).statusCode).toBe(403);
    expect((await get(t, '/console/admin/accounts/theirs', session)).statusCode).toBe(403);
    const [theirKey] = await t.services.accounts.listKeys('theirs');
    const revoke = await t.app.inject({
      method: 'POST',
      url: `/console/account/keys/${theirKey?.id ?? 0}/revoke`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      payload: form({ _csrf: session.csrf }),
    });
    expect(revoke.statusCode).toBe(404);
    expect((await t.services.accounts.listKeys('theirs')).every((k) => k.revokedAt === null)).toBe(true);
  });
});
