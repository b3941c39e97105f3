import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRANCE, PASSWORD, users } from '../admin/admin-harness.js';
import { verifyStandardWebhook } from '../alerts/standard-webhooks-verifier.js';
import { FakeHttpServer } from '../fakes/fake-http-server.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { HAVE_CHROMIUM, launchChromium, shot, unlabelledFields } from '../helpers/chromium.js';
import { until } from '../helpers/until.js';
import type { FakeResponse } from '../fakes/fake-http-server.js';

/** An answer the receiver holds back until the test releases it. */
function hold(): { answer: Promise<FakeResponse>; release: (answer: FakeResponse) => void } {
  let release: (answer: FakeResponse) => void = () => undefined;
  const answer = new Promise<FakeResponse>((resolve) => {
    release = resolve;
  });
  return { answer, release };
}

/**
 * Issue 18's remaining console pages in Debian's Chromium (playwright-core): a customer's webhook
 * endpoint receiving a signed test event from a receiver this test starts, the operator's test
 * plates and API tokens, and "log out everywhere" ending another browser's session. Screenshots
 * go where console-browser.slow.test.ts puts its own (.scratch/screenshots or CONSOLE_SCREENSHOTS).
 */

describe.skipIf(!HAVE_CHROMIUM)('console pages in Chromium: alerts and webhooks, test plates, tokens, log out everywhere', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let receiver: FakeHttpServer;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    // The receiver listens on 127.0.0.1, which only an operator's WEBHOOK_ALLOW_PRIVATE_URLS allows.
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', CREDIT_ALERT_SWEEP_MS: '3600000' });
    await t.importRecords([FRANCE]);
    receiver = await FakeHttpServer.start(() => ({ status: 204 }));
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    for (const [name, role] of [
      ['root', 'admin'],
      ['watcher', 'viewer'],
    ] as const) {
      const { inviteToken } = await users(t).createOperator(name, role, true);
      await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    }
    await t.account('acme', 100);
    const { inviteToken } = await users(t).createCustomer('acme', 'dana@acme.example', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
  }, 60_000);
  afterAll(async () => {
    for (const ctx of contexts) await ctx.close();
    await browser.close();
    await receiver.close();
    await t.close();
    expect(problems).toEqual([]);
  });

  async function context(viewport = { width: 1280, height: 900 }): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({ viewport, baseURL: base });
    contexts.push(ctx);
    const page = await ctx.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    return { ctx, page };
  }

  async function logIn(page: Page, username: string): Promise<void> {
    await page.goto('/console/login');
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForLoadState();
  }

  /** Every visible form field has a label, and the page fits a phone's width without scrolling sideways. */
  async function accessible(page: Page): Promise<void> {
    const unlabelled = await unlabelledFields(page);
    expect(unlabelled).toEqual([]);
  }

  async function fitsPhone(ctx: BrowserContext, path: string, name: string): Promise<void> {
    const { page } = await context({ width: 375, height: 740 });
    await page.context().addCookies(await ctx.cookies());
    await page.goto(path);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1'), path).toBe(true);
    await shot(page, name);
  }

  it('a customer registers a webhook endpoint at a local receiver, sends a test event and sees the delivery in the log', async () => {
    const { ctx, page } = await context();
    await logIn(page, 'dana@acme.example');
    await page.getByRole('link', { name: 'Alerts and webhooks' }).click();
    await accessible(page);

    // Thresholds of the account's own.
    await page.getByLabel('Thresholds (credits, comma-separated)').fill('50, 10, 0');
    await page.getByRole('button', { name: 'Save thresholds' }).click();
    await expect(page.getByTestId('thresholds').textContent()).resolves.toContain("50, 10, 0 (this account's own)");

    await page.getByLabel('URL (http or https)').fill(`${receiver.url}/vehicle-lookup`);
    await page.getByLabel('Description (optional)').fill('billing system');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    const secret = (await page.getByTestId('secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await expect(page.getByRole('button', { name: 'Copy secret' }).isVisible()).resolves.toBe(true);
    await shot(page, 'customer-webhook-secret');
    await page.getByRole('link', { name: 'Continue to the endpoint' }).click();
    await accessible(page);

    // The receiver holds the attempt until the test answers for it: the page is seen pending first.
    const held = hold();
    receiver.script({ until: held.answer });
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('A test event is queued');
    const log = page.locator('[data-delivery-log]');
    await expect(log.getAttribute('data-pending')).resolves.toBe('true');
    await expect(page.getByTestId('messages').textContent()).resolves.toMatch(/test\s*msg_\S+:\s*pending/);
    await expect(page.getByTestId('pending-note').isVisible()).resolves.toBe(true);
    await page.getByText('Request payload').click();
    // Marks this document: a reload would lose the mark, the log's own update keeps it.
    await page.evaluate('window.notReloaded = true');
    await until(() => receiver.requests.length === 1);
    held.release({ status: 200, json: { received: true } });
    await page.locator('[data-delivery-log][data-pending="false"]').waitFor({ timeout: 30_000 });
    await expect(page.evaluate('window.notReloaded')).resolves.toBe(true);
    await expect(page.getByTestId('messages').textContent()).resolves.toMatch(/test\s*msg_\S+:\s*delivered/);
    const attempts = (await page.getByTestId('attempts').textContent()) ?? '';
    expect(attempts).toMatch(/1\s*200\s*\d+\s*delivered\s*\{"received":true\}/);
    // The payload stayed open through the update, pretty-printed.
    await expect(page.getByTestId('payload').isVisible()).resolves.toBe(true);
    await expect(page.getByTestId('payload').textContent()).resolves.toContain('"type": "test"');
    const [delivery] = receiver.requests;
    expect(verifyStandardWebhook([secret], delivery?.headers ?? {}, delivery?.body ?? '')).toEqual([0]);
    await shot(page, 'customer-webhook-log');

    // Resend: the same message once more; the log follows it from pending to delivered again.
    const again = hold();
    receiver.script({ until: again.answer });
    await page.getByRole('button', { name: /^Resend test message msg_/ }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('The message is queued again');
    await expect(page.locator('[data-delivery-log]').getAttribute('data-pending')).resolves.toBe('true');
    await until(() => receiver.requests.length === 2);
    again.release({ status: 200, text: 'seen again' });
    await page.locator('[data-delivery-log][data-pending="false"]').waitFor({ timeout: 30_000 });
    await expect(page.getByTestId('attempts').textContent()).resolves.toMatch(/2\s*200\s*\d+\s*delivered\s*seen again/);
    expect(receiver.requests[1]?.headers['webhook-id']).toBe(delivery?.headers['webhook-id']);
    expect(receiver.requests[1]?.body).toBe(delivery?.body);

    await page.getByRole('link', { name: 'Back to Alerts and webhooks' }).click();
    await expect(page.getByTestId('endpoints').textContent()).resolves.toContain('billing system');
    await shot(page, 'customer-alerts');
    await fitsPhone(ctx, '/console/account/alerts', 'customer-alerts-phone');
  }, 60_000);

  it('an operator adds a test plate and removes it; the lookup is free meanwhile', async () => {
    const { page } = await context();
    await logIn(page, 'root');
    await page.getByRole('link', { name: 'Test plates' }).click();
    await page.waitForLoadState();
    // With script the form follows the select (its Choose button is for pages without script).
    await expect(page.getByRole('button', { name: 'Choose' }).isVisible()).resolves.toBe(false);
    await Promise.all([page.waitForEvent('domcontentloaded'), page.getByLabel('Operation', { exact: true }).selectOption('CheckFrance')]);
    await page.getByLabel('CheckFrance: RegistrationNumber').fill('eg-258-ma');
    await page.getByRole('button', { name: 'Add test plate' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('The test plate is added');
    await expect(page.getByTestId('test-plates').textContent()).resolves.toContain('EG258MA');
    await accessible(page);
    await shot(page, 'operator-test-plates');

    const key = await t.services.accounts.createKey('acme', 'browser-test');
    const lookup = async () => (await fetch(`${base}/api/json.aspx/CheckFrance/EG258MA`, { headers: { authorization: t.basic('acme', key.apiKey) } })).status;
    const before = await t.services.accounts.balance('acme');
    expect(await lookup()).toBe(200);
    expect(await t.services.accounts.balance('acme')).toBe(before);

    await page.getByRole('button', { name: 'Remove test plate CheckFrance EG258MA' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('The test plate is removed');
    await expect(page.getByTestId('test-plates').textContent()).resolves.toContain('No test plates.');
    expect(await lookup()).toBe(200);
    expect(await t.services.accounts.balance('acme')).toBe(before - 1);
  }, 60_000);

  it('an operator creates an API token (shown once) and revokes it; a viewer sees the list without buttons', async () => {
    const { ctx, page } = await context();
    await logIn(page, 'root');
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByLabel('Name (what uses it)').fill('billing sync');
    await page.getByLabel('Scope').selectOption('read');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('secret').textContent()) ?? '';
    expect(secret).toMatch(/^vlop_/);
    await expect(page.getByTestId('curl').textContent()).resolves.toContain(`Bearer ${secret}`);
    const bearer = async () => (await fetch(`${base}/admin/api/accounts`, { headers: { authorization: `Bearer ${secret}` } })).status;
    expect(await bearer()).toBe(200);

    await page.getByRole('link', { name: 'Back to the tokens' }).click();
    await expect(page.getByTestId('tokens').textContent()).resolves.not.toContain(secret);
    await accessible(page);
    await shot(page, 'operator-tokens');

    const { page: viewer } = await context();
    await logIn(viewer, 'watcher');
    await viewer.goto('/console/admin/tokens');
    await expect(viewer.getByTestId('tokens').textContent()).resolves.toContain('billing sync');
    await expect(viewer.getByRole('button', { name: /Revoke|Create token/ }).count()).resolves.toBe(0);

    await page.getByRole('button', { name: 'Revoke token billing sync' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('The token is revoked');
    await expect(page.getByTestId('tokens').textContent()).resolves.toContain('revoked');
    expect(await bearer()).toBe(401);

    // The operator's own webhooks page, for the screenshots.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByLabel('URL (http or https)').fill(`${receiver.url}/operations`);
    await page.getByLabel('Description (optional)').fill('on-call alerts for every account');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page.getByRole('link', { name: 'Continue to the endpoint' }).click();
    await page.getByRole('link', { name: 'Back to Operator webhooks' }).click();
    await accessible(page);
    await shot(page, 'operator-webhooks');
    await page.goto('/console/admin/accounts/acme/alerts');
    await expect(page.getByTestId('endpoints').textContent()).resolves.toContain('billing system');
    await shot(page, 'operator-account-alerts');
    await fitsPhone(ctx, '/console/admin/test-plates', 'operator-test-plates-phone');
  }, 60_000);

  it('"log out everywhere" in one browser ends the same user\'s session in another', async () => {
    const { page: laptop } = await context();
    const { page: phone } = await context({ width: 375, height: 740 });
    await logIn(laptop, 'dana@acme.example');
    await logIn(phone, 'dana@acme.example');
    await phone.goto('/console/account');
    await expect(phone.getByTestId('balance').isVisible()).resolves.toBe(true);

    await laptop.getByRole('button', { name: 'Log out everywhere' }).click();
    expect(laptop.url()).toBe(`${base}/console/login?ended=1`);
    await expect(laptop.getByRole('status').textContent()).resolves.toContain('Every session of yours has ended');

    await phone.reload();
    expect(phone.url()).toBe(`${base}/console/login?session=ended&next=%2Fconsole%2Faccount`);
    await expect(phone.getByRole('status').textContent()).resolves.toContain('You were logged out everywhere');
    await phone.goto('/console/account/alerts');
    expect(phone.url()).toBe(`${base}/console/login?session=ended&next=%2Fconsole%2Faccount%2Falerts`);
  }, 60_000);

  it('tells another tab of the browser that logged out everywhere why, and brings it back to its page after the login', async () => {
    const { ctx, page: first } = await context();
    await logIn(first, 'dana@acme.example');
    const second = await ctx.newPage();
    await second.goto('/console/account/alerts');
    await expect(second.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Alerts and webhooks');

    await first.getByRole('button', { name: 'Log out everywhere' }).click();
    await expect(first.getByRole('status').textContent()).resolves.toContain('Every session of yours has ended');

    // The other tab, still showing its page, goes on: the login page says why, then it is back.
    await second.getByRole('link', { name: 'Try it' }).click();
    expect(second.url()).toBe(`${base}/console/login?session=ended&next=%2Fconsole%2Faccount%2Ftry`);
    await expect(second.getByRole('status').textContent()).resolves.toContain('You were logged out everywhere');
    await shot(second, 'console-session-ended');
    await second.getByLabel('User name').fill('dana@acme.example');
    await second.getByLabel('Password').fill(PASSWORD);
    await second.getByRole('button', { name: 'Log in' }).click();
    await second.waitForURL(`${base}/console/account/try`);
  }, 60_000);

  it('brings an operator from a deep link opened logged out to that page after the login', async () => {
    const { page } = await context();
    await page.goto('/console/admin/accounts/acme');
    expect(page.url()).toBe(`${base}/console/login?next=%2Fconsole%2Fadmin%2Faccounts%2Facme`);
    await page.getByLabel('User name').fill('root');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${base}/console/admin/accounts/acme`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('acme');
  }, 60_000);
});
