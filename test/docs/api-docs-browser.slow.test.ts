import Fastify from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDocsPage } from '../../src/http/site/openapi-docs/openapi-docs-page.js';
import { FRANCE, PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { HAVE_CHROMIUM, launchChromium, shot, unlabelledFields } from '../helpers/chromium.js';

/**
 * The one OpenAPI documentation page (src/http/site/openapi-docs/) in a real browser, for both documents
 * it serves: the JSON interface's (/openapi/lookup, HTTP Basic) and the admin and account APIs'
 * (/admin/api/docs, the session cookie). Debian's Chromium driven by playwright-core, as the
 * console's browser test; screenshots beside the console's.
 */

describe.skipIf(!HAVE_CHROMIUM)('OpenAPI documentation pages in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({ SEED_DEMO: 'false' });
    await t.importRecords([FRANCE]);
    key = await t.account('acme', 5);
    const { inviteToken } = await users(t).createOperator('root', 'admin', true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  /** A page that records script errors and refusals by the Content-Security-Policy. */
  async function open(path: string): Promise<{ ctx: BrowserContext; page: Page; problems: string[] }> {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: base });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of (401|404)/.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(path);
    return { ctx, page, problems };
  }

  /** Every visible form field has a label. Browser-side code is passed as text: the project's TypeScript has no DOM library. */
  async function unlabelled(page: Page): Promise<unknown> {
    return unlabelledFields(page);
  }

  it('shows the JSON interface’s operations and sends a lookup with the HTTP Basic credentials typed in', async () => {
    const { ctx, page, problems } = await open('/openapi/lookup');
    await page.getByRole('heading', { level: 1, name: 'vehicle-lookup JSON interface' }).waitFor();
    expect(await page.title()).toBe('vehicle-lookup JSON interface');
    // Exact: the balance page's form has a `username` field too.
    await page.getByLabel('Username', { exact: true }).fill('acme');
    await page.getByLabel('API key').fill(key);
    const operation = page.locator('details#CheckFrance');
    await operation.locator(':scope > summary').click();
    // Filled with the sample record's plate; this one is ours.
    await operation.getByLabel('RegistrationNumber').fill('EG258MA');
    await operation.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => operation.locator('pre.answer').textContent()).toContain('200 OK');
    const answer = (await operation.locator('pre.answer').textContent()) ?? '';
    expect(answer).toContain('x-credits-charged: 1');
    expect(answer).toContain('Peugeot 208 Allure');
    expect((await t.services.accounts.show('acme')).credits).toBe(4);
    // The balance page is at the site's root (its path's own server), not under /api/json.aspx.
    const credits = page.locator('details#GetCredits');
    await credits.locator(':scope > summary').click();
    await credits.getByLabel('username', { exact: true }).fill('acme');
    await credits.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => credits.locator('pre.answer').textContent()).toContain('200 OK');
    expect(await credits.locator('pre.answer').textContent()).toMatch(/^GET \/ajax\/getcredits\.aspx\?username=acme\n[\s\S]*\n4$/);
    // The filter leaves the matching operations only.
    await page.getByLabel('Filter operations').fill('checkfrance');
    expect(await page.locator('details.operation:visible').count()).toBe(1);
    expect(await unlabelled(page)).toEqual([]);
    await shot(page, 'openapi-lookup', { fullPage: false });
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it('shows the 401 answer to a wrong API key instead of the browser’s own sign-in prompt, and sends again after it', async () => {
    const { ctx, page } = await open('/openapi/lookup');
    await page.getByLabel('Username', { exact: true }).fill('acme');
    await page.getByLabel('API key').fill('not-the-key');
    const operation = page.locator('details#CheckFrance');
    await operation.locator(':scope > summary').click();
    await operation.getByLabel('RegistrationNumber').fill('EG258MA');
    await operation.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => operation.locator('pre.answer').textContent()).toContain('401');
    expect((await operation.locator('pre.answer').textContent()) ?? '').toContain('www-authenticate: Basic');
    await page.getByLabel('API key').fill(key);
    await operation.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => operation.locator('pre.answer').textContent()).toContain('200 OK');
    await ctx.close();
  });

  it('shows the admin API’s operations by tag and sends a GET with the browser’s session, asking no credentials', async () => {
    const { ctx, page, problems } = await open('/admin/api/docs');
    await page.getByRole('heading', { level: 1, name: 'vehicle-lookup admin and account API' }).waitFor();
    await expect(page.getByRole('heading', { level: 2, name: 'admin: accounts' }).isVisible()).resolves.toBe(true);
    expect(await page.getByLabel('API key').count()).toBe(0);
    // Writes are described, never sent from the page.
    const create = page.locator('details#postAdminApiAccounts');
    await create.locator(':scope > summary').click();
    expect(await create.getByRole('button', { name: 'Send' }).count()).toBe(0);
    await expect(create.getByText('Body (application/json)').isVisible()).resolves.toBe(true);

    const balance = page.locator('details#getAdminApiAccountsUsernameBalance');
    await balance.locator(':scope > summary').click();
    await balance.getByLabel('username').fill('acme');
    await balance.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => balance.locator('pre.answer').textContent()).toContain('401');
    // Logged in (the same origin's cookie), the same form answers.
    const login = await ctx.request.post(`${base}/admin/api/login`, { data: { username: 'root', password: PASSWORD } });
    expect(login.status()).toBe(200);
    await balance.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => balance.locator('pre.answer').textContent()).toContain('200 OK');
    expect(await balance.locator('pre.answer').textContent()).toContain('"status": "active"');
    expect(await unlabelled(page)).toEqual([]);
    await shot(page, 'openapi-admin', { fullPage: false });
    expect(problems).toEqual([]);
    await ctx.close();
  });

  /** The heading levels of the page in document order (those in closed operations too). */
  function headingLevels(page: Page): Promise<number[]> {
    return page.evaluate(`[...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map((h) => Number(h.tagName.slice(1)))`);
  }

  /** Levels that skip one: a heading more than one level below the one before it (h2 then h4). */
  function skipped(levels: readonly number[]): string[] {
    return levels.flatMap((level, i) => (level > (i === 0 ? 0 : (levels[i - 1] ?? 0)) + 1 ? [`h${i === 0 ? 0 : levels[i - 1]} then h${level} at ${i}`] : []));
  }

  /** The page's text nodes (outside <code> and <pre>) that still hold a Markdown backtick. */
  function literalBackticks(page: Page): Promise<string[]> {
    return page.evaluate(`(() => {
      const walker = document.createTreeWalker(document.getElementById('api-docs'), NodeFilter.SHOW_TEXT);
      const found = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.textContent.includes('\`') && !node.parentElement.closest('code, pre')) found.push(node.textContent);
      }
      return found;
    })()`);
  }

  it('both pages carry the site’s header back to the front page and the console, one h1 and no skipped heading level, and show backticks as code', async () => {
    for (const [path, title, code] of [
      ['/openapi/lookup', 'vehicle-lookup JSON interface', 'GET /api/json.aspx/{Method}/{value}/...'],
      ['/admin/api/docs', 'vehicle-lookup admin and account API', 'unauthorized'],
    ] as const) {
      const { ctx, page, problems } = await open(path);
      // The shell's own h1 is there at once; the document's title once the script has drawn the page.
      await page.getByRole('heading', { level: 1, name: title }).waitFor();
      const header = page.locator('header.top');
      expect(await header.getByRole('link', { name: 'vehicle-lookup' }).getAttribute('href')).toBe('/');
      expect(await header.getByRole('link', { name: 'Console' }).getAttribute('href')).toBe('/console');
      expect(await header.locator('[aria-current="page"]').getAttribute('href'), path).toBe(path);
      const levels = await headingLevels(page);
      expect(levels.filter((l) => l === 1), path).toHaveLength(1);
      expect(levels, path).toContain(3);
      expect(skipped(levels), path).toEqual([]);
      expect(await literalBackticks(page), path).toEqual([]);
      expect((await page.locator('#api-docs code').allTextContents()).filter((text) => text === code).length, path).toBeGreaterThan(0);
      expect(problems).toEqual([]);
      await ctx.close();
    }
    // Every header link leads somewhere (the console to its login when logged out).
    for (const href of ['/', '/console', '/openapi/lookup', '/admin/api/docs']) {
      expect((await fetch(`${base}${href}`, { redirect: 'manual' })).status, href).toBeLessThan(400);
    }
  });

  it('shows a document’s text as text: markup in titles, descriptions and backticks is never parsed as HTML', async () => {
    const evil = Fastify();
    const markup = '<img src=x onerror="window.pwned=1"><b>bold</b>';
    registerDocsPage(evil, { title: 'Hostile', documentUrl: '/hostile.json', route: '/hostile', pageUrl: '/hostile', assetRoute: '/hostile-assets', assetUrl: '/hostile-assets' });
    evil.get('/hostile.json', () => ({
      openapi: '3.1.0',
      info: { title: `Title ${markup}`, version: '1', description: `Plain ${markup} and \`${markup}\` as code` },
      paths: {
        '/x/{id}': {
          get: {
            operationId: 'getX',
            tags: [`tag ${markup}`],
            summary: `Summary \`${markup}\``,
            description: `Description ${markup}`,
            parameters: [{ name: 'id', in: 'path', required: true, description: `Parameter \`${markup}\``, schema: { type: 'string' } }],
            responses: { '200': { description: `Answer \`${markup}\`` } },
          },
        },
      },
    }));
    const url = await evil.listen({ port: 0, host: '127.0.0.1' });
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await ctx.newPage();
      await page.goto(`${url}/hostile`);
      await page.getByRole('heading', { level: 1, name: `Title ${markup}` }).waitFor();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Title ${markup}`);
      expect(await page.locator('#api-docs img, #api-docs b').count()).toBe(0);
      expect(await page.evaluate('window.pwned')).toBeUndefined();
      // Backticks become <code> holding the markup as text; outside them it stays text too.
      const codes = await page.locator('#api-docs code').allTextContents();
      expect(codes.filter((c) => c === markup)).toHaveLength(4);
      await expect(page.locator('#api-docs > p').first().textContent()).resolves.toBe(`Plain ${markup} and ${markup} as code`);
      expect(skipped(await headingLevels(page))).toEqual([]);
    } finally {
      await ctx.close();
      await evil.close();
    }
  });
});
