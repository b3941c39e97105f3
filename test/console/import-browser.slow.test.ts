import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportJobRepository } from '../../src/datasets/import/import-job.repository.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { HAVE_CHROMIUM, launchChromium, shot, unlabelledFields } from '../helpers/chromium.js';

/**
 * Issue 18's import page in a real browser (Debian's Chromium driven by playwright-core, as in
 * console-browser.slow.test.ts): the upload with its progress bar, the job page following the
 * import to its report, the same form without JavaScript, and a viewer without the form.
 * Screenshots go where that suite puts them (CONSOLE_SCREENSHOTS, default .scratch/screenshots).
 */

const france = (plate: string, description: string): string => JSON.stringify({ operation: 'CheckFrance', key: { RegistrationNumber: plate }, vehicle: { Description: description } });
const usa = (plate: string): string => JSON.stringify({ operation: 'CheckUSA', key: { RegistrationNumber: plate, State: 'CA' }, vehicle: { Description: `Car ${plate}` } });

describe.skipIf(!HAVE_CHROMIUM)('console imports in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    for (const [name, role] of [['root', 'admin'], ['watcher', 'viewer']] as const) {
      const { inviteToken } = await users(t).createOperator(name, role, true);
      await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    }
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await t.close();
  });

  /** A logged-in page; every script error and CSP violation is collected in `problems`. */
  async function session(username: string, options: { javaScript?: boolean; viewport?: { width: number; height: number } } = {}): Promise<{ ctx: BrowserContext; page: Page; problems: string[] }> {
    const ctx = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 900 }, baseURL: base, javaScriptEnabled: options.javaScript ?? true });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto('/console/login');
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForLoadState();
    return { ctx, page, problems };
  }

  /** Every visible form field has a label. */
  async function labelled(page: Page): Promise<void> {
    const unlabelled = await unlabelledFields(page, 'progress');
    expect(unlabelled).toEqual([]);
  }

  it('uploads with a progress bar, follows the job to its summary, and reports invalid lines with their numbers', async () => {
    const { ctx, page, problems } = await session('root');
    await page.getByRole('link', { name: 'Imports', exact: true }).click();
    expect(page.url()).toBe(`${base}/console/admin/imports`);
    await labelled(page);

    // 30,000 records, big enough for the job page to catch it running.
    const lines = Array.from({ length: 30_000 }, (_, i) => (i % 3 === 0 ? usa(`US${i}`) : france(`FR${String(i).padStart(6, '0')}`, 'Peugeot 208')));
    const file = Buffer.from(`${lines.join('\n')}\n`);
    // Hold the upload at the server's door long enough to see its progress bar.
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/admin/api/imports?*', async (route) => {
      await held;
      await route.continue();
    });
    // Every text the upload's status line shows, recorded as it changes.
    const statuses: string[] = [];
    await page.exposeFunction('recordStatus', (text: string) => statuses.push(text));
    await page.evaluate(`(() => {
      const status = document.querySelector('[data-upload-status]');
      new MutationObserver(() => window.recordStatus(status.textContent)).observe(status, { childList: true, characterData: true, subtree: true });
    })()`);
    await page.getByLabel('Source name').fill('browser-feed');
    await page.getByLabel('File (.jsonl)').setInputFiles({ name: 'fleet.jsonl', mimeType: 'application/octet-stream', buffer: file });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await expect(page.getByLabel('Upload', { exact: true }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Uploading/);
    await expect(page.getByRole('button', { name: 'Upload and import' }).isDisabled()).resolves.toBe(true);
    await shot(page, 'operator-import-uploading');
    release();

    // The job page: it follows the import through the API and shows the summary when it is done.
    await page.waitForURL(/\/console\/admin\/imports\/\d+$/);
    expect(statuses).toContain(`Uploading: 100% of ${file.length} bytes`);
    await expect(page.getByLabel('Done', { exact: true }).isVisible()).resolves.toBe(true);
    await page.getByText('Imported 30000 records.').waitFor({ timeout: 30_000 });
    await expect(page.getByTestId('import-state').textContent()).resolves.toBe('done');
    await expect(page.getByTestId('import-operations').textContent()).resolves.toMatch(/CheckFrance\s*20000[\s\S]*CheckUSA\s*10000/);
    await labelled(page);
    await shot(page, 'operator-import-done');
    const key = await t.account('fleet', 5);
    expect((await fetch(`${base}/api/json.aspx/CheckFrance/FR000001`, { headers: { authorization: t.basic('fleet', key) } })).status).toBe(200);

    // A file with invalid lines, all or nothing: its report names each line and why.
    await page.goto('/console/admin/imports');
    await page.getByLabel('File (.jsonl)').setInputFiles({ name: 'broken.jsonl', mimeType: 'application/octet-stream', buffer: Buffer.from(`${france('OK0001', 'fine')}\n{"operation": "CheckFrance"\n\n${JSON.stringify({ operation: 'CheckMars', key: {}, vehicle: {} })}\n`) });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.waitForURL(/\/console\/admin\/imports\/\d+$/);
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('2 invalid lines: nothing imported');
    const report = (await page.getByTestId('import-invalid').textContent()) ?? '';
    expect(report).toMatch(/2\s*not valid JSON/);
    expect(report).toMatch(/4\s*.*CheckMars/);
    await shot(page, 'operator-import-report');

    // The list shows both, newest first.
    await page.goto('/console/admin/imports');
    await expect(page.getByTestId('imports').textContent()).resolves.toMatch(/broken\.jsonl[\s\S]*fleet\.jsonl/);
    await shot(page, 'operator-imports');
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it('follows a job another instance runs: its progress bar moves without a reload, then the page shows the report', async () => {
    // A job of another instance, as the store shows it: checking its file, heartbeat fresh.
    const repository = new ImportJobRepository(t.services.storage.db);
    const db = t.services.storage.db;
    const job = await t.services.storage.transaction((tx) =>
      repository.insert(tx, { actor: { kind: 'operator', name: 'root' }, fileName: 'elsewhere.jsonl', fileSize: 1000, source: 'import', skipInvalid: false, instance: 'other-host:42' }, new Date().toISOString()),
    );
    await repository.markStarted(job.id, 'validating', new Date().toISOString());
    const { ctx, page, problems } = await session('root');
    const polled = page.waitForRequest((request) => request.url() === `${base}/admin/api/imports/${job.id}`);
    await page.goto(`/console/admin/imports/${job.id}`);
    await expect(page.getByTestId('import-state').textContent()).resolves.toBe('checking every line');
    await polled;
    // Half the file checked: the first of two passes, so a quarter of the whole.
    await repository.progress(job.id, { state: 'validating', bytesRead: 500, linesRead: 5, invalid: 0, invalidLines: [] }, new Date().toISOString());
    await page.locator('[data-import-percent]').filter({ hasText: '25%' }).waitFor();
    await expect(page.locator('[data-import-lines]').textContent()).resolves.toBe('5');
    expect(await page.evaluate('performance.getEntriesByType("navigation").length')).toBe(1);
    await shot(page, 'operator-import-running');
    // It ends with invalid lines: the page reloads itself and shows them.
    await t.services.storage.transaction((tx) =>
      repository.finish(tx, job.id, { state: 'failed', bytesRead: 1000, linesRead: 10, invalid: 1, invalidLines: [{ line: 7, reason: 'unknown operation "CheckMars"' }], imported: 0, committed: false, byOperation: {}, error: '1 invalid line: nothing imported' }, new Date().toISOString()),
    );
    await page.getByTestId('import-invalid').waitFor({ timeout: 10_000 });
    await expect(page.getByTestId('import-invalid').textContent()).resolves.toMatch(/7\s*unknown operation "CheckMars"/);
    expect(await db.selectFrom('imports').select('state').where('id', '=', job.id).executeTakeFirstOrThrow()).toEqual({ state: 'failed' });
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it('imports through the same form without JavaScript: a multipart post, then the job page', async () => {
    const { ctx, page } = await session('root', { javaScript: false });
    await page.goto('/console/admin/imports');
    await page.getByLabel('File (.jsonl)').setInputFiles({ name: 'plain.jsonl', mimeType: 'application/octet-stream', buffer: Buffer.from(`${france('NJ0001', 'No script')}\n${france('NJ0002', 'No script')}\n`) });
    await page.getByLabel('Import the valid lines even if some lines are invalid').check();
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.waitForURL(/\/console\/admin\/imports\/\d+$/);
    await t.services.imports.whenIdle();
    await page.reload();
    await expect(page.getByText('Imported 2 records.').isVisible()).resolves.toBe(true);
    await expect(page.getByText('valid lines imported even if some are invalid').isVisible()).resolves.toBe(true);
    await ctx.close();
  });

  it('shows a viewer the imports without the upload form, on a phone too', async () => {
    const { ctx, page, problems } = await session('watcher', { viewport: { width: 375, height: 740 } });
    await page.goto('/console/admin/imports');
    await expect(page.getByTestId('imports').textContent()).resolves.toContain('fleet.jsonl');
    await expect(page.getByRole('button', { name: 'Upload and import' }).count()).resolves.toBe(0);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
    await shot(page, 'viewer-imports-phone');
    expect(problems).toEqual([]);
    await ctx.close();
  });
});
