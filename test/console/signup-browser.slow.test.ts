import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRANCE, PASSWORD } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { HAVE_CHROMIUM, launchChromium, shot, unlabelledFields } from '../helpers/chromium.js';

/**
 * Self-service sign-up (issue 16) in Debian's Chromium, driven by playwright-core as the console's
 * own browser test does. Screenshots go to the same folder as that test's: .scratch/screenshots,
 * or CONSOLE_SCREENSHOTS.
 */

describe.skipIf(!HAVE_CHROMIUM)('self-service sign-up in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({ SIGNUP_ENABLED: 'true', SIGNUP_TRIAL_CREDITS: '25' });
    await t.importRecords([FRANCE]);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  /** Every visible form field has a label (as the console's browser test checks). */
  async function accessible(page: Page): Promise<void> {
    const unlabelled = await unlabelledFields(page);
    expect(unlabelled).toEqual([]);
  }

  async function fill(page: Page, username: string, password: string, confirm: string): Promise<void> {
    await page.getByLabel('User name (letters, digits and . _ @ -)').fill(username);
    await page.getByLabel('Password (at least 12 characters)').fill(password);
    await page.getByLabel('Password again').fill(confirm);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForLoadState();
  }

  it('signs up from the front page, lands in the console with the trial balance, and creates a working key', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: base });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      // The mistyped confirmation below is answered 400 on purpose.
      if (m.type() === 'error' && !m.text().includes('status of 400')) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));

    await page.goto('/');
    await page.getByRole('link', { name: 'Sign up' }).click();
    expect(page.url()).toBe(`${base}/console/signup`);
    await expect(page.getByText('25 trial credits').isVisible()).resolves.toBe(true);
    await accessible(page);
    await shot(page, 'signup-form');

    // A mistyped confirmation comes back on the form, the name kept.
    await fill(page, 'erin@example.org', PASSWORD, `${PASSWORD}?`);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('The two passwords differ');
    await expect(page.getByLabel('User name (letters, digits and . _ @ -)').inputValue()).resolves.toBe('erin@example.org');

    await fill(page, 'erin@example.org', PASSWORD, PASSWORD);
    expect(page.url()).toBe(`${base}/console/account?welcome=1`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Account erin@example.org');
    await expect(page.getByRole('status').textContent()).resolves.toContain('is ready with 25 credits');
    await expect(page.getByTestId('balance').textContent()).resolves.toBe('25');
    await expect(page.getByTestId('ledger').textContent()).resolves.toContain('Trial credits given at sign-up.');
    await accessible(page);
    await shot(page, 'signup-landed');

    // The first key, made from the console and shown once, pays for a lookup outside the browser.
    await page.getByLabel('New key name').fill('first');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('secret').textContent()) ?? '';
    const auth = { authorization: `Basic ${Buffer.from(`erin@example.org:${key}`).toString('base64')}` };
    const lookup = await fetch(`${base}/api/json.aspx/CheckFrance/EG258MA`, { headers: auth });
    expect(lookup.status).toBe(200);
    expect(lookup.headers.get('x-credits-remaining')).toBe('24');
    await page.goto('/console/account');
    await expect(page.getByTestId('balance').textContent()).resolves.toBe('24');
    expect(problems).toEqual([]);
    await ctx.close();

    // On a phone, the form fits the screen without sideways scrolling.
    const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, baseURL: base, isMobile: true, hasTouch: true });
    const small = await phone.newPage();
    await small.goto('/console/signup');
    expect(await small.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await shot(small, 'signup-form-phone');
    await phone.close();
  });
});
