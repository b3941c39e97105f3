import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { UPLOAD_DIR_PREFIX } from '../../src/datasets/import/upload-file.js';
import { PASSWORD, users } from '../admin/admin-harness.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { consoleLogin, get, post, type ConsoleSession } from './console-harness.js';

/** Uploads wait in TMPDIR; this file gets its own so that uploads of other suites are not counted. */
const TMP = mkdtempSync(join(tmpdir(), 'vl-console-imports-test-'));
beforeAll(() => {
  vi.stubEnv('TMPDIR', TMP);
});
afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(TMP, { recursive: true, force: true });
});
const leftovers = (): string[] => readdirSync(TMP).filter((name) => name.startsWith(UPLOAD_DIR_PREFIX));

const LIMIT = 4096;
const BOUNDARY = '----vl-test-boundary';
const line = (plate: string, description: string): string => JSON.stringify({ operation: 'CheckFrance', key: { RegistrationNumber: plate }, vehicle: { Description: description } });

type Part = { name: string; value: string } | { name: string; file: string; filename: string };

/** A multipart/form-data body as a browser sends the form: its fields in document order. */
function multipart(parts: readonly Part[]): string {
  const chunks = parts.map((p) =>
    'file' in p
      ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${p.file}\r\n`
      : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`,
  );
  return `${chunks.join('')}--${BOUNDARY}--\r\n`;
}

describe.each(await enginesToTest())('console imports on %s', (engine) => {
  let t: TestApp;
  let root: ConsoleSession;

  beforeEach(async () => {
    t = await createTestApp(await engineEnv(engine, { IMPORT_MAX_BYTES: String(LIMIT) }), undefined, engine);
    root = await operatorSession('root');
  });
  afterEach(async () => {
    await t.close();
    expect(leftovers(), 'an upload left its temporary file').toEqual([]);
  });

  async function operatorSession(name: string, role: 'admin' | 'viewer' = 'admin'): Promise<ConsoleSession> {
    const { inviteToken } = await users(t).createOperator(name, role, true);
    await users(t).acceptInvite(inviteToken ?? '', PASSWORD);
    return consoleLogin(t, name);
  }

  const upload = (session: ConsoleSession | undefined, parts: readonly Part[]): Promise<LightMyRequestResponse> =>
    t.app.inject({
      method: 'POST',
      url: '/console/admin/imports',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...(session ? { cookie: session.cookie } : {}) },
      payload: multipart(parts),
    });
  const form = (session: ConsoleSession, file: string, extra: readonly Part[] = []): Part[] => [
    { name: '_csrf', value: session.csrf },
    { name: 'source', value: 'console' },
    ...extra,
    { name: 'file', file, filename: 'cars.jsonl' },
  ];
  const jobPage = async (location: string, session = root): Promise<string> => {
    await t.services.imports.whenIdle();
    const page = await get(t, location, session);
    expect(page.statusCode).toBe(200);
    return page.body;
  };

  it('imports a file posted through the form without JavaScript, redirects to its job page, and shows the summary by operation', async () => {
    const res = await upload(root, form(root, `${line('AB123CD', 'Renault Clio')}\n${line('EF456GH', 'Peugeot 208')}\n`));
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toMatch(/^\/console\/admin\/imports\/\d+$/);
    const body = await jobPage(String(res.headers.location));
    expect(body).toContain('Imported 2 records.');
    expect(body).toMatch(/<td>CheckFrance<\/td><td class="num">2<\/td>/);
    expect(body).toContain('cars.jsonl');
    expect(body).toContain('<strong>console</strong>');
    expect(body).toContain('data-finished="true"');
    const key = await t.account('buyer', 5);
    expect((await t.app.inject({ url: '/api/json.aspx/CheckFrance/AB123CD', headers: { authorization: t.basic('buyer', key) } })).statusCode).toBe(200);

    const list = await get(t, '/console/admin/imports', root);
    expect(list.body).toContain('enctype="multipart/form-data"');
    expect(list.body).toMatch(/<a href="\/console\/admin\/imports\/\d+">#\d+<\/a><\/td><td>cars\.jsonl<\/td>/);
    expect(list.body).toContain('<a href="/console/admin/imports" aria-current="page">Imports</a>');
    const audit = await t.services.audit.list({ action: 'import.start', limit: 1 });
    expect(audit[0]).toMatchObject({ actor: { kind: 'operator', name: 'root' }, after: { fileName: 'cars.jsonl', source: 'console' } });
  });

  it('shows the validation report of an all-or-nothing import: line numbers and reasons, as text, and nothing imported', async () => {
    const res = await upload(root, form(root, `${line('AB123CD', 'Renault Clio')}\n<script>alert(1)</script>\n\n{"operation":"CheckFrance"}\n`));
    const body = await jobPage(String(res.headers.location));
    expect(body).toContain('2 invalid lines: nothing imported');
    expect(body).toMatch(/<td class="num">2<\/td><td>not valid JSON [^<]*&lt;script&gt;/);
    expect(body).toContain('<td class="num">4</td><td>&quot;vehicle&quot; must be a JSON object</td>');
    expect(body).not.toContain('<script>alert');
    expect(body).toContain('<td colspan="2" class="muted">Nothing imported.</td>');
    expect(await t.services.storage.db.selectFrom('records').select('lookup_key').execute()).toEqual([]);
  });

  it('imports the valid lines with skipInvalid and lists the invalid ones', async () => {
    const res = await upload(root, form(root, `${line('AB123CD', 'Renault Clio')}\nnot json\n`, [{ name: 'skipInvalid', value: 'true' }]));
    const body = await jobPage(String(res.headers.location));
    expect(body).toContain('Imported 1 record, skipped 1 invalid line.');
    expect(body).toMatch(/<td class="num">2<\/td><td>not valid JSON/);
  });

  it('a bad value of the "skip invalid lines" checkbox is refused naming the checkbox\'s label, not skipInvalid (issue 26 item 16)', async () => {
    const res = await upload(root, form(root, `${line('AB123CD', 'Renault Clio')}\n`, [{ name: 'skipInvalid', value: 'maybe' }]));
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Import the valid lines even if some lines are invalid');
    expect(res.body).not.toContain('skipInvalid');
  });

  it('shows a viewer the imports without the form and refuses its upload; refuses customers, a missing CSRF token and a file sent before the token', async () => {
    await upload(root, form(root, `${line('AB123CD', 'Renault Clio')}\n`));
    await t.services.imports.whenIdle();
    const viewer = await operatorSession('watcher', 'viewer');
    const list = await get(t, '/console/admin/imports', viewer);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('cars.jsonl');
    expect(list.body).not.toContain('<form method="post" action="/console/admin/imports"');
    const refused = await upload(viewer, form(viewer, `${line('EF456GH', 'Peugeot 208')}\n`));
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toContain('text/html');
    expect(refused.body).toContain('may only read');

    await t.account('acme', 0);
    const { inviteToken } = await users(t).createCustomer('acme', 'owner@acme', 'owner');
    await users(t).acceptInvite(inviteToken, PASSWORD);
    const buyer = await consoleLogin(t, 'owner@acme');
    for (const res of [await get(t, '/console/admin/imports', buyer), await get(t, '/console/admin/imports/1', buyer), await upload(buyer, form(buyer, `${line('EF456GH', 'Peugeot 208')}\n`))]) {
      expect(res.statusCode).toBe(403);
      expect(res.body).not.toContain('cars.jsonl');
    }

    const noCsrf = await upload(root, [{ name: 'file', file: `${line('EF456GH', 'Peugeot 208')}\n`, filename: 'x.jsonl' }]);
    expect(noCsrf.statusCode).toBe(403);
    const fileFirst = await upload(root, [{ name: 'file', file: `${line('EF456GH', 'Peugeot 208')}\n`, filename: 'x.jsonl' }, { name: '_csrf', value: root.csrf }]);
    expect(fileFirst.statusCode).toBe(403);
    // Without a session the upload is not read: the browser goes to the login page (issue 26 item 12).
    const loggedOut = await upload(undefined, form(root, 'x'));
    expect(loggedOut.statusCode).toBe(303);
    expect(String(loggedOut.headers.location)).toMatch(/^\/console\/login/);
    expect(await t.services.imports.list(10)).toHaveLength(1);
  });

  it('answers a file over the limit with a 413 page, other bodies with 415, unknown fields and bad options with 400, and keeps no file', async () => {
    const tooLarge = await upload(root, form(root, `${line('AB123CD', 'x'.repeat(LIMIT))}\n`));
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.headers['content-type']).toContain('text/html');
    expect(tooLarge.body).toContain(`larger than the limit of ${LIMIT} bytes`);
    expect(leftovers()).toEqual([]);

    const urlencoded = await post(t, '/console/admin/imports', { source: 'x' }, root);
    expect(urlencoded.statusCode).toBe(415);
    const unknown = await upload(root, [{ name: '_csrf', value: root.csrf }, { name: 'admin', value: 'true' }, { name: 'file', file: 'x', filename: 'x.jsonl' }]);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('admin');
    const badSource = await upload(root, [{ name: '_csrf', value: root.csrf }, { name: 'source', value: '<b>bad</b>' }, { name: 'file', file: 'x', filename: 'x.jsonl' }]);
    expect(badSource.statusCode).toBe(400);
    // Said at the source field, the typed name kept and escaped (issue 26 item 10).
    expect(badSource.body).toContain('<p class="field-error" id="i-source-error" role="alert">Source name may hold only letters, digits and . _ -.</p>');
    expect(badSource.body).toContain('value="&lt;b&gt;bad&lt;/b&gt;"');
    const empty = await upload(root, form(root, ''));
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('the file is empty');
    const noFile = await upload(root, [{ name: '_csrf', value: root.csrf }]);
    expect(noFile.statusCode).toBe(400);
    expect((await get(t, '/console/admin/imports/999', root)).statusCode).toBe(404);
    expect(await t.services.imports.list(10)).toEqual([]);
  });

  it('shows a running job as running, with a refresh link for pages without JavaScript', async () => {
    const repository = (await import('../../src/datasets/import/import-job.repository.js')).ImportJobRepository;
    const job = await t.services.storage.transaction((tx) =>
      new repository(t.services.storage.db).insert(tx, { actor: { kind: 'operator', name: 'root' }, fileName: 'slow.jsonl', fileSize: 2048, source: 'import', skipInvalid: false, instance: 'other-host:7' }, new Date().toISOString()),
    );
    const page = await get(t, `/console/admin/imports/${job.id}`, root);
    expect(page.body).toContain('data-finished="false"');
    expect(page.body).toContain('data-state="queued"');
    expect(page.body).toContain(`<a href="/console/admin/imports/${job.id}">Refresh</a>`);
    expect(page.body).toContain('Run by other-host:7');
  });
});
