import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
import { INVITE_TTL_MS } from '../../src/users/user.service.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, openForm, post, type ConsoleSession } from './console-harness.js';

/** The session a response starts: its vl_session cookie (empty when it starts none). */
function sessionOf(res: LightMyRequestResponse): string {
  const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('vl_session=') && !c.startsWith('vl_session=;'));
  return set?.split(';', 1)[0] ?? '';
}
const fieldOf = (body: string, id: string) => new RegExp(`<input[^>]*id="${id}"[^>]*>`).exec(body)?.[0] ?? '';

/**
 * Issue 26 item 11: the invitation pages say which account and user name an invitation is for,
 * take the password twice, and log the invitee in; a used, expired or unknown invitation gets a
 * page that says so. The password page takes the new password twice too.
 */
describe.each(await enginesToTest())('console invitations and passwords on %s', (engine) => {
  let t: TestApp;
  /** The app's clock runs this far ahead of the test's (to expire an invitation). */
  let ahead = 0;
  beforeEach(async () => {
    ahead = 0;
    t = await createTestApp(await engineEnv(engine), { now: () => new Date(Date.now() + ahead), millis: () => Date.now() + ahead }, engine);
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 10);
  });
  afterEach(async () => {
    await t.close();
  });

  const invite = async (name = 'carol@acme.example') => (await users(t).createCustomer('acme', name, 'owner')).inviteToken;

  it('opening an invitation names the account and the user it is for, with the password asked twice', async () => {
    const token = await invite();
    const opened = await post(t, '/console/invite/open', { token });
    expect(opened.statusCode).toBe(200);
    expect(opened.body).toMatch(/invited to the account <strong data-testid="invited-account">acme<\/strong> as the user <strong data-testid="invited-user">carol@acme\.example<\/strong> \(owner\)/);
    expect(fieldOf(opened.body, 'invite-user')).toContain('value="carol@acme.example"');
    expect(fieldOf(opened.body, 'new-password')).toContain('name="password"');
    expect(fieldOf(opened.body, 'confirm-password')).toContain('name="confirm"');
    expect(opened.body).toContain('Password again');
    expect(opened.body).toContain(`<input type="hidden" name="token" value="${token}">`);
    // Opening does not use it up.
    expect((await users(t).invitation(token))?.state).toBe('open');
  });

  it('an operator invitation names the operator console', async () => {
    const { inviteToken } = await users(t).createOperator('olga', 'viewer', true);
    const opened = await post(t, '/console/invite/open', { token: inviteToken ?? '' });
    expect(opened.body).toContain('operator console</strong> as <strong data-testid="invited-user">olga</strong> (viewer)');
  });

  it('two different passwords are refused at the second field, the invitation still open, no session', async () => {
    const token = await invite();
    const res = await post(t, '/console/invite', { token, password: PASSWORD, confirm: `${PASSWORD}!` });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('The two passwords differ: type the same password in both fields.');
    expect(fieldOf(res.body, 'confirm-password')).toContain('aria-invalid="true"');
    expect(fieldOf(res.body, 'confirm-password')).toContain('aria-describedby="confirm-password-error"');
    expect(res.body).toContain('id="confirm-password-error"');
    // The page still says whose invitation it is, and never echoes a password.
    expect(res.body).toContain('data-testid="invited-account">acme<');
    expect(res.body).not.toContain(PASSWORD);
    expect(sessionOf(res)).toBe('');
    expect((await users(t).invitation(token))?.state).toBe('open');
  });

  it('a missing second password or a short one is said at its field', async () => {
    const token = await invite();
    const missing = await post(t, '/console/invite', { token, password: PASSWORD });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('Password again is needed.');
    const short = await post(t, '/console/invite', { token, password: 'short', confirm: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('A password must be 12 to 256 characters.');
    expect(fieldOf(short.body, 'new-password')).toContain('aria-describedby="new-password-error new-password-hint"');
    expect((await users(t).invitation(token))?.state).toBe('open');
  });

  it('accepting logs the invitee in and lands in the console, not on the login page', async () => {
    const token = await invite();
    const res = await post(t, '/console/invite', { token, password: PASSWORD, confirm: PASSWORD });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/account?joined=1');
    const cookie = sessionOf(res);
    expect(cookie).not.toBe('');
    // The invite form's anti-forgery cookie is cleared with it.
    expect(([] as string[]).concat(res.headers['set-cookie'] ?? [])).toContainEqual(expect.stringMatching(/^vl_invite_form=; .*Max-Age=0/));
    const landed = await get(t, '/console/account?joined=1', { cookie, csrf: '' });
    expect(landed.statusCode).toBe(200);
    expect(landed.body).toContain('Account acme');
    expect(landed.body).toContain('Welcome, carol@acme.example: your password is set and you are logged in to the account <strong>acme</strong>.');
    // And the password works for a later login.
    await consoleLogin(t, 'carol@acme.example');
  });

  it('an operator who accepts lands on the overview, logged in', async () => {
    const { inviteToken } = await users(t).createOperator('olga', 'admin', true);
    const res = await post(t, '/console/invite', { token: inviteToken ?? '', password: PASSWORD, confirm: PASSWORD });
    expect(res.headers.location).toBe('/console/admin');
    expect((await get(t, '/console/admin', { cookie: sessionOf(res), csrf: '' })).statusCode).toBe(200);
  });

  it('a used invitation gets a page that says so, both when opened and when posted again', async () => {
    const token = await invite();
    expect((await post(t, '/console/invite', { token, password: PASSWORD, confirm: PASSWORD })).statusCode).toBe(303);
    const opened = await post(t, '/console/invite/open', { token });
    expect(opened.statusCode).toBe(410);
    expect(opened.body).toContain('Invitation already used');
    expect(opened.body).toContain('the password of <strong>carol@acme.example</strong> is set');
    const again = await post(t, '/console/invite', { token, password: 'another password here', confirm: 'another password here' });
    expect(again.statusCode).toBe(410);
    expect(sessionOf(again)).toBe('');
    await consoleLogin(t, 'carol@acme.example');
  });

  it('an expired invitation gets a page that says so, and sets no password', async () => {
    const token = await invite();
    ahead = INVITE_TTL_MS + 60_000;
    const opened = await post(t, '/console/invite/open', { token });
    expect(opened.statusCode).toBe(410);
    expect(opened.body).toContain('Invitation expired');
    expect(opened.body).toContain('invitations work for 7 days');
    const posted = await post(t, '/console/invite', { token, password: PASSWORD, confirm: PASSWORD });
    expect(posted.statusCode).toBe(410);
    expect(sessionOf(posted)).toBe('');
    expect((await users(t).findByName('carol@acme.example'))?.active).toBe(false);
  });

  it('an unknown code gets a page that says so; an empty one is asked for at its field', async () => {
    const unknown = await post(t, '/console/invite/open', { token: 'not-a-real-code' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('This invitation code is not known.');
    const empty = await post(t, '/console/invite/open', { token: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('Invitation code is needed.');
    expect(fieldOf(empty.body, 'invite-token')).toContain('aria-invalid="true"');
  });

  it('both invitation forms are refused without their anti-forgery token, before the code is looked at', async () => {
    const token = await invite();
    for (const url of ['/console/invite/open', '/console/invite']) {
      const forged = await post(t, url, { token, password: PASSWORD, confirm: PASSWORD }, undefined, { csrf: false });
      expect(forged.statusCode).toBe(403);
      expect(forged.body).not.toContain('acme');
    }
    const wrong = await post(t, '/console/invite', { token, password: PASSWORD, confirm: PASSWORD }, { ...(await openForm(t, '/console/invite')), csrf: 'x'.repeat(43) });
    expect(wrong.statusCode).toBe(403);
    expect((await users(t).invitation(token))?.state).toBe('open');
  });

  describe('the password page', () => {
    async function carol(): Promise<ConsoleSession> {
      await users(t).acceptInvite(await invite(), PASSWORD);
      return consoleLogin(t, 'carol@acme.example');
    }

    it('asks for the new password twice and refuses two different ones at the second field', async () => {
      const s = await carol();
      const form = await get(t, '/console/password', s);
      expect(form.body).toContain('<label for="new-again">New password again</label>');
      expect(form.body).toContain('12 to 256 characters');
      const res = await post(t, '/console/password', { currentPassword: PASSWORD, newPassword: 'a new long password', confirm: 'a new long passwort' }, s);
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('The two new passwords differ');
      expect(fieldOf(res.body, 'new-again')).toContain('aria-describedby="new-again-error"');
      expect(res.body).not.toContain('a new long password');
      expect(res.body).toContain('action="/console/logout"');
      await consoleLogin(t, 'carol@acme.example');
    });

    it('a wrong current password is said at its field; matching ones change it', async () => {
      const s = await carol();
      const wrong = await post(t, '/console/password', { currentPassword: 'not the password', newPassword: 'a new long password', confirm: 'a new long password' }, s);
      expect(wrong.statusCode).toBe(400);
      expect(fieldOf(wrong.body, 'current')).toContain('aria-invalid="true"');
      expect(wrong.body).toContain('The current password is wrong.');
      const changed = await post(t, '/console/password', { currentPassword: PASSWORD, newPassword: 'a new long password', confirm: 'a new long password' }, s);
      expect(changed.headers.location).toBe('/console/password?changed=1');
      await consoleLogin(t, 'carol@acme.example', 'a new long password');
    });

    it('an over-long new password is refused with its limit, not cut', async () => {
      const s = await carol();
      const long = 'x'.repeat(300);
      const res = await post(t, '/console/password', { currentPassword: PASSWORD, newPassword: long, confirm: long }, s);
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('New password may be at most 256 characters long.');
      expect(fieldOf(res.body, 'new')).not.toContain('maxlength');
      await consoleLogin(t, 'carol@acme.example');
    });
  });
});
