import { mkdirSync, writeFileSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { HAVE_CHROMIUM, launchChromium } from '../helpers/chromium.js';

/**
 * Issue 26's walk-through, replayed in Chromium at a desktop and a phone width: the journeys a
 * first-time operator and customer take, each asserting what used to trip them (items 1 to 7, 9 and
 * 11 to 14), and counting the steps a person takes (page opens, clicks, fields filled,
 * options chosen). The counts are written to .scratch/walkthrough-steps.json for the issue's note;
 * nothing here depends on how fast the machine is.
 */

const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

interface Measure {
  readonly journey: string;
  readonly viewport: string;
  readonly steps: number;
}
const measures: Measure[] = [];

/** A person at a browser: every action they take is one step. */
class Person {
  steps = 0;
  constructor(readonly page: Page) {}

  async open(path: string): Promise<void> {
    this.steps += 1;
    await this.page.goto(path);
  }
  /** A field by its whole label, or by a pattern where the label carries a hint. */
  async fill(label: string | RegExp, value: string): Promise<void> {
    this.steps += 1;
    await this.page.getByLabel(label, { exact: true }).fill(value);
  }
  async choose(label: string, value: string): Promise<void> {
    this.steps += 1;
    await this.page.getByLabel(label, { exact: true }).selectOption(value);
  }
  /** A select its form follows (with script, the page changes at once). */
  async pick(label: string, value: string): Promise<void> {
    this.steps += 1;
    await Promise.all([this.page.waitForEvent('domcontentloaded'), this.page.getByLabel(label, { exact: true }).selectOption(value)]);
  }
  async press(name: string): Promise<void> {
    this.steps += 1;
    await this.page.getByRole('button', { name, exact: true }).click();
    await this.page.waitForLoadState();
  }
  async follow(name: string, within?: Locator): Promise<void> {
    this.steps += 1;
    await (within ?? this.page).getByRole('link', { name, exact: true }).first().click();
    await this.page.waitForLoadState();
  }
  async logIn(username: string, password: string): Promise<void> {
    await this.open('/console/login');
    await this.fill('User name', username);
    await this.fill('Password', password);
    await this.press('Log in');
  }
  /**
   * The field's error, tied to it as a screen reader finds it: the server's message, or the
   * browser's own where the field's constraints (required, min) stopped the form being sent.
   */
  async fieldError(label: string): Promise<string> {
    const field = this.page.getByLabel(label, { exact: true });
    if ((await field.getAttribute('aria-invalid')) !== 'true') {
      const native = await field.evaluate((el: unknown) => (el as { validationMessage: string }).validationMessage);
      if (native !== '') return native;
    }
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const described = (await field.getAttribute('aria-describedby')) ?? '';
    expect(described).not.toBe('');
    return (await this.page.locator(`[id="${described.split(' ')[0] ?? ''}"]`).textContent()) ?? '';
  }
  /** The page is the logged-in console: navigation and a log-out button. */
  async loggedIn(): Promise<void> {
    await expect(this.page.getByRole('navigation', { name: 'Console' }).isVisible()).resolves.toBe(true);
    await expect(this.page.getByRole('button', { name: 'Log out', exact: true }).count()).resolves.toBe(1);
  }
}

/** The `curl -u 'USER:KEY' URL` a page shows, run as a person pastes it (here with fetch). */
async function runShownCurl(page: Page, base: string): Promise<{ status: number; body: string }> {
  const shown = (await page.getByTestId('curl').textContent()) ?? '';
  const match = /curl -u '?([^:']+):([^' ]+)'? (\S+)/.exec(shown);
  if (!match) throw new Error(`not a curl -u command: ${shown}`);
  const url = new URL(match[3] ?? '');
  const res = await fetch(`${base}${url.pathname}${url.search}`, { headers: { authorization: `Basic ${Buffer.from(`${match[1] ?? ''}:${match[2] ?? ''}`).toString('base64')}` } });
  return { status: res.status, body: await res.text() };
}

describe.skipIf(!HAVE_CHROMIUM)('the console walk-through, at a desktop and a phone width', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    expect(summary.committed).toBe(true);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await t.close();
    mkdirSync('.scratch', { recursive: true });
    writeFileSync('.scratch/walkthrough-steps.json', `${JSON.stringify(measures, null, 2)}\n`);
  });

  async function person(viewport: { width: number; height: number }): Promise<{ person: Person; close: () => Promise<void>; problems: string[] }> {
    const ctx = await browser.newContext({ viewport, baseURL: base });
    const page = await ctx.newPage();
    // A step that finds nothing fails with its locator, well inside the test's own limit.
    page.setDefaultTimeout(20_000);
    const problems: string[] = [];
    // A refused form answers 400 on purpose; anything else the console logs is a problem.
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[0134]/.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    return { person: new Person(page), close: () => ctx.close(), problems };
  }

  describe.each(VIEWPORTS)('$name ($width px)', (viewport) => {
    const suffix = viewport.name;

    it('a new operator: first login, an account with a working example, credits granted, a wrong URL', async () => {
      const { person: op, close, problems } = await person(viewport);
      const { password } = await users(t).createOperator(`root-${suffix}`, 'admin', false);

      // First login with the one-time password: the change is forced, then the console (issue 34).
      await op.logIn(`root-${suffix}`, password ?? '');
      expect(op.page.url()).toBe(`${base}/console/password`);
      await op.fill('Current password', password ?? '');
      await op.fill('New password', PASSWORD);
      await op.fill('New password again', PASSWORD);
      await op.press('Change password');
      expect(op.page.url()).toBe(`${base}/console/admin`);

      // Item 7: the navigation says where the operator is.
      await op.follow('Accounts', op.page.getByRole('navigation', { name: 'Console' }));
      await expect(op.page.getByRole('link', { name: 'Accounts', exact: true }).getAttribute('aria-current')).resolves.toBe('page');

      // Item 3: a space in the name shows the form again, the message at the field, the values kept, still logged in.
      const name = `acme-${suffix}`;
      await op.fill('User name', `acme ${suffix}`);
      await op.fill('Starting credits', '5');
      await op.press('Create account');
      await expect(op.fieldError('User name')).resolves.toContain('no spaces');
      await expect(op.page.getByLabel('User name', { exact: true }).inputValue()).resolves.toBe(`acme ${suffix}`);
      await expect(op.page.getByLabel('Starting credits', { exact: true }).inputValue()).resolves.toBe('5');
      await op.loggedIn();
      await op.fill('User name', name);
      await op.press('Create account');

      // Item 1: the example printed with the new key works as shown, on a fresh install.
      const shown = await runShownCurl(op.page, base);
      expect(shown.status).toBe(200);
      expect(shown.body).toContain('Description');

      // Item 3 again, and item 14: amount 0 is said at the field; a grant says what happened.
      await op.follow('Back');
      await op.fill('Amount (credits)', '0');
      await op.press('Apply');
      await expect(op.fieldError('Amount (credits)')).resolves.toMatch(/at least 1|greater than or equal to 1/);
      await op.loggedIn();
      await op.fill('Amount (credits)', '1000');
      await op.press('Apply');
      await expect(op.page.getByRole('status').first().textContent()).resolves.toContain(`Granted 1,000 credits to ${name}: balance 1,004.`);
      measures.push({ journey: 'operator: first login, account, working example, credits', viewport: suffix, steps: op.steps });

      // Item 9: a mistyped console URL is a console page with the navigation.
      const lost = op.steps;
      await op.open('/console/admin/acounts');
      await expect(op.page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Page not found');
      await op.loggedIn();
      await op.follow('Accounts', op.page.getByRole('navigation', { name: 'Console' }));
      expect(op.page.url()).toBe(`${base}/console/admin/accounts`);
      measures.push({ journey: 'operator: back from a mistyped URL', viewport: suffix, steps: op.steps - lost });

      expect(problems).toEqual([]);
      await close();
    }, 180_000);

    it('a customer at 0 credits is told how to get more; with credits, Try it runs what was chosen and the ledger filters by operation', async () => {
      // Item 4: an empty account says so on the account page and Try it, with the way forward.
      const empty = `empty-${suffix}`;
      await t.account(empty, 0);
      const invite = await users(t).createCustomer(empty, `carla-${suffix}`, 'owner');
      await users(t).acceptInvite(invite.inviteToken, PASSWORD);
      const { person: carla, close: closeCarla, problems: carlaProblems } = await person(viewport);
      await carla.logIn(`carla-${suffix}`, PASSWORD);
      await expect(carla.page.getByTestId('low-credit').textContent()).resolves.toContain('Ask your operator for more credits.');
      await carla.follow('Try it', carla.page.getByRole('navigation', { name: 'Console' }));
      await expect(carla.page.getByTestId('low-credit').textContent()).resolves.toContain('Your account has no credits left');
      measures.push({ journey: 'customer at 0 credits: finds the way to more', viewport: suffix, steps: carla.steps });
      expect(carlaProblems).toEqual([]);
      await closeCarla();

      // Items 5 and 6 with an account that has credits.
      const busy = `busy-${suffix}`;
      await t.account(busy, 10);
      const second = await users(t).createCustomer(busy, `dev-${suffix}`, 'owner');
      await users(t).acceptInvite(second.inviteToken, PASSWORD);
      const { person: dev, close, problems } = await person(viewport);
      await dev.logIn(`dev-${suffix}`, PASSWORD);
      await dev.follow('Try it', dev.page.getByRole('navigation', { name: 'Console' }));
      await dev.pick('Operation', 'CheckUSA');
      await expect(dev.page.locator('#run').textContent()).resolves.toBe('CheckUSA');
      // Item 6: choosing the operation filled in a key that answers (the sample data's), nothing to type.
      await expect(dev.page.getByLabel('RegistrationNumber').inputValue()).resolves.toBe('7KDJ294');
      await expect(dev.page.getByLabel('State').inputValue()).resolves.toBe('CA');
      await dev.press('Run lookup');
      await expect(dev.page.getByTestId('cost').textContent()).resolves.toContain('1 credit');
      expect((await t.services.accounts.show(busy)).credits).toBe(9);
      const tried = dev.steps;

      // Item 6: the form follows the select, so another operation chosen is never run as the one shown before.
      await dev.pick('Operation', 'CheckFrance');
      await expect(dev.page.locator('#run').textContent()).resolves.toBe('CheckFrance');
      await dev.press('Run lookup');
      await expect(dev.page.getByTestId('json-answer').textContent()).resolves.toContain('RENAULT');
      const ledger = await t.services.accounts.usage(busy);
      expect(ledger.filter((row) => row.operation === 'CheckUSA')).toHaveLength(1);

      // Item 5: the ledger's operation filter is a select of the catalogue.
      await dev.follow('My account', dev.page.getByRole('navigation', { name: 'Console' }));
      await dev.choose('Operation', 'CheckUSA');
      await dev.press('Filter');
      await expect(dev.page.getByTestId('ledger').textContent()).resolves.toContain('7KDJ294 (CA)');
      measures.push({ journey: 'customer: first lookup in Try it, then its ledger row', viewport: suffix, steps: tried });
      expect(problems).toEqual([]);
      await close();
    }, 180_000);

    it('an invited customer: the invitation names account and user, a typo in the password again is said, then logged in; a deep link and another tab after Log out everywhere', async () => {
      // Item 11: the invitation says whose it is, asks the password twice, and logs the invitee in.
      const account = `team-${suffix}`;
      await t.account(account, 3);
      const { inviteToken } = await users(t).createCustomer(account, `erin-${suffix}`, 'owner');
      const { person: erin, close, problems } = await person(viewport);
      await erin.open(`/account/invite#${inviteToken}`);
      await erin.page.getByTestId('invitation').waitFor();
      await expect(erin.page.getByTestId('invited-account').textContent()).resolves.toBe(account);
      await expect(erin.page.getByTestId('invited-user').textContent()).resolves.toBe(`erin-${suffix}`);
      await erin.fill('Choose a password', PASSWORD);
      await erin.fill('Password again', `${PASSWORD}!`);
      await erin.press('Set password and log in');
      await expect(erin.fieldError('Password again')).resolves.toContain('differ');
      await erin.fill('Choose a password', PASSWORD);
      await erin.fill('Password again', PASSWORD);
      await erin.press('Set password and log in');
      expect(new URL(erin.page.url()).pathname).toBe('/console/account');
      await erin.loggedIn();
      measures.push({ journey: 'invited customer: from the link to logged in', viewport: suffix, steps: erin.steps });

      // Item 12: another tab, after Log out everywhere in this one, is told why and comes back to its page.
      const other = new Person(await erin.page.context().newPage());
      await other.open('/console/account/alerts');
      await erin.press('Log out everywhere');
      await other.open('/console/account/alerts');
      await expect(other.page.getByRole('status').first().textContent()).resolves.toContain('You were logged out everywhere');
      await other.fill('User name', `erin-${suffix}`);
      await other.fill('Password', PASSWORD);
      await other.press('Log in');
      expect(new URL(other.page.url()).pathname).toBe('/console/account/alerts');
      measures.push({ journey: 'another tab after Log out everywhere: told why, back on its page', viewport: suffix, steps: other.steps });
      expect(problems).toEqual([]);
      await close();
    }, 180_000);

    it('the JSON interface page shows the 401 of a wrong key, and the answer once the key is right', async () => {
      // Item 2: no browser sign-in prompt, no answer box stuck on "…".
      const key = await t.account(`api-${suffix}`, 2);
      const { person: dev, close, problems } = await person(viewport);
      await dev.open('/openapi/lookup');
      await dev.fill('Username', `api-${suffix}`);
      await dev.fill('API key', 'not-the-key');
      const operation = dev.page.locator('details#CheckFrance');
      dev.steps += 1;
      await operation.locator(':scope > summary').click();
      dev.steps += 1;
      await operation.getByLabel('RegistrationNumber').fill('FK482TR');
      dev.steps += 1;
      await operation.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => operation.locator('pre.answer').textContent()).toContain('401');
      await dev.fill('API key', key);
      dev.steps += 1;
      await operation.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => operation.locator('pre.answer').textContent()).toContain('200 OK');
      measures.push({ journey: 'JSON interface page: a wrong key, then a lookup', viewport: suffix, steps: dev.steps });
      expect(problems).toEqual([]);
      await close();
    }, 180_000);

    it('a viewer is told the pages are read-only, and sees no buttons that change anything', async () => {
      const { inviteToken } = await users(t).createOperator(`watcher-${suffix}`, 'viewer', true);
      await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
      const { person: viewer, close, problems } = await person(viewport);
      await viewer.logIn(`watcher-${suffix}`, PASSWORD);
      await expect(viewer.page.getByTestId('read-only').textContent()).resolves.toContain('reads only');
      await viewer.follow('Accounts', viewer.page.getByRole('navigation', { name: 'Console' }));
      await expect(viewer.page.getByRole('button', { name: 'Create account' }).count()).resolves.toBe(0);
      await expect(viewer.page.getByTestId('read-only').isVisible()).resolves.toBe(true);
      measures.push({ journey: 'viewer: knows the console is read-only', viewport: suffix, steps: viewer.steps });
      expect(problems).toEqual([]);
      await close();
    }, 180_000);
  });
});
