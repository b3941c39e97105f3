import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Insertable } from 'kysely';
import { LookupStatsRepository } from '../../src/ops/lookup-stats.repository.js';
import type { LedgerTable } from '../../src/storage/database.js';
import { FRANCE, PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { HAVE_CHROMIUM, launchChromium, shot } from '../helpers/chromium.js';

/**
 * The operator overview in Chromium (issue 18): a month of usage over several accounts and
 * operations, rates per interface, providers and accounts close to zero, on a desktop and a phone.
 * Screenshots go where console-browser.slow.test.ts puts its own (operator-overview.png and
 * operator-overview-phone.png).
 */
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

describe.skipIf(!HAVE_CHROMIUM)('operator overview in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  /** A month of charged lookups of three accounts, written as the debit path writes them (one ledger row each). */
  async function history(): Promise<void> {
    const accounts = await t.services.storage.db.selectFrom('accounts').select(['id', 'username']).where('username', 'in', ['acme', 'globex', 'initech']).execute();
    const operations = ['CheckFrance', 'CheckUSA', 'Check', 'VinCheck'];
    const today = Date.now() - (Date.now() % DAY_MS);
    const rows: Insertable<LedgerTable>[] = [];
    for (let day = 29; day >= 1; day -= 1) {
      for (const [i, account] of accounts.entries()) {
        for (const [j, operation] of operations.entries()) {
          // A weekly rhythm per account and operation: deterministic, and different day to day.
          const n = (((day * 7 + i * 3 + j * 5) % 11) + (day % 7 < 2 ? 0 : 4)) * (j === 0 ? 2 : 1);
          for (let k = 0; k < n; k += 1) {
            rows.push({ account_id: account.id, kind: 'debit', operation, interface: 'json', query: 'AB12CDE', delta: operation === 'Check' ? -2 : -1, balance_after: 0, request_id: null, created_at: new Date(today - day * DAY_MS + (k + 1) * 60_000).toISOString() });
          }
        }
      }
    }
    await t.services.storage.transaction(async (tx) => {
      for (let i = 0; i < rows.length; i += 500) await tx.db.insertInto('ledger').values(rows.slice(i, i + 500)).execute();
    });
    const hour = Date.now() - (Date.now() % HOUR_MS);
    const stat = (hoursAgo: number, iface: string, outcome: string, count: number) => ({ hour: new Date(hour - hoursAgo * HOUR_MS).toISOString(), interface: iface, operation: 'CheckFrance', outcome, count });
    await t.services.storage.transaction((tx) =>
      new LookupStatsRepository(t.services.storage.db).add(tx, [
        stat(3, 'soap11', 'success', 420),
        stat(3, 'soap11', 'not_found', 9),
        stat(30, 'soap11', 'success', 3100),
        stat(30, 'soap11', 'upstream_unavailable', 12),
        stat(5, 'soap12', 'success', 57),
        stat(200, 'http-get', 'success', 880),
        stat(200, 'http-get', 'invalid_input', 31),
        stat(6, 'json', 'success', 1290),
        stat(6, 'json', 'unauthorized', 14),
        stat(6, 'json', 'insufficient_credits', 3),
      ]),
    );
  }

  beforeAll(async () => {
    t = await createTestApp();
    await t.importRecords([FRANCE]);
    const acme = await t.account('acme', 5000);
    await t.account('globex', 12);
    await t.account('initech', 0);
    await t.account('hooli', 3);
    await history();
    // Today's lookups go through the service and the rollup like any other.
    for (let i = 0; i < 3; i += 1) await t.app.inject({ url: '/api/json.aspx/CheckFrance/EG258MA', headers: { authorization: t.basic('acme', acme) } });
    await t.app.inject({ url: '/api/json.aspx/CheckFrance/ZZ999ZZ', headers: { authorization: t.basic('acme', acme) } });
    await t.lookupRollup.flush();
    const { inviteToken } = await users(t).createOperator('watcher', 'viewer', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  async function logIn(page: Page): Promise<void> {
    await page.goto('/console/login');
    await page.getByLabel('User name').fill('watcher');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForLoadState();
  }

  it('shows usage charts, rates per interface, providers and accounts close to zero, on a desktop and on a phone', async () => {
    const problems: string[] = [];
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: base });
    const page = await ctx.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await logIn(page);
    expect(page.url()).toBe(`${base}/console/admin`);

    await expect(page.getByRole('heading', { name: 'Usage of every account' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('img', { name: /Charged lookups per day and operation/ }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('img', { name: /Credits debited per day and operation/ }).isVisible()).resolves.toBe(true);
    const json = page.locator('tr[data-interface="json"] td');
    // The last 24 hours: 1,307 stored by another instance six hours ago, and this instance's 4.
    await expect(json.nth(1).textContent()).resolves.toBe('1311');
    await expect(json.nth(2).textContent()).resolves.toBe(`${(Math.floor((1293 / 1311) * 1000) / 10).toFixed(1)} %`);
    await expect(page.locator('tr[data-interface="http-get"] td').nth(1).textContent()).resolves.toBe('0');
    await expect(page.locator('tr[data-interface="http-get"] td').nth(4).textContent()).resolves.toBe('911');
    const low = await page.locator('section[aria-labelledby="low"] tbody td:first-child').allTextContents();
    expect(low).toEqual(['initech', 'hooli', 'globex']);
    await shot(page, 'operator-overview');

    const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, baseURL: base });
    const small = await phone.newPage();
    await logIn(small);
    expect(await small.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
    await shot(small, 'operator-overview-phone');

    expect(problems).toEqual([]);
    await ctx.close();
    await phone.close();
  });
});
