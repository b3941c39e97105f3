import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, FRANCE, login, operator, PASSWORD, users, type Login } from '../admin/admin-harness.js';
import { FakeHttpServer } from '../fakes/fake-http-server.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { HAVE_CHROMIUM, launchChromium, shot } from '../helpers/chromium.js';

/**
 * Issue 26 item 8 in Debian's Chromium: every page a person uses, logged out, as an operator and as
 * a customer, at 1440 px and at a phone's 390 px, is no wider than the window (nothing to scroll
 * sideways but a table inside its own box); a table that scrolls says so and can be reached by
 * keyboard; the usage chart's axis labels stay readable on the phone. Each page is measured as it
 * loads and again with every <details> opened. Screenshots go where the other browser suites put
 * theirs (.scratch/screenshots or CONSOLE_SCREENSHOTS).
 */

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const VIEWPORTS = [
  ['1440 px', DESKTOP],
  ['390 px', PHONE],
] as const;

/** The smallest rendered size, in CSS pixels of the window, at which we hold the chart's axis labels readable. */
const MIN_LABEL_PX = 11;

/**
 * Browser-side: the document's width against the window's, and which elements stick out (the
 * outermost ones, outside any box that scrolls or clips), to say what to fix when it fails.
 */
const MEASURE = `(() => {
  const width = window.innerWidth;
  const clips = (el) => { for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) { if (getComputedStyle(a).overflowX !== 'visible') return true; } return false; };
  const out = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > width + 0.5 && !(el.parentElement && el.parentElement.getBoundingClientRect().right > width + 0.5) && !clips(el));
  const name = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ' ' + JSON.stringify((el.textContent || '').trim().slice(0, 40)) + ' ' + Math.round(el.getBoundingClientRect().right) + 'px';
  return { scrollWidth: document.documentElement.scrollWidth, innerWidth: width, sticksOut: out.slice(0, 5).map(name) };
})()`;

interface Measure {
  readonly scrollWidth: number;
  readonly innerWidth: number;
  readonly sticksOut: readonly string[];
}

/** Browser-side: the rendered font size (computed size times the SVG's scale) of every axis label of every usage chart. */
const CHART_LABEL_SIZES = `[...document.querySelectorAll('figure.chart svg text, figure.chart .axis > *')].map((el) => {
  const size = parseFloat(getComputedStyle(el).fontSize);
  const scale = typeof el.getScreenCTM === 'function' ? (el.getScreenCTM() || { a: 1 }).a : 1;
  return Math.round(size * scale * 10) / 10;
})`;

/** Browser-side: each table's scrolling box: does it scroll, its accessible name and role, is it focusable, is its hint shown. */
const TABLE_BOXES = `[...document.querySelectorAll('table')].map((table) => {
  const box = table.closest('.table-wrap');
  if (!box) return { table: table.dataset.testid || '', box: false };
  const hint = box.previousElementSibling && box.previousElementSibling.matches('.scroll-hint') ? box.previousElementSibling : null;
  const shown = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  return {
    table: table.dataset.testid || '',
    box: true,
    // Shown (not inside a closed <details>) and wider than its box by more than a rounding pixel.
    scrolls: box.checkVisibility() && box.scrollWidth > box.clientWidth + 1,
    role: box.getAttribute('role'),
    label: box.getAttribute('aria-label') || '',
    tabindex: box.getAttribute('tabindex'),
    hint: shown(hint),
  };
})`;

interface TableBox {
  readonly table: string;
  readonly box: boolean;
  readonly scrolls?: boolean;
  readonly role?: string | null;
  readonly label?: string;
  readonly tabindex?: string | null;
  readonly hint?: boolean;
}

describe.skipIf(!HAVE_CHROMIUM)('every page fits the window, at 1440 px and on a 390 px phone (issue 26 item 8)', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let receiver: FakeHttpServer;
  let oneTimePassword = '';
  let importId = 0;
  let customerEndpoint = 0;
  let accountEndpoint = 0;
  let operatorEndpoint = 0;

  beforeAll(async () => {
    // The receiver listens on 127.0.0.1, which only WEBHOOK_ALLOW_PRIVATE_URLS allows.
    t = await createTestApp({ SIGNUP_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', CREDIT_ALERT_SWEEP_MS: '3600000' });
    await t.importRecords([FRANCE]);
    receiver = await FakeHttpServer.start(() => ({ status: 204 }));
    const root = await operator(t, 'root');
    oneTimePassword = (await users(t).createOperator('newcomer', 'admin', false)).password ?? '';
    // An account with a long name, a customer with a long e-mail address: the words that stretch a page.
    const acme = await t.account('acme-logistics-international', 1000);
    const { inviteToken } = await users(t).createCustomer('acme-logistics-international', 'dana.longname-for-a-phone@acme-logistics.example', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    const dana = await login(t, 'account', 'dana.longname-for-a-phone@acme-logistics.example');
    const admin = as(t, root);
    const customer = as(t, dana);

    // A ledger with lookups, a grant with a reference and a note, and an audit log with its before and after.
    for (const plate of ['EG258MA', 'EG258MA', 'ZZ999ZZ']) await t.app.inject({ url: `/api/json.aspx/CheckFrance/${plate}`, headers: { authorization: t.basic('acme-logistics-international', acme) } });
    await t.lookupRollup.flush();
    expect((await admin('POST', '/admin/api/accounts/acme-logistics-international/credits', { operation: 'grant', amount: 250, reference: 'INV-2026-11-000123', note: 'Quarterly top-up, paid by bank transfer' })).statusCode).toBe(200);
    expect((await customer('POST', '/account/api/keys', { name: 'production-server-eu-west' })).statusCode).toBe(201);
    expect((await admin('POST', '/admin/api/test-plates', { operation: 'CheckFrance', values: ['AA123AA'] })).statusCode).toBe(201);
    expect((await admin('POST', '/admin/api/tokens', { name: 'billing-system-nightly-sync', scope: 'read' })).statusCode).toBe(201);

    // Webhook endpoints with long URLs, each with a test event sent and delivered.
    const endpoint = async (who: Login, path: string, name: string): Promise<number> => {
      const res = await as(t, who)('POST', path, { url: `${receiver.url}/hooks/vehicle-lookup/${name}/credit-alerts-and-more`, description: `${name} billing system` });
      expect(res.statusCode).toBe(201);
      const id = res.json<{ endpoint: { id: number } }>().endpoint.id;
      expect((await as(t, who)('POST', `${path}/${id}/test`)).statusCode).toBe(202);
      return id;
    };
    customerEndpoint = await endpoint(dana, '/account/api/webhooks', 'customer');
    accountEndpoint = await endpoint(root, '/admin/api/accounts/acme-logistics-international/webhooks', 'account');
    operatorEndpoint = await endpoint(root, '/admin/api/webhooks', 'operator');
    await t.services.alerting.dispatcher.drain();

    // An import job with an invalid line, finished.
    const upload = await t.app.inject({
      method: 'POST',
      url: '/admin/api/imports?source=phone-test&skipInvalid=true&fileName=a-rather-long-file-name-from-the-registry-export-2026-11.jsonl',
      headers: { cookie: root.cookie, 'x-csrf-token': root.csrf, 'content-type': 'application/x-ndjson' },
      payload: `${JSON.stringify({ ...FRANCE, key: { RegistrationNumber: 'AB123CD' } })}\n{"operation":"CheckFrance","key":{}}\n`,
    });
    expect(upload.statusCode).toBe(202);
    importId = upload.json<{ import: { id: number } }>().import.id;
    await t.services.imports.whenIdle();

    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await receiver.close();
    await t.close();
  });

  async function open(viewport: { width: number; height: number }, username?: string, password = PASSWORD): Promise<Page> {
    const ctx = await browser.newContext({ viewport, baseURL: base });
    const page = await ctx.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    if (username !== undefined) {
      await page.goto('/console/login');
      await page.getByLabel('User name').fill(username);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForLoadState();
    }
    return page;
  }

  /**
   * Two animation frames: the page's script measures its table boxes in a ResizeObserver, whose
   * callbacks run in a frame's rendering steps; the second frame starts after the first's ran.
   */
  const settled = (page: Page): Promise<unknown> => page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');

  /**
   * What does not fit on the page now, as loaded and then with every <details> open: the page
   * wider than the window, a table outside a labelled region, a scrolling table without its hint
   * or out of the tab order.
   */
  async function misfits(page: Page, what: string): Promise<string[]> {
    const found: string[] = [];
    for (const state of ['as loaded', 'details open']) {
      if (state === 'details open') await page.evaluate(`document.querySelectorAll('details').forEach((d) => { d.open = true; })`);
      await settled(page);
      const m = await page.evaluate<Measure>(MEASURE);
      if (m.scrollWidth > m.innerWidth) found.push(`${what} (${state}): ${m.scrollWidth} px wide in ${m.innerWidth} px; sticking out: ${m.sticksOut.join(', ')}`);
      if (page.url().includes('/console/')) {
        for (const box of await page.evaluate<TableBox[]>(TABLE_BOXES)) {
          if (!box.box || box.role !== 'region' || box.label === '') found.push(`${what} (${state}): table ${box.table} is not in a labelled region`);
          else if (box.scrolls === true && (!box.hint || box.tabindex !== '0')) found.push(`${what} (${state}): table ${box.table} scrolls without its hint or tab stop`);
        }
      }
    }
    return found;
  }

  /** The pages whose phone view docs/console.md shows, by the screenshot's name. */
  const PHONE_SHOTS: Readonly<Record<string, string>> = {
    '/': 'front-page-phone',
    '/openapi/lookup': 'openapi-lookup-phone',
    '/console/admin/accounts/acme-logistics-international': 'operator-account-phone',
  };

  /** Visits each path and measures it; the OpenAPI pages are drawn by their script, so wait for it. */
  async function visit(page: Page, paths: readonly string[]): Promise<string[]> {
    const found: string[] = [];
    for (const path of paths) {
      await page.goto(path);
      if (/openapi\/lookup$|api\/docs$/.test(path)) await page.locator('details.operation').first().waitFor();
      const name = PHONE_SHOTS[path];
      if (name !== undefined && page.viewportSize()?.width === PHONE.width) {
        await settled(page);
        await shot(page, name);
      }
      found.push(...(await misfits(page, path)));
    }
    return found;
  }

  const anonymousPages = ['/', '/api/reg.asmx', '/api/reg.asmx?op=CheckUSA', '/api/bespokeapi.asmx', '/openapi/lookup', '/admin/api/docs', '/console/login', '/console/signup', '/account/invite', '/console/no-such-page'];
  const operatorPages = (): string[] => [
    '/console/admin',
    '/console/admin/accounts',
    '/console/admin/accounts/acme-logistics-international',
    '/console/admin/accounts/acme-logistics-international?operation=CheckFrance',
    '/console/admin/accounts/acme-logistics-international/alerts',
    `/console/admin/accounts/acme-logistics-international/webhooks/${accountEndpoint}`,
    '/console/admin/imports',
    `/console/admin/imports/${importId}`,
    '/console/admin/providers',
    '/console/admin/test-plates',
    '/console/admin/test-plates?operation=CheckUSA',
    '/console/admin/webhooks',
    `/console/admin/webhooks/${operatorEndpoint}`,
    '/console/admin/tokens',
    '/console/admin/audit',
    '/console/password',
  ];
  const customerPages = (): string[] => ['/console/account', '/console/account/alerts', `/console/account/webhooks/${customerEndpoint}`, '/console/account/try', '/console/account/try?operation=CheckUSA', '/console/password'];

  for (const [name, viewport] of VIEWPORTS) {
    it(`logged out at ${name}: the front page, the SOAP help pages, the OpenAPI pages, login, sign-up, an invitation and the 404 page fit`, async () => {
      const page = await open(viewport);
      expect(await visit(page, anonymousPages)).toEqual([]);
      await page.context().close();
    }, 120_000);

    it(`as an operator at ${name}: every console page fits, and so do the pages a form leads to`, async () => {
      const page = await open(viewport, 'root');
      const found = await visit(page, operatorPages());

      // Pages that answer a form: an account created (its key and a curl example), an invitation's link, a token.
      await page.goto('/console/admin/accounts');
      await page.getByLabel('User name').fill(`globex-${viewport.width}-corporation`);
      await page.getByLabel('Starting credits').fill('10');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByTestId('secret').waitFor();
      found.push(...(await misfits(page, 'account created')));
      await page.goto('/console/admin/accounts/acme-logistics-international');
      await page.getByLabel('Invite a user (name or e-mail)').fill(`someone-${viewport.width}@acme-logistics.example`);
      await page.getByRole('button', { name: 'Create invitation' }).click();
      await page.getByTestId('invite-url').waitFor();
      found.push(...(await misfits(page, 'invitation created')));
      await page.goto('/console/admin/tokens');
      await page.getByLabel('Name (what uses it)').fill(`report-${viewport.width}`);
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.getByTestId('secret').waitFor();
      found.push(...(await misfits(page, 'token created')));
      expect(found).toEqual([]);
      await page.context().close();
    }, 180_000);

    it(`as a customer at ${name}: every console page fits, and so do a new key and a Try it answer`, async () => {
      const page = await open(viewport, 'dana.longname-for-a-phone@acme-logistics.example');
      const found = await visit(page, customerPages());
      await page.goto('/console/account');
      await page.getByLabel('New key name').fill(`laptop-${viewport.width}`);
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByTestId('curl').waitFor();
      found.push(...(await misfits(page, 'key created')));
      await page.goto('/console/account/try?operation=CheckFrance');
      await page.getByLabel('RegistrationNumber').fill('EG258MA');
      await page.getByRole('button', { name: 'Run lookup' }).click();
      await page.waitForLoadState();
      found.push(...(await misfits(page, 'Try it answer')));
      expect(found).toEqual([]);
      await page.context().close();
    }, 180_000);
  }

  it('a forced password change fits a phone', async () => {
    const page = await open(PHONE, 'newcomer', oneTimePassword);
    expect(page.url()).toBe(`${base}/console/password`);
    expect(await misfits(page, '/console/password (one-time password)')).toEqual([]);
    await page.context().close();
  }, 60_000);

  it(`keeps the usage chart's axis labels at ${MIN_LABEL_PX} px or more on a phone, for the operator and the customer`, async () => {
    for (const [username, path] of [
      ['root', '/console/admin'],
      ['dana.longname-for-a-phone@acme-logistics.example', '/console/account'],
    ] as const) {
      const page = await open(PHONE, username);
      await page.goto(path);
      const sizes = await page.evaluate<number[]>(CHART_LABEL_SIZES);
      expect(sizes.length, path).toBeGreaterThanOrEqual(4);
      expect(Math.min(...sizes), `${path}: ${sizes.join(', ')}`).toBeGreaterThanOrEqual(MIN_LABEL_PX);
      await page.context().close();
    }
  }, 60_000);

  it('on a phone a table too wide for the screen scrolls in its own labelled, focusable box that says it scrolls; at 1440 px no hint shows', async () => {
    const phone = await open(PHONE, 'dana.longname-for-a-phone@acme-logistics.example');
    await settled(phone);
    const boxes = await phone.evaluate<TableBox[]>(TABLE_BOXES);
    const keys = boxes.find((b) => b.table === 'keys');
    expect(keys).toMatchObject({ box: true, scrolls: true, role: 'region', tabindex: '0', hint: true });
    expect(keys?.label).toBe('API keys table');
    // Every table on the page is in such a box; each one that scrolls has its hint.
    for (const box of boxes) {
      expect(box, box.table).toMatchObject({ box: true, role: 'region' });
      expect(box.label, box.table).not.toBe('');
      if (box.scrolls === true) expect(box, box.table).toMatchObject({ tabindex: '0', hint: true });
    }
    // The keyboard reaches the box by its name and scrolls it, towards Roll and Revoke.
    await phone.getByRole('region', { name: keys?.label ?? '' }).focus();
    await phone.keyboard.press('ArrowRight');
    await settled(phone);
    await expect(phone.evaluate(`document.querySelector('.table-wrap:has(table[data-testid="keys"])').scrollLeft`)).resolves.toBeGreaterThan(0);
    await shot(phone, 'customer-account-phone');
    await phone.context().close();

    const desktop = await open(DESKTOP, 'dana.longname-for-a-phone@acme-logistics.example');
    await settled(desktop);
    const wide = await desktop.evaluate<TableBox[]>(TABLE_BOXES);
    expect(wide.find((b) => b.table === 'keys')).toMatchObject({ scrolls: false, hint: false });
    await desktop.context().close();
  }, 60_000);
});
