import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRANCE, PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { HAVE_CHROMIUM, launchChromium, shot, unlabelledFields } from '../helpers/chromium.js';

/**
 * Issue 18's proof in a real browser: Debian's Chromium driven by playwright-core (its own
 * browser download cannot work here). Screenshots go to .scratch/screenshots, or to
 * CONSOLE_SCREENSHOTS (docs/screenshots refreshes the ones the README shows).
 */

describe.skipIf(!HAVE_CHROMIUM)('web console in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  /** The test's clock runs this far ahead of real time (to pass a rolled key's grace period). */
  let ahead = 0;

  beforeAll(async () => {
    t = await createTestApp({}, { now: () => new Date(Date.now() + ahead), millis: () => Date.now() + ahead });
    await t.importRecords([FRANCE]);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  async function context(viewport = { width: 1280, height: 900 }): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({ viewport, baseURL: base });
    const page = await ctx.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    return { ctx, page };
  }

  async function logIn(page: Page, username: string, password: string): Promise<void> {
    await page.goto('/console/login');
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForLoadState();
  }

  /** Every visible form field has a label, and the page's script ran under the CSP without errors. */
  async function accessible(page: Page): Promise<void> {
    const unlabelled = await unlabelledFields(page);
    expect(unlabelled).toEqual([]);
  }

  it('runs the whole flow: operator, account, credits, invite, customer, key, lookup, ledger, chart, roll, viewer, escaping, CSRF', async () => {
    const problems: string[] = [];
    const { ctx: op, page } = await context();
    page.on('console', (m) => {
      // The refused CSRF post below answers 403 on purpose.
      if (m.type() === 'error' && !m.text().includes('status of 403')) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));

    // The front page, keyboard first: Tab reaches the skip link.
    await page.goto('/');
    await expect(page.getByRole('heading', { name: 'Vehicle lookup service' }).isVisible()).resolves.toBe(true);
    await shot(page, 'front-page');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');

    // The first operator, as `admin create root` makes it: a one-time password, changed at first login.
    const { password } = await users(t).createOperator('root', 'admin', false);
    await logIn(page, 'root', password ?? '');
    expect(page.url()).toBe(`${base}/console/password`);
    await accessible(page);
    await page.getByLabel('Current password').fill(password ?? '');
    await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('New password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    // The first operator lands in the console at once (issue 34): no confirmation page to click on.
    expect(page.url()).toBe(`${base}/console/admin`);
    await expect(page.getByRole('heading', { level: 1 }).first().isVisible()).resolves.toBe(true);

    // Create an account; its first key is shown once.
    await page.getByRole('link', { name: 'Accounts', exact: true }).click();
    await page.getByLabel('User name').fill('acme');
    await page.getByLabel('Starting credits').fill('0');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect(page.getByTestId('secret').textContent()).resolves.toMatch(/\S{20,}/);
    await page.getByRole('link', { name: 'Back' }).click();

    // Grant credits with a reference; a note with markup stays text.
    await page.getByLabel('Amount (credits)').fill('100');
    await page.getByLabel('Reference (invoice, order)').fill('INV-2026-11');
    await page.getByLabel('Note').fill('<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByTestId('balance').textContent()).resolves.toBe('100');
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    await expect(page.getByText('<script>window.__xss = 1</script>', { exact: false }).count()).resolves.toBeGreaterThan(0);
    await accessible(page);

    // Invite a customer.
    await page.getByLabel('Invite a user (name or e-mail)').fill('dana@acme.example');
    await page.getByRole('button', { name: 'Create invitation' }).click();
    const inviteUrl = (await page.getByTestId('invite-url').textContent()) ?? '';
    expect(inviteUrl).toContain('/account/invite#');

    // A form posted without its CSRF token is refused, and nothing changes.
    await page.goto('/console/admin/accounts/acme');
    await page.evaluate(`document.querySelectorAll('form[action$="/credits"] input[name=_csrf]').forEach((field) => field.remove())`);
    await page.getByLabel('Amount (credits)').fill('5');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('CSRF');
    expect(await t.services.accounts.balance('acme')).toBe(100);

    // The customer accepts the invite (the token travels in the link's fragment) and is logged in
    // (issue 26 item 11; test/console/invite-browser.slow.test.ts follows it step by step).
    const { ctx: cust, page: customer } = await context();
    await customer.goto(inviteUrl);
    await expect(customer.getByTestId('invited-account').textContent()).resolves.toBe('acme');
    await customer.getByLabel('Choose a password').fill(PASSWORD);
    await customer.getByLabel('Password again').fill(PASSWORD);
    await customer.getByRole('button', { name: 'Set password and log in' }).click();
    await customer.waitForURL(`${base}/console/account?joined=1`);

    // Create a key: shown once, with a copy button (the script un-hides it) and a curl example.
    await customer.getByLabel('New key name').fill('production');
    await customer.getByRole('button', { name: 'Create key' }).click();
    const key = (await customer.getByTestId('secret').textContent()) ?? '';
    await expect(customer.getByRole('button', { name: 'Copy key' }).isVisible()).resolves.toBe(true);
    await expect(customer.getByTestId('curl').textContent()).resolves.toContain(`acme:${key}`);
    await shot(customer, 'customer-key-created');

    // A lookup with it through the JSON interface, outside the browser.
    const auth = { authorization: `Basic ${Buffer.from(`acme:${key}`).toString('base64')}` };
    expect((await fetch(`${base}/api/json.aspx/CheckFrance/EG258MA`, { headers: auth })).status).toBe(200);

    // The ledger row and the chart show it.
    await customer.goto('/console/account');
    await expect(customer.getByTestId('balance').textContent()).resolves.toBe('99');
    await expect(customer.getByTestId('ledger').textContent()).resolves.toContain('lookup of EG258MA over json costs 1 credit');
    await expect(customer.locator('svg[data-total]').first().getAttribute('data-total')).resolves.toBe('1'); // the account's lookups chart; the per-key chart (issue 33) follows it
    await accessible(customer);
    await shot(customer, 'customer-console');

    // Roll the key: a new one works at once, the old one until the grace period ends.
    await customer.getByRole('button', { name: 'Roll key production' }).click();
    const rolled = (await customer.getByTestId('secret').textContent()) ?? '';
    expect(rolled).not.toBe(key);
    const lookupWith = async (secret: string) => (await fetch(`${base}/api/json.aspx/CheckFrance/EG258MA`, { headers: { authorization: `Basic ${Buffer.from(`acme:${secret}`).toString('base64')}` } })).status;
    expect(await lookupWith(rolled)).toBe(200);
    expect(await lookupWith(key)).toBe(200);

    // On a phone.
    const { ctx: phone, page: small } = await context({ width: 375, height: 740 });
    await ctx2cookies(cust, phone);
    await small.goto('/console/account');
    expect(await small.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
    await shot(small, 'customer-console-phone');

    // Operator pages for the README.
    await page.goto('/console/admin/accounts/acme');
    await shot(page, 'operator-account');
    await page.goto('/console/admin');
    await shot(page, 'operator-overview-flow');
    await page.goto('/console/admin/audit');
    await expect(page.getByTestId('audit').textContent()).resolves.toContain('credits');
    await shot(page, 'operator-audit');

    // A viewer sees the account and changes nothing: no buttons, and a forged post is refused.
    await users(t).createOperator('watcher', 'viewer', true).then(({ inviteToken }) => users(t).acceptInvite(inviteToken ?? '', PASSWORD));
    const { ctx: view, page: viewer } = await context();
    await logIn(viewer, 'watcher', PASSWORD);
    await viewer.goto('/console/admin/accounts/acme');
    await expect(viewer.getByTestId('balance').textContent()).resolves.toBe('97');
    await expect(viewer.getByRole('button', { name: /Apply|Create key|Disable account|Create invitation|Roll|Revoke/ }).count()).resolves.toBe(0);
    const forged = await viewer.evaluate(`fetch('/console/admin/accounts/acme/credits', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: document.querySelector('input[name=_csrf]').value, operation: 'grant', amount: '1000' }),
    }).then((res) => res.status)`);
    expect(forged).toBe(403);
    expect(await t.services.accounts.balance('acme')).toBe(97);
    await shot(viewer, 'viewer-account');

    // After the grace period (24 h by default) the old key stops working; the new one goes on.
    ahead = 25 * 3600_000;
    expect(await lookupWith(key)).toBe(401);
    expect(await lookupWith(rolled)).toBe(200);
    ahead = 0;

    // Try it: the customer runs a lookup from the console, charged to the account like an API call.
    await customer.goto('/console/account/try');
    await Promise.all([customer.waitForEvent('domcontentloaded'), customer.getByLabel('Operation', { exact: true }).selectOption('CheckFrance')]);
    await customer.getByLabel('RegistrationNumber').fill('EG258MA');
    const before = await t.services.accounts.balance('acme');
    await customer.getByRole('button', { name: 'Run lookup' }).click();
    await expect(customer.getByTestId('cost').textContent()).resolves.toContain('Charged: 1 credit');
    await expect(customer.getByTestId('json-answer').textContent()).resolves.toContain('Peugeot 208 Allure');
    await expect(customer.getByTestId('xml-answer').textContent()).resolves.toContain('Peugeot 208 Allure');
    expect(await t.services.accounts.balance('acme')).toBe(before - 1);
    await accessible(customer);
    await shot(customer, 'customer-try-it');

    expect(problems).toEqual([]);
    for (const c of [op, cust, phone, view]) await c.close();
  }, 180_000);
});

/** The phone shares the customer's session. */
async function ctx2cookies(from: BrowserContext, to: BrowserContext): Promise<void> {
  await to.addCookies(await from.cookies());
}
