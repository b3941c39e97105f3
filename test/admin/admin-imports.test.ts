import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { ImportJobRepository } from '../../src/datasets/import/import-job.repository.js';
import { UPLOAD_DIR_PREFIX } from '../../src/datasets/import/upload-file.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { until } from '../helpers/until.js';
import { customer, operator, users, type Login } from './admin-harness.js';

/** Uploads wait in TMPDIR; this file gets its own so that uploads of other suites running at the same time are not counted. */
const TMP = mkdtempSync(join(tmpdir(), 'vl-imports-test-'));
beforeAll(() => {
  vi.stubEnv('TMPDIR', TMP);
});
afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(TMP, { recursive: true, force: true });
});
const leftovers = (): string[] => readdirSync(TMP).filter((name) => name.startsWith(UPLOAD_DIR_PREFIX));
/** Bytes in the upload being received (0 while there is none). */
const receivedBytes = (): number => leftovers().reduce((sum, dir) => sum + (statSync(join(TMP, dir, 'upload.jsonl'), { throwIfNoEntry: false })?.size ?? 0), 0);

const LIMIT = 4096;
const NDJSON = 'application/x-ndjson';

const line = (value: unknown): string => JSON.stringify(value);
const france = (plate: string, description: string) => ({ operation: 'CheckFrance', key: { RegistrationNumber: plate }, vehicle: { Description: description } });
const usa = (plate: string, state: string) => ({ operation: 'CheckUSA', key: { RegistrationNumber: plate, State: state }, vehicle: { Description: `Car ${plate}` } });

interface JobBody {
  id: number;
  state: string;
  fileName: string;
  fileSize: number;
  source: string;
  skipInvalid: boolean;
  linesRead: number;
  imported: number;
  invalid: number;
  committed: boolean;
  percent: number;
  byOperation: Record<string, number>;
  invalidLines?: Array<{ line: number; reason: string }>;
  invalidLinesOmitted?: number;
  error: string | null;
  startedBy: { kind: string; name: string };
}

describe.each(ENGINES)('import jobs through the admin API on %s, on a real port', { timeout: 120_000 }, (engine) => {
  let t: TestApp;
  let base: string;
  let root: Login;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    t = await createTestApp({ IMPORT_MAX_BYTES: String(LIMIT) }, undefined, engine);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    root = await operator(t, 'root');
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'skip') return;
    await t.close();
    expect(leftovers(), 'an upload left its temporary file').toEqual([]);
  });

  const headers = (who: Login, extra: Record<string, string> = {}) => ({ cookie: who.cookie, 'x-csrf-token': who.csrf, ...extra });
  const upload = (body: string, query = '', who: Login = root, contentType = NDJSON) =>
    fetch(`${base}/admin/api/imports${query}`, { method: 'POST', headers: headers(who, { 'content-type': contentType }), body });
  const getJob = async (id: number, who: Login = root, at = base): Promise<JobBody> => {
    const res = await fetch(`${at}/admin/api/imports/${id}`, { headers: { cookie: who.cookie } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { import: JobBody }).import;
  };
  const finished = async (id: number, at = base): Promise<JobBody> => {
    // No deadline of its own (as until.ts): a loaded machine slows an import a lot; the test's timeout bounds it.
    for (;;) {
      const job = await getJob(id, root, at);
      if (job.state === 'done' || job.state === 'failed') return job;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const started = async (res: Response): Promise<JobBody> => {
    expect(res.status, await res.clone().text()).toBe(202);
    const { import: job } = (await res.json()) as { import: JobBody };
    expect(res.headers.get('location')).toBe(`/admin/api/imports/${job.id}`);
    return job;
  };

  it('imports a valid upload as a job (202 and Location), whose records then answer lookups, with its counts by operation and audit rows', async () => {
    const body = [france('AB123CD', 'Renault Clio'), '', usa('7KDJ294', 'CA'), france('EF456GH', 'Peugeot 208')].map((l) => (l === '' ? '' : line(l))).join('\n') + '\n';
    const job = await started(await upload(body, '?source=partner-feed&fileName=feed.jsonl'));
    expect(job).toMatchObject({ fileName: 'feed.jsonl', fileSize: Buffer.byteLength(body), source: 'partner-feed', skipInvalid: false, startedBy: { kind: 'operator', name: 'root' } });
    expect(['queued', 'validating', 'importing', 'done']).toContain(job.state);

    const done = await finished(job.id);
    expect(done).toMatchObject({ state: 'done', committed: true, linesRead: 4, imported: 3, invalid: 0, percent: 100, byOperation: { CheckFrance: 2, CheckUSA: 1 }, invalidLines: [], error: null });

    const key = await t.account('buyer', 10);
    const lookup = await fetch(`${base}/api/json.aspx/CheckFrance/AB123CD`, { headers: { authorization: t.basic('buyer', key) } });
    expect(lookup.status).toBe(200);
    expect(await lookup.json()).toMatchObject({ Description: 'Renault Clio' });
    const stored = await t.services.storage.db.selectFrom('records').select('source').where('lookup_key', '=', 'AB123CD').executeTakeFirstOrThrow();
    expect(stored.source).toBe('partner-feed');

    const audit = await t.services.audit.list({ targetKind: 'import', target: String(job.id), limit: 10 });
    expect(audit.map((r) => r.action)).toEqual(['import.finish', 'import.start']);
    expect(audit[1]).toMatchObject({ actor: { kind: 'operator', name: 'root' }, after: { fileName: 'feed.jsonl', fileSize: Buffer.byteLength(body), source: 'partner-feed', skipInvalid: false } });
    expect(audit[0]).toMatchObject({ after: { state: 'done', imported: 3, invalid: 0, byOperation: { CheckFrance: 2, CheckUSA: 1 } } });

    const list = await fetch(`${base}/admin/api/imports`, { headers: { cookie: root.cookie } });
    const listed = ((await list.json()) as { imports: JobBody[] }).imports;
    expect(listed.map((j) => j.id)).toEqual([job.id]);
    expect(listed[0]).not.toHaveProperty('invalidLines');
  });

  it('imports nothing when a line is invalid (all-or-nothing), and reports each invalid line with its number and reason', async () => {
    const body = [line(france('AB123CD', 'Renault Clio')), '{"operation": "CheckFrance", ', line({ operation: 'CheckNowhere', key: {}, vehicle: {} }), line(france('EF456GH', 'Peugeot 208'))].join('\n');
    const job = await finished((await started(await upload(body))).id);
    expect(job).toMatchObject({ state: 'failed', committed: false, imported: 0, invalid: 2, invalidLinesOmitted: 0 });
    expect(job.error).toBe('2 invalid lines: nothing imported (fix them, or import with skipInvalid to import the valid lines)');
    expect(job.invalidLines?.map((l) => l.line)).toEqual([2, 3]);
    expect(job.invalidLines?.[0]?.reason).toMatch(/^not valid JSON/);
    expect(job.invalidLines?.[1]?.reason).toContain('CheckNowhere');
    const records = await t.services.storage.db.selectFrom('records').select('lookup_key').execute();
    expect(records).toEqual([]);
    const audit = await t.services.audit.list({ action: 'import.finish', limit: 1 });
    expect(audit[0]?.after).toMatchObject({ state: 'failed', imported: 0, invalid: 2, committed: false });
  });

  it('with skipInvalid imports the valid lines and still reports the invalid ones', async () => {
    const body = [line(france('AB123CD', 'Renault Clio')), 'not json', line(france('EF456GH', 'Peugeot 208'))].join('\n');
    const job = await finished((await started(await upload(body, '?skipInvalid=true'))).id);
    expect(job).toMatchObject({ state: 'done', committed: true, skipInvalid: true, imported: 2, invalid: 1, byOperation: { CheckFrance: 2 } });
    expect(job.invalidLines).toEqual([{ line: 2, reason: expect.stringMatching(/^not valid JSON/) as unknown }]);
    expect((await t.services.storage.db.selectFrom('records').select('lookup_key').orderBy('lookup_key').execute()).map((r) => r.lookup_key)).toEqual(['AB123CD', 'EF456GH']);
  });

  it('refuses a file over IMPORT_MAX_BYTES with 413, whether its size is declared or it streams past the limit, and leaves no temporary file', async () => {
    const big = `${line(france('AB123CD', 'x'.repeat(LIMIT)))}\n`;
    const declared = await upload(big);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ error: 'too-large', message: `the file is larger than the limit of ${LIMIT} bytes (IMPORT_MAX_BYTES)` });
    expect(leftovers()).toEqual([]);

    // Chunked, without Content-Length: refused as the bytes pass the limit.
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${base}/admin/api/imports`, { method: 'POST', headers: headers(root, { 'content-type': NDJSON, 'transfer-encoding': 'chunked' }) }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: text });
        });
      });
      req.on('error', reject);
      for (let i = 0; i < 8; i += 1) req.write(`${line(france(`AB${i}`, 'y'.repeat(1000)))}\n`);
      req.end();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toMatchObject({ error: 'too-large' });
    expect(leftovers()).toEqual([]);
    expect(await t.services.imports.list(10)).toEqual([]);
  });

  it('keeps no temporary file and starts no job when the client disconnects in the middle of its upload', async () => {
    const req = httpRequest(`${base}/admin/api/imports`, { method: 'POST', headers: headers(root, { 'content-type': NDJSON, 'transfer-encoding': 'chunked' }) });
    req.on('error', () => undefined);
    const half = `${line(france('AB123CD', 'half'))}\n`;
    req.write(half);
    // Wait until the server holds the partial file (however long a busy machine takes), then cut the connection.
    await until(() => receivedBytes() === Buffer.byteLength(half));
    req.destroy();
    // Only the server sees the disconnect: wait for it to refuse the upload, not for some time to pass.
    await t.services.imports.whenReceived();
    expect(leftovers()).toEqual([]);
    expect(await t.services.imports.list(10)).toEqual([]);
  });

  it('refuses other media types (415), compressed and empty bodies and invalid parameters, naming the problem', async () => {
    const valid = line(france('AB123CD', 'Renault Clio'));
    const json = await upload(valid, '', root, 'application/json');
    expect(json.status).toBe(415);
    expect(await json.json()).toMatchObject({ error: 'unsupported-media-type' });
    expect((await upload(valid, '', root, 'multipart/form-data; boundary=x')).status).toBe(415);
    const none = await fetch(`${base}/admin/api/imports`, { method: 'POST', headers: headers(root), body: new Blob([valid]) });
    expect(none.status).toBe(415);
    const gzip = await fetch(`${base}/admin/api/imports`, { method: 'POST', headers: headers(root, { 'content-type': NDJSON, 'content-encoding': 'gzip' }), body: valid });
    expect(gzip.status).toBe(415);
    for (const type of ['application/jsonl', 'text/plain; charset=utf-8']) expect((await upload(valid, '', root, type)).status, type).toBe(202);

    const empty = await upload('');
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: 'empty-file' });
    const unknown = await upload(valid, '?force=true');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: 'invalid-request', field: 'force' });
    const badSource = await upload(valid, '?source=has%20space');
    expect(await badSource.json()).toMatchObject({ field: 'source' });
    expect((await fetch(`${base}/admin/api/imports/999`, { headers: { cookie: root.cookie } })).status).toBe(404);
    expect((await fetch(`${base}/admin/api/imports/abc`, { headers: { cookie: root.cookie } })).status).toBe(400);
    await t.services.imports.whenIdle();
  });

  it('lets a viewer and a read token read jobs but not upload, refuses a customer session and a write without the CSRF token', async () => {
    const job = await finished((await started(await upload(line(france('AB123CD', 'Renault Clio'))))).id);
    const viewer = await operator(t, 'watcher', 'viewer');
    expect((await getJob(job.id, viewer)).state).toBe('done');
    const refused = await upload(line(france('EF456GH', 'Peugeot 208')), '', viewer);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'forbidden' });

    // Invited (no one-time password to change first: until then the API answers nothing else).
    const { user } = await users(t).createOperator('ci-owner', 'admin', true);
    const { secret } = await users(t).createToken(user, 'ci', 'read');
    const bearer = { authorization: `Bearer ${secret}` };
    expect((await fetch(`${base}/admin/api/imports/${job.id}`, { headers: bearer })).status).toBe(200);
    const tokenUpload = await fetch(`${base}/admin/api/imports`, { method: 'POST', headers: { ...bearer, 'content-type': NDJSON }, body: line(france('EF456GH', 'Peugeot 208')) });
    expect(tokenUpload.status).toBe(403);

    await t.account('acme', 0);
    const buyer = await customer(t, 'acme', 'owner@acme');
    for (const res of [await fetch(`${base}/admin/api/imports`, { headers: { cookie: buyer.cookie } }), await fetch(`${base}/admin/api/imports/${job.id}`, { headers: { cookie: buyer.cookie } }), await upload(line(france('EF456GH', 'Peugeot 208')), '', buyer)]) {
      expect(res.status).toBe(403);
      const text = await res.text();
      expect(text).not.toContain('AB123CD');
      expect(text).not.toContain('root');
    }
    const noCsrf = await fetch(`${base}/admin/api/imports`, { method: 'POST', headers: { cookie: root.cookie, 'content-type': NDJSON }, body: line(france('EF456GH', 'Peugeot 208')) });
    expect(noCsrf.status).toBe(403);
    expect((await fetch(`${base}/admin/api/imports`, { headers: {} })).status).toBe(401);
    expect(await t.services.imports.list(10)).toHaveLength(1);
  });

  it('shows another instance sharing the store the progress and the result of a job, and reports a job whose instance died as abandoned', async () => {
    // A second instance on the same store (the same PostgreSQL database, or the same SQLite file).
    const other: BuiltApp = await buildApp(loadConfig({ DATA_DIR: t.dataDir, LOG_LEVEL: 'silent', ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}) }));
    try {
      const otherBase = await other.app.listen({ port: 0, host: '127.0.0.1' });
      // Large enough to take a while: 60,000 lines, uploaded past the small limit of this suite's app.
      const lines = Array.from({ length: 60_000 }, (_, i) => line(france(`ZZ${String(i).padStart(6, '0')}`, 'Bulk')));
      const upload = await other.services.imports.receive((await import('node:stream')).Readable.from([`${lines.join('\n')}\n`]));
      const job = await other.services.imports.start({ kind: 'operator', name: 'root' }, upload, { fileName: 'bulk.jsonl', source: 'bulk', skipInvalid: false });
      const seen = new Set<string>();
      let last: JobBody | undefined;
      while (last?.state !== 'done' && last?.state !== 'failed') {
        last = await getJob(job.id);
        seen.add(last.state);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(last).toMatchObject({ state: 'done', imported: 60_000, linesRead: 60_000, byOperation: { CheckFrance: 60_000 } });
      expect([...seen].some((s) => s === 'validating' || s === 'importing'), `states seen from this instance: ${[...seen].join(', ')}`).toBe(true);
      expect((await getJob(job.id, root, otherBase)).state).toBe('done');
    } finally {
      await other.app.close();
    }

    // A job left by an instance that stopped: its heartbeat is ten minutes old.
    const repository = new ImportJobRepository(t.services.storage.db);
    const long = new Date(Date.now() - 10 * 60_000).toISOString();
    const dead = await t.services.storage.transaction((tx) =>
      repository.insert(tx, { actor: { kind: 'operator', name: 'root' }, fileName: 'lost.jsonl', fileSize: 10, source: 'import', skipInvalid: false, instance: 'gone-host:1' }, long),
    );
    const reported = await getJob(dead.id);
    expect(reported.state).toBe('failed');
    expect(reported.error).toMatch(/^abandoned: the instance running it stopped \(last heard from at /);
    const audit = await t.services.audit.list({ action: 'import.abandon', limit: 5 });
    expect(audit.map((r) => r.target)).toEqual([String(dead.id)]);
    // A live job is not abandoned: its heartbeat is fresh.
    const fresh = await t.services.storage.transaction((tx) =>
      repository.insert(tx, { actor: { kind: 'operator', name: 'root' }, fileName: 'running.jsonl', fileSize: 10, source: 'import', skipInvalid: false, instance: 'busy-host:1' }, new Date().toISOString()),
    );
    expect((await getJob(fresh.id)).state).toBe('queued');
  });
});
