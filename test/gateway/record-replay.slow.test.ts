import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { OPERATIONS } from '../../src/catalogue/operations.js';
import { AnswerRecorder, perProcessPath } from '../../src/providers/upstream/answer-recorder.js';
import { RecordValidator } from '../../src/datasets/import/record-validator.js';
import { enginesToTest } from '../helpers/engines.js';
import { tempDir } from '../helpers/test-app.js';
import { cli, REPO_ROOT } from '../cli/cli-harness.js';
import { REGCHECK_FIXTURES } from '../fakes/fake-regcheck.js';
import { redisAvailable, REDIS_TEST_URL, uniquePrefix } from '../redis/redis-harness.js';
import { replayWorld } from './gateway-harness.js';

const catalogue = new Catalogue(OPERATIONS);
const validator = new RecordValidator(catalogue);

/** The GET binding's URL of a fake fixture, asked by `username`. */
function fixtureUrl(fixture: (typeof REGCHECK_FIXTURES)[number], username: string): string {
  const op = catalogue.find(fixture.operation);
  if (!op) throw new Error(`no operation ${fixture.operation}`);
  const given = new Map(fixture.params);
  const params = new URLSearchParams();
  for (const p of op.parameters) params.append(p.name, p.role === 'username' ? username : given.get(p.name) ?? '');
  return `/api/${fixture.service === 'reg' ? 'reg' : 'bespokeapi'}.asmx/${fixture.operation}?${params.toString()}`;
}

/** Every line of a file parses and is a valid import line. */
function importLines(path: string): Array<Record<string, unknown>> {
  const text = readFileSync(path, 'utf8');
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const value = JSON.parse(l) as Record<string, unknown>;
      const checked = validator.validate(value);
      if (!checked.ok) throw new Error(`not an import line: ${checked.reason}`);
      return value;
    });
}

describe('the record file (REGCHECK_RECORD_FILE)', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => {
    dir.remove();
  });

  it('cuts a torn last line at start, so the file holds whole lines only', () => {
    const path = join(dir.path, 'torn.jsonl');
    writeFileSync(path, '{"a":1}\n{"b":2}\n{"operation":"Check","key":{"Regis');
    const recorder = new AnswerRecorder(path);
    expect(recorder.cutBytes).toBe('{"operation":"Check","key":{"Regis'.length);
    recorder.append({ c: 3 });
    recorder.close();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
  });

  it('gives a second running writer a file of its own, and takes over the lock of a killed one', () => {
    const path = join(dir.path, 'shared.jsonl');
    const first = new AnswerRecorder(path);
    // Our own parent is alive: a writer with its pid holds the file.
    const second = new AnswerRecorder(path, undefined, process.ppid);
    expect(first.path).toBe(path);
    expect(second.path).toBe(perProcessPath(path, process.ppid));
    first.append({ n: 1 });
    second.append({ n: 2 });
    first.close();
    second.close();
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n');
    expect(existsSync(`${path}.lock`)).toBe(false);
    // A lock left behind by a process that no longer runs is taken over.
    writeFileSync(`${path}.lock`, '2147483646\n');
    const third = new AnswerRecorder(path);
    expect(third.path).toBe(path);
    third.close();
  });

  it('survives kill -9 of a process appending to it: whole lines only, each an import line', async () => {
    const path = join(dir.path, 'killed.jsonl');
    const line = { operation: 'CheckIOM', key: { regNumber: 'MAN123' }, vehicle: { Description: 'FORD FOCUS', Notes: 'x'.repeat(9000) }, source: 'regcheck', fetchedAt: '2026-01-01T00:00:00.000Z' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/gateway/record-appender.child.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, RECORD_FILE: path, RECORD_LINE: JSON.stringify(line) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // Kill it once it has appended a good number of lines (polling the file, not a clock).
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => {
        reject(new Error(`the appender ended by itself (${String(code)})`));
      });
      const poll = setInterval(() => {
        if (existsSync(path) && readFileSync(path).length > 2_000_000) {
          clearInterval(poll);
          child.removeAllListeners('exit');
          child.once('exit', () => {
            resolve();
          });
          child.kill('SIGKILL');
        }
      }, 20);
    });
    // The next writer (this process) cuts whatever the kill left of a line, and appends after it.
    const next = new AnswerRecorder(path);
    expect(next.path).toBe(path);
    next.append({ ...line, fetchedAt: '2026-02-01T00:00:00.000Z' });
    next.close();
    const lines = importLines(path);
    expect(lines.length).toBeGreaterThan(100);
    expect(lines.at(-1)?.fetchedAt).toBe('2026-02-01T00:00:00.000Z');
  });
});

const caches = (await redisAvailable()) ? (['without Redis', 'with Redis'] as const) : (['without Redis'] as const);
const cases = (await enginesToTest()).flatMap((engine) => caches.map((cache) => [engine, cache] as const));

/**
 * Record and replay (issue 24): what the original answered, recorded as it came
 * (REGCHECK_RECORD_FILE) or exported later (`export --source regcheck`), imported into another
 * store without REGCHECK_USERNAME, answers the same requests with the same bytes, offline.
 */
describe.each(cases)('record and replay on %s, %s', (engine, cache) => {
  const world = replayWorld(engine);
  const store = () => world.store();

  it('a fresh store that imports the record file, or the export, answers the same bytes without the original', async () => {
    const recordFile = join(world.dir, 'regcheck.jsonl');
    const redis = cache === 'with Redis' ? { REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix() } : {};
    const gatewayStore = await store();
    const gateway = await world.app(gatewayStore, { REGCHECK_USERNAME: 'op-user', REGCHECK_BASE_URL: world.fake.baseUrl, REGCHECK_RECORD_FILE: recordFile, ...redis });
    const { apiKey } = await gateway.services.accounts.create('alice', 100);
    // Some operations take no username: they need the account's key (HTTP Basic) on every binding.
    const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`alice:${key}`).toString('base64')}` });
    const answers = new Map<string, string>();
    for (const fixture of REGCHECK_FIXTURES) {
      const url = fixtureUrl(fixture, 'alice');
      const res = await gateway.app.inject({ url, headers: basic(apiKey) });
      expect(res.statusCode, `${fixture.operation}: ${res.body}`).toBe(200);
      answers.set(url, res.body);
    }
    // A second ask is answered from the cache: recorded once.
    await gateway.app.inject({ url: fixtureUrl(REGCHECK_FIXTURES[0] ?? (undefined as never), 'alice'), headers: basic(apiKey) });
    const recorded = importLines(recordFile);
    expect(recorded.every((l) => l.source === 'regcheck' && typeof l.fetchedAt === 'string')).toBe(true);
    expect(recorded.length).toBeGreaterThanOrEqual(REGCHECK_FIXTURES.length - 2);

    const exported = await cli({ LOG_LEVEL: 'silent', ...gatewayStore.env }, ['export', '--source', 'regcheck']);
    expect(exported.code, exported.err).toBe(0);
    const exportFile = join(world.dir, 'export.jsonl');
    writeFileSync(exportFile, `${exported.out}\n`);
    expect(importLines(exportFile).map((l) => l.operation).sort()).toEqual(recorded.map((l) => l.operation).sort());
    const since = await cli({ LOG_LEVEL: 'silent', ...gatewayStore.env }, ['export', '--source', 'regcheck', '--since', '2999-01-01']);
    expect(since.out).toBe('');

    const recordedOps = new Set(recorded.map((l) => l.operation));
    for (const file of [recordFile, exportFile]) {
      const offlineStore = await store();
      const imported = await cli({ LOG_LEVEL: 'silent', ...offlineStore.env }, ['import', file, '--json']);
      expect(imported.code, imported.out + imported.err).toBe(0);
      const offline = await world.app(offlineStore, {});
      expect(offline.regcheck).toBeUndefined();
      const offlineKey = (await offline.services.accounts.create('alice', 100)).apiKey;
      const calls = world.fake.calls();
      for (const fixture of REGCHECK_FIXTURES.filter((f) => recordedOps.has(f.operation))) {
        const url = fixtureUrl(fixture, 'alice');
        const res = await offline.app.inject({ url, headers: basic(offlineKey) });
        expect(res.statusCode, `${fixture.operation} offline: ${res.body}`).toBe(200);
        expect(res.body, fixture.operation).toBe(answers.get(url));
      }
      expect(world.fake.calls()).toBe(calls);
      // Each answer is kept for the operation it answered (operation_records), none for its whole dataset.
      const sources = await offline.services.storage.db.selectFrom('operation_records').select('source').distinct().execute();
      expect(sources.map((s) => s.source)).toEqual(['regcheck']);
      expect(await offline.services.storage.db.selectFrom('records').select('dataset').execute()).toEqual([]);
    }
  });
});
