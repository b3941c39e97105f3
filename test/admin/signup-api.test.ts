import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { FRANCE, PASSWORD, users } from './admin-harness.js';

/**
 * Self-service sign-up (issue 16): `POST /account/api/signup`, on a real port with real HTTP
 * clients, on both engines.
 */

const STACK_FRAME = /\bat\s+\S+\s+\(|node_modules|\.ts:\d+/;
const DAY_S = 24 * 3600;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
  readonly json: Record<string, unknown>;
}

async function answer(res: Response): Promise<Answer> {
  const body = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(body) as Record<string, unknown>;
  } catch {
    // Not JSON (a CSV); the tests that read it use `body`.
  }
  return { status: res.status, headers: res.headers, body, json };
}

/** The session cookie a sign-up or login set (`name=value`), or '' when none. */
function sessionOf(res: Answer): string {
  return res.headers.getSetCookie().find((c) => c.startsWith('vl_session='))?.split(';', 1)[0] ?? '';
}

describe('sign-up while SIGNUP_ENABLED is off (the default)', () => {
  let t: TestApp;
  let base: string;
  beforeEach(async () => {
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    await t.close();
  });

  it('answers the 404 of a route that does not exist, creates nothing, and no page links to sign-up', async () => {
    const post = (path: string) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: PASSWORD }) }).then(answer);
    const signup = await post('/account/api/signup');
    const missing = await post('/account/api/nothing-here');
    expect(signup.status).toBe(404);
    expect(signup.json).toEqual({ error: 'not-found', message: 'no route POST /account/api/signup' });
    expect(missing.json).toEqual({ error: 'not-found', message: 'no route POST /account/api/nothing-here' });
    expect(signup.headers.getSetCookie()).toEqual([]);
    expect(await t.services.accounts.isEmpty()).toBe(true);
    expect(await users(t).findByName('alice')).toBeUndefined();
    for (const path of ['/', '/console/login']) {
      const page = await fetch(`${base}${path}`).then(answer);
      expect(page.status, path).toBe(200);
      expect(page.body, path).not.toContain('/console/signup');
    }
    const form = await fetch(`${base}/console/signup`).then(answer);
    expect(form.status).toBe(404);
    expect(form.headers.get('content-type')).toMatch(/^text\/html/);
    expect(form.body).not.toContain('<form method="post" action="/console/signup"');
  });
});

describe.each(ENGINES)('sign-up API on %s', (engine) => {
  let t: TestApp;
  let base: string;
  /** How far the app's clock runs ahead of real time (to pass the 24-hour window). */
  let ahead = 0;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    ahead = 0;
    t = await createTestApp(
      { SIGNUP_ENABLED: 'true', SIGNUP_TRIAL_CREDITS: '25', SIGNUP_PER_ADDRESS_PER_DAY: '3', TRUST_PROXY: 'true' },
      { now: () => new Date(Date.now() + ahead), millis: () => Date.now() + ahead },
      engine,
    );
    await t.importRecords([FRANCE]);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  /** Posts a sign-up as JSON, from `address` (X-Forwarded-For, trusted in these apps) when given. */
  const signUp = (body: unknown, address?: string): Promise<Answer> =>
    fetch(`${base}/account/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(address === undefined ? {} : { 'x-forwarded-for': address }) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(answer);

  /** A request with the session cookie (and its CSRF token on writes). */
  const call = (session: { cookie: string; csrf: string }, method: string, path: string, body?: unknown): Promise<Answer> =>
    fetch(`${base}${path}`, {
      method,
      headers: { cookie: session.cookie, ...(body === undefined ? {} : { 'content-type': 'application/json', 'x-csrf-token': session.csrf }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(answer);

  const lookup = (username: string, key: string) => fetch(`${base}/api/json.aspx/CheckFrance/EG258MA`, { headers: { authorization: t.basic(username, key) } });

  it('answers 201 with the account and its trial credits, and logs the owner in as /login does', async () => {
    const res = await signUp({ username: 'alice', password: PASSWORD });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.json).toMatchObject({
      user: { name: 'alice', role: 'owner', account: 'alice', active: true, mustChangePassword: false, disabled: false },
      account: { username: 'alice', credits: 25, status: 'active', requireApiKey: true },
    });
    expect(res.json.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.headers.getSetCookie().find((c) => c.startsWith('vl_session='))).toMatch(/^vl_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    const session = { cookie: sessionOf(res), csrf: String(res.json.csrfToken) };
    expect((await call(session, 'GET', '/account/api/me')).json).toMatchObject({ user: { name: 'alice', account: 'alice' }, canWrite: true, csrfToken: session.csrf });
    expect((await call(session, 'GET', '/account/api/balance')).json).toEqual({ credits: 25, status: 'active' });
    // The chosen password works at the login too.
    const login = await fetch(`${base}/account/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: PASSWORD }) });
    expect(login.status).toBe(200);
  });

  it('grants the trial credits as one ledger row noted "trial credits (sign-up)", and none when the trial is 0', async () => {
    const res = await signUp({ username: 'alice', password: PASSWORD });
    const session = { cookie: sessionOf(res), csrf: String(res.json.csrfToken) };
    const ledger = await call(session, 'GET', '/account/api/ledger');
    expect(ledger.json.rows).toEqual([
      expect.objectContaining({ kind: 'topup', reason: 'trial credits', delta: 25, balanceAfter: 25, note: 'trial credits (sign-up)', reference: null, operation: null }),
    ]);
    expect((await call(session, 'GET', '/account/api/ledger.csv')).body).toContain(',trial credits,25,25,');
    const rows = await t.services.accounts.usage('alice');
    expect(rows.map((r) => [r.kind, r.delta, r.balanceAfter, r.query])).toEqual([['topup', 25, 25, 'trial credits (sign-up)']]);

    const free = await createTestApp({ SIGNUP_ENABLED: 'true', SIGNUP_TRIAL_CREDITS: '0' }, undefined, engine);
    try {
      const zero = await free.app.inject({ method: 'POST', url: '/account/api/signup', payload: { username: 'bob', password: PASSWORD } });
      expect(zero.statusCode).toBe(201);
      expect(zero.json()).toMatchObject({ account: { username: 'bob', credits: 0 } });
      expect(await free.services.accounts.usage('bob')).toEqual([]);
    } finally {
      await free.close();
    }
  });

  it('records the sign-up in the audit log as made by the new customer from its address, without a secret', async () => {
    await signUp({ username: 'alice', password: PASSWORD }, '198.51.100.4');
    const rows = await t.services.audit.list({ limit: 10 });
    expect(rows.map((r) => [r.action, r.targetKind, r.target, r.actor])).toEqual([
      ['user.create', 'user', 'alice', { kind: 'customer', name: 'alice', address: '198.51.100.4' }],
      ['account.signup', 'account', 'alice', { kind: 'customer', name: 'alice', address: '198.51.100.4' }],
    ]);
    expect(rows[1]?.after).toEqual({ credits: 25, requireApiKey: true });
    expect(rows[0]?.after).toMatchObject({ role: 'owner', signUp: true });
    const text = JSON.stringify(rows);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('scrypt');
  });

  it('starts without a key and requires one on every binding; the owner creates one and it works', async () => {
    const res = await signUp({ username: 'alice', password: PASSWORD });
    const session = { cookie: sessionOf(res), csrf: String(res.json.csrfToken) };
    expect((await call(session, 'GET', '/account/api/keys')).json).toEqual({ keys: [] });
    // A username alone (the XML bindings' way) does not spend a signed-up account's credits.
    const byName = await fetch(`${base}/api/reg.asmx/CheckFrance?RegistrationNumber=EG258MA&username=alice`);
    expect(byName.status).toBe(500);
    expect(await byName.text()).toBe('Your username is incorrect\r\n');
    const created = await call(session, 'POST', '/account/api/keys', { name: 'first' });
    expect(created.status).toBe(201);
    const apiKey = String(created.json.apiKey);
    const paid = await lookup('alice', apiKey);
    expect(paid.status).toBe(200);
    expect(paid.headers.get('x-credits-remaining')).toBe('24');
    const withKey = await fetch(`${base}/api/reg.asmx/CheckFrance?RegistrationNumber=EG258MA&username=alice`, { headers: { authorization: t.basic('alice', apiKey) } });
    expect(withKey.status).toBe(200);
  });

  it('refuses a name taken by an account or by a user with 409, and changes nothing', async () => {
    await t.account('acme', 5);
    await users(t).createOperator('root', 'admin', true);
    for (const username of ['acme', 'root']) {
      const res = await signUp({ username, password: PASSWORD });
      expect(res.status, username).toBe(409);
      expect(res.json, username).toEqual({ error: 'already-exists', message: `the name ${username} is taken; choose another` });
      expect(res.headers.getSetCookie(), username).toEqual([]);
    }
    expect((await t.services.accounts.show('acme')).credits).toBe(5);
    expect(await users(t).list((await t.services.accounts.show('acme')).id)).toEqual([]);
    expect((await t.services.accounts.list({ limit: 10, offset: 0 })).total).toBe(1);
    expect(await t.services.audit.list({ action: 'account.signup', limit: 10 })).toEqual([]);
  });

  it('refuses bad input with a 400 naming the field, never a stack trace', async () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ password: PASSWORD }, 'username'],
      [{ username: 'alice' }, 'password'],
      [{ username: 'alice', password: 'too short' }, 'password'],
      [{ username: 'alice', password: 'x'.repeat(257) }, 'password'],
      [{ username: '<script>', password: PASSWORD }, 'username'],
      [{ username: 'a'.repeat(65), password: PASSWORD }, 'username'],
      [{ username: '', password: PASSWORD }, 'username'],
      [{ username: { name: 'alice' }, password: PASSWORD }, 'username'],
      [{ username: 'alice', password: PASSWORD, credits: 1_000_000 }, 'credits'],
      [{ username: 'alice', password: PASSWORD, role: 'admin' }, 'role'],
    ];
    for (const [body, field] of cases) {
      const res = await signUp(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json, JSON.stringify(body)).toMatchObject({ error: 'invalid-request', field });
      expect(res.body).not.toMatch(STACK_FRAME);
    }
    expect((await signUp({ username: 'alice', password: PASSWORD, credits: 1 })).json.message).toBe('body: unknown field credits');
    const broken = await signUp('{"username": "alice", ');
    expect(broken.status).toBe(400);
    expect(broken.body).not.toMatch(STACK_FRAME);
    expect(await t.services.accounts.isEmpty()).toBe(true);
  });

  it('allows SIGNUP_PER_ADDRESS_PER_DAY sign-ups per address in any 24 hours, then 429 with Retry-After until the oldest leaves the window', async () => {
    const address = '203.0.113.7';
    const HOUR_MS = 3_600_000;
    // A refused sign-up (the name is taken) does not count.
    await t.account('taken', 0);
    expect((await signUp({ username: 'taken', password: PASSWORD }, address)).status).toBe(409);
    expect((await signUp({ username: 'one', password: PASSWORD }, address)).status).toBe(201);
    ahead = HOUR_MS;
    for (const username of ['two', 'three']) expect((await signUp({ username, password: PASSWORD }, address)).status, username).toBe(201);
    const refused = await signUp({ username: 'four', password: PASSWORD }, address);
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ error: 'rate-limited' });
    expect(String(refused.json.message)).toMatch(/^at most 3 sign-ups from one address in 24 hours; retry in \d+ s$/);
    // The place of `one`, made an hour ago, frees in 23 hours.
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(DAY_S - 3600 - 120);
    expect(wait).toBeLessThanOrEqual(DAY_S - 3600);
    expect(refused.headers.getSetCookie()).toEqual([]);
    await expect(t.services.accounts.show('four')).rejects.toThrow('no account named four');
    // Another address is not held back.
    expect((await signUp({ username: 'five', password: PASSWORD }, '203.0.113.8')).status).toBe(201);
    // The window slides: just before `one` is 24 hours old, still refused; just after, one place.
    ahead = DAY_S * 1000 - 60_000;
    expect((await signUp({ username: 'four', password: PASSWORD }, address)).status).toBe(429);
    ahead = DAY_S * 1000 + 1000;
    expect((await signUp({ username: 'four', password: PASSWORD }, address)).status).toBe(201);
    expect((await signUp({ username: 'six', password: PASSWORD }, address)).status).toBe(429);
  });

  it('gives sign-ups running at once exactly the places left, and a name to one of them only', async () => {
    const together = await Promise.all(['p1', 'p2', 'p3', 'p4', 'p5', 'p6'].map((username) => signUp({ username, password: PASSWORD }, '192.0.2.1')));
    expect(together.map((r) => r.status).sort()).toEqual([201, 201, 201, 429, 429, 429]);
    const same = await Promise.all(['192.0.2.10', '192.0.2.11', '192.0.2.12', '192.0.2.13'].map((address) => signUp({ username: 'popular', password: PASSWORD }, address)));
    expect(same.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    expect((await t.services.accounts.list({ limit: 50, offset: 0 })).total).toBe(4);
    expect(await t.services.audit.list({ action: 'account.signup', limit: 50 })).toHaveLength(4);
  });

  it('shows the new customer its own account only, and cannot sign up into an existing one', async () => {
    const theirs = await t.account('theirs', 7);
    expect((await lookup('theirs', theirs)).status).toBe(200);
    const res = await signUp({ username: 'mine', password: PASSWORD });
    const session = { cookie: sessionOf(res), csrf: String(res.json.csrfToken) };
    for (const path of ['/account/api/account', '/account/api/balance', '/account/api/keys', '/account/api/ledger', '/account/api/ledger.csv', '/account/api/usage?from=2000-01-01T00:00:00Z&to=2000-12-31T00:00:00Z']) {
      const seen = await call(session, 'GET', path);
      expect(seen.status, path).toBe(200);
      expect(seen.body, path).not.toContain('theirs');
      expect(seen.body, path).not.toContain('EG258MA');
    }
    expect((await call(session, 'GET', '/account/api/account')).json).toMatchObject({ username: 'mine', credits: 25 });
    expect((await call(session, 'GET', '/admin/api/accounts/theirs')).status).toBe(403);
    expect((await call(session, 'GET', '/admin/api/accounts')).status).toBe(403);
    const [theirKey] = await t.services.accounts.listKeys('theirs');
    expect((await call(session, 'POST', `/account/api/keys/${theirKey?.id ?? 0}/revoke`, {})).status).toBe(404);
    expect((await lookup('theirs', theirs)).status).toBe(200);
    // Signing up under an existing account's name is refused: no session, no user on that account.
    const takeover = await signUp({ username: 'theirs', password: PASSWORD });
    expect(takeover.status).toBe(409);
    expect(sessionOf(takeover)).toBe('');
    expect(await users(t).list((await t.services.accounts.show('theirs')).id)).toEqual([]);
    expect((await t.services.accounts.show('theirs')).credits).toBe(5);
  });
});
