import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { HAVE_CHROMIUM, launchChromium, shot, unlabelledFields } from '../helpers/chromium.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 26 item 11 in a real browser: an operator invites a user; the invitee opens the link (the
 * code in its fragment), sees the account and the user name, types two different passwords (an
 * error at the second), then the same one twice, and is in the console, logged in.
 */
describe.skipIf(!HAVE_CHROMIUM)('an invitation in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.services.accounts.withActor(SYSTEM_ACTOR).create('acme', 25);
    const { inviteToken } = await users(t).createOperator('root', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  it('the invitee sees account and user name, is told when the passwords differ, and lands in the console logged in', async () => {
    const problems: string[] = [];
    const op = await browser.newContext({ viewport: { width: 1440, height: 900 }, baseURL: base });
    const operator = await op.newPage();
    await operator.goto('/console/login');
    await operator.getByLabel('User name').fill('root');
    await operator.getByLabel('Password').fill(PASSWORD);
    await operator.getByRole('button', { name: 'Log in' }).click();
    await operator.waitForURL(`${base}/console/admin`);

    // The operator invites dana to acme.
    await operator.goto('/console/admin/accounts/acme');
    await expect(operator.getByText('at most 64 characters').first().isVisible()).resolves.toBe(true);
    await operator.getByLabel('Invite a user (name or e-mail)').fill('dana@acme.example');
    await operator.getByRole('button', { name: 'Create invitation' }).click();
    const inviteUrl = (await operator.getByTestId('invite-url').textContent()) ?? '';
    expect(inviteUrl).toMatch(/\/account\/invite#[\w-]+$/);
    await op.close();

    // The invitee, at phone width, opens the link: the script sends the code, the page names the invitation.
    const inv = await browser.newContext({ viewport: { width: 390, height: 844 }, baseURL: base });
    const invitee = await inv.newPage();
    invitee.on('pageerror', (e) => problems.push(e.message));
    invitee.on('console', (m) => {
      // The mismatched passwords below answer 400 on purpose.
      if (m.type() === 'error' && !m.text().includes('status of 400')) problems.push(m.text());
    });
    await invitee.goto(inviteUrl);
    await invitee.getByTestId('invitation').waitFor();
    expect(invitee.url()).toBe(`${base}/console/invite/open`);
    await expect(invitee.getByTestId('invited-account').textContent()).resolves.toBe('acme');
    await expect(invitee.getByTestId('invited-user').textContent()).resolves.toBe('dana@acme.example');
    await expect(invitee.getByLabel('Your user name').inputValue()).resolves.toBe('dana@acme.example');
    expect(await unlabelledFields(invitee)).toEqual([]);

    // Two different passwords: an error at the second field, nothing set.
    await invitee.getByLabel('Choose a password').fill(PASSWORD);
    await invitee.getByLabel('Password again').fill(`${PASSWORD} typo`);
    await invitee.getByRole('button', { name: 'Set password and log in' }).click();
    await expect(invitee.getByRole('alert').textContent()).resolves.toContain('The two passwords differ');
    await expect(invitee.getByLabel('Password again').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(invitee.getByTestId('invited-account').textContent()).resolves.toBe('acme');
    await shot(invitee, 'invite-passwords-differ');
    expect((await users(t).findByName('dana@acme.example'))?.active).toBe(false);

    // The same password twice: logged in, on the account's page.
    await invitee.getByLabel('Choose a password').fill(PASSWORD);
    await invitee.getByLabel('Password again').fill(PASSWORD);
    await invitee.getByRole('button', { name: 'Set password and log in' }).click();
    await invitee.waitForURL(`${base}/console/account?joined=1`);
    await expect(invitee.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Account acme');
    await expect(invitee.getByRole('status').first().textContent()).resolves.toContain('Welcome, dana@acme.example');
    await expect(invitee.getByRole('button', { name: 'Log out', exact: true }).isVisible()).resolves.toBe(true);
    await expect(invitee.getByTestId('balance').textContent()).resolves.toBe('25');
    await shot(invitee, 'invite-accepted');
    expect(problems).toEqual([]);

    // The link works once: opened again, it says so.
    await invitee.goto(inviteUrl);
    await invitee.getByRole('heading', { name: 'Invitation already used' }).waitFor();
    await inv.close();
  }, 120_000);
});
