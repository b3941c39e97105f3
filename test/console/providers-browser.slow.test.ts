import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltApp } from '../../src/app.js';
import { PASSWORD } from '../admin/admin-harness.js';
import { HAVE_CHROMIUM, launchChromium, shot } from '../helpers/chromium.js';
import { routedWorld, type RoutedWorld } from '../routing/routed-world.js';

/**
 * The console's providers page with three paid upstreams behind the router (issue 32 "What the
 * operator sees"), in Debian's Chromium (playwright-core): a lookup's spend in the currency, an
 * upstream that said it is out of funds, the price and where it comes from, the budget used, and
 * the order the router asks them in, in tables a screen reader can walk (row and column headers).
 */
describe.skipIf(!HAVE_CHROMIUM)('the providers page in Chromium: the paid upstreams as the router sees them', () => {
  let world: RoutedWorld;
  let app: BuiltApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    world = await routedWorld('sqlite');
    app = await world.instance({ UPSTREAM_CURRENCY: 'GBP' }, { cheap: { CHEAP_MONTHLY_BUDGET: '1.00' } });
    const { inviteToken } = await app.services.users.createOperator('root', 'admin', true);
    await app.services.users.acceptInvite(inviteToken ?? '', PASSWORD);
    const alice = await world.account(app, 'alice');
    // One answer from cheap (GBP 0.05), then cheap says it is out of funds and middle answers (its own price, 0.10).
    expect((await world.lookup(app, alice, 'AB123CD')).headers['x-lookup-source']).toBe('cheap');
    world.cheap.answerAll('out-of-funds');
    expect((await world.lookup(app, alice, 'BC234DE')).headers['x-lookup-source']).toBe('middle');
    const base = await app.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: base });
    page = await ctx.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto('/console/login');
    await page.getByLabel('User name').fill('root');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForLoadState();
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await world.close();
    expect(problems).toEqual([]);
  });

  /** The text of the cell under `column` in `upstream`'s row, found through the table's own headers. */
  async function cell(upstream: string, column: string): Promise<string> {
    const table = page.getByTestId('routing-table');
    const headers = await table.getByRole('columnheader').allTextContents();
    const index = headers.indexOf(column);
    expect(index, `column ${column} in ${headers.join(', ')}`).toBeGreaterThan(0);
    const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: upstream, exact: true }) });
    return (await row.getByRole('cell').nth(index - 1).innerText()).replace(/\s+/g, ' ').trim();
  }

  it("shows a lookup's spend in the currency, the out-of-funds state with why and until when, prices, budget and last error", async () => {
    await page.goto('/console/admin/providers');
    await expect(page.getByRole('heading', { name: 'Paid upstreams: routing' }).isVisible()).resolves.toBe(true);

    expect(await cell('cheap', 'State')).toBe('out of funds insufficient funds (HTTP 402) until 2026-11-28 10:10 UTC');
    expect(await cell('cheap', 'Spend today (UTC)')).toBe('GBP 0.05 1 call');
    expect(await cell('cheap', 'Spend this month')).toBe('GBP 0.05 1 call');
    expect(await cell('cheap', 'Price')).toBe('GBP 0.05 CHEAP_PRICE');
    expect(await cell('cheap', 'Monthly budget')).toBe('GBP 1.00 5 % used');
    expect(await cell('cheap', 'Last error')).toBe('out-of-funds: insufficient funds (HTTP 402) 2026-11-28 10:00 UTC');

    expect(await cell('middle', 'State')).toBe('ready');
    expect(await cell('middle', 'Spend today (UTC)')).toBe('GBP 0.10 1 call');
    expect(await cell('middle', 'Price')).toBe("GBP 0.10 the provider's own price");
    expect(await cell('middle', 'Balance')).toBe('9.9');
    expect(await cell('middle', 'Monthly budget')).toBe('none');
    expect(await cell('dear', 'Spend today (UTC)')).toBe('GBP 0.00 0 calls');
    expect(await cell('dear', 'Last error')).toBe('none');

    // The order the router asks them in now: cheapest first, cheap skipped while it is out.
    const order = page.getByRole('list').filter({ has: page.getByText('cheap:') });
    expect((await order.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim())).toEqual([
      'cheap: GBP 0.05, out of funds (skipped)',
      'middle: GBP 0.10, ready',
      'dear: GBP 0.40, ready',
    ]);
    await shot(page, 'providers-routing');
  });

  it('follows the router when cheap is back and the order changes with UPSTREAM_ORDER', async () => {
    world.cheap.answerAll(undefined);
    world.clock.advance(11 * 60_000);
    const alice = await world.account(app, 'alice-2');
    expect((await world.lookup(app, alice, 'CD345EF')).headers['x-lookup-source']).toBe('cheap');
    await page.goto('/console/admin/providers');
    expect(await cell('cheap', 'State')).toBe('ready');
    expect(await cell('cheap', 'Spend today (UTC)')).toBe('GBP 0.10 2 calls');
    expect(await cell('cheap', 'Monthly budget')).toBe('GBP 1.00 10 % used');

    const ordered = await world.instance({ UPSTREAM_ORDER: 'dear' });
    const base = await ordered.app.listen({ port: 0, host: '127.0.0.1' });
    await page.goto(`${base}/console/login`);
    await page.getByLabel('User name').fill('root');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForLoadState();
    await page.goto(`${base}/console/admin/providers`);
    const order = page.getByRole('list').filter({ has: page.getByText('dear:') });
    expect((await order.getByRole('listitem').allTextContents()).map((t) => t.replace(/:.*/s, ''))).toEqual(['dear', 'cheap', 'middle']);
  });
});
