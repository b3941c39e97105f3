import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/accounts/api-key.js';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { ENGINES, enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { describeResponseDifference } from './golden-diff.js';
import { pinnedHeaderNames, readRequest, readResponse, writeResponse, type WireResponse } from './http-fixture.js';

/**
 * Golden wire files (STYLE.md 10, after node-soap's request.xml/response.xml folders): every folder
 * under cases/ is one raw request and the exact response the service must give. Layout, the
 * accounts the cases rely on and UPDATE_GOLDEN are described in test/wire/README.md.
 */

const CASES_DIR = fileURLToPath(new URL('./cases', import.meta.url));
const WIRE_RECORDS_PATH = fileURLToPath(new URL('./wire-records.jsonl', import.meta.url));
const CASES = readdirSync(CASES_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** UPDATE_GOLDEN=1 rewrites every case; UPDATE_GOLDEN=a,b rewrites the named ones only. */
function shouldUpdate(name: string): boolean {
  const setting = process.env.UPDATE_GOLDEN?.trim() ?? '';
  if (setting === '' || setting === '0') return false;
  if (setting === '1' || setting === 'true') return true;
  return setting.split(',').map((s) => s.trim()).includes(name);
}

/** Accounts the cases name in their `username` parameter. */
const WIRE_ACCOUNTS = { wire: 1_000_000, broke: 0 } as const;

/**
 * The `wire` account's API key, fixed so the cases of operations without a username can send it
 * (`Authorization: Basic d2lyZTp3aXJlLWtub3duLWFwaS1rZXktZm9yLW9wZXJhdGlvbnMtd2l0aG91dC11c2VybmFtZQ==`).
 */
const WIRE_API_KEY = 'wire-known-api-key-for-operations-without-username';

/**
 * CheckIrishTaxi is open to anonymous callers, so a case shows that path; the rate is high enough
 * that cases run back to back (all from inject's one address) are never limited.
 */
const WIRE_ENV = { BASE_URL: 'http://wire.test', ANONYMOUS_OPERATIONS: 'CheckIrishTaxi', ANONYMOUS_RATE_PER_SECOND: '1000000' };

function headerText(value: string | string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

// Every case runs on both engines and must give the same bytes on each (STYLE.md 10).
describe.each(await enginesToTest())('golden wire files on %s', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    // A fixed BASE_URL makes ImageUrl independent of the Host header inject sends.
    t = await createTestApp(WIRE_ENV, undefined, engine);
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    if (!summary.committed) throw new Error(`the sample dataset has ${summary.invalid} invalid lines`);
    // Records of shapes the sample does not have (sparse, motorbike, odd values): wire-records.jsonl.
    const extra = await t.services.importer.importFile(WIRE_RECORDS_PATH, { skipInvalid: false, source: 'wire' });
    if (!extra.committed) throw new Error(`wire-records.jsonl has ${extra.invalid} invalid lines`);
    for (const [username, credits] of Object.entries(WIRE_ACCOUNTS)) await t.account(username, credits);
    // A fixed key, so cases that send HTTP Basic for \`wire\` have fixed request files.
    const wire = await t.services.accounts.show('wire');
    await t.services.storage.db.updateTable('api_keys').set({ key_hash: hashApiKey(WIRE_API_KEY) }).where('account_id', '=', wire.id).execute();
  });
  afterAll(async () => t.close());

  it('has cases to run', () => {
    expect(CASES.length).toBeGreaterThan(0);
  });

  for (const name of CASES) {
    const dir = join(CASES_DIR, name);
    const request = readRequest(dir);
    const title = request.description === '' ? name : `${name}: ${request.description}`;

    it(title, async () => {
      const res = await t.app.inject({
        method: request.method,
        url: request.url,
        headers: request.headers,
        ...(request.body === undefined ? {} : { payload: request.body }),
      });
      const actual: WireResponse = {
        status: res.statusCode,
        reason: res.statusMessage,
        headers: Object.entries(res.headers).flatMap(([n, v]) => {
          const text = headerText(v);
          return text === undefined ? [] : [[n, text] as const];
        }),
        body: res.rawPayload,
      };

      // The files are written from the first engine and checked on the others.
      if (shouldUpdate(name) && engine === ENGINES[0]) {
        writeResponse(dir, actual, pinnedHeaderNames(dir));
        return;
      }
      if (!existsSync(join(dir, 'response.http'))) {
        expect.fail(`${name} has no response.http yet: run UPDATE_GOLDEN=${name} npx vitest run test/wire, then review the files it writes`);
      }
      const report = describeResponseDifference(readResponse(dir), actual);
      if (report !== undefined) {
        expect.fail(`${request.method} ${request.url} does not match test/wire/cases/${name}\n${report}`);
      }
    });
  }
});
