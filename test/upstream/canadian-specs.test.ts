import { registeredProvider } from '../../src/providers/provider-chains.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildQuery } from '../../src/lookup/lookup-query.js';
import { carSpecificationsGrid } from '../../src/providers/nhtsa/car-specifications.mapper.js';
import type { Provider } from '../../src/lookup/provider.js';
import { loadProviderConfig } from '../../src/config/provider-config.js';
import { upstreamRegistrations } from '../../src/providers/upstream/upstream-registrations.js';
import { UpstreamMonitor } from '../../src/providers/upstream/upstream-monitor.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { CANADIAN_SPEC_NAMES, FakeNhtsa, NHTSA_BASE_PATH } from '../fakes/fake-nhtsa.js';
import { tempDir } from '../helpers/test-app.js';
import { declared, ManualClock } from './harness.js';

/**
 * CarSpecifications' source: vPIC GetCanadianVehicleSpecifications (upstream-sources.md §10.6),
 * mapped to a DataGrid record, against the fake. Queries are built from the catalogue's own
 * declaration, as the pipeline builds them.
 */
const CAR_SPECIFICATIONS = declared('CarSpecifications');

let fake: FakeNhtsa;
let storage: Storage;
let dir: { path: string; remove: () => void };

function specsProvider(env: Record<string, string> = {}): Provider {
  const clock = new ManualClock();
  const config = loadProviderConfig({
    CANADA_SPECS_ENABLED: 'true',
    CANADA_SPECS_BASE_URL: fake.baseUrl,
    // Far above any answer of the local fake however busy the machine; the slow case sets its own.
    CANADA_SPECS_TIMEOUT_MS: '10000',
    CANADA_SPECS_BUDGET_MS: '20000',
    CANADA_SPECS_BREAKER_FAILURES: '100',
    ...env,
  });
  const registrations = upstreamRegistrations({ db: storage.db, clock, config, observer: { upstream: new UpstreamMonitor(() => clock.now()) } });
  const provider = registrations.flatMap((r) => (r.operations.includes('CarSpecifications') ? [registeredProvider(r) ?? []].flat() : []))[0];
  if (!provider) throw new Error('no CarSpecifications provider registered');
  return provider;
}

const ask = (provider: Provider, make: string, model: string, year: string): ReturnType<Provider['find']> =>
  provider.find(buildQuery(CAR_SPECIFICATIONS, { make, model, year }));

beforeAll(async () => {
  fake = await FakeNhtsa.start();
});
afterAll(async () => fake.close());
beforeEach(async () => {
  dir = tempDir();
  storage = await openStorage({ dataDir: dir.path });
  fake.server.reset();
  fake.failWith = undefined;
});
afterEach(async () => {
  await storage.close();
  dir.remove();
});

describe('the CarSpecifications DataGrid', () => {
  it('has the spec names as columns in first-seen order, one row per variant, and skips rows without a Model', () => {
    const grid = carSpecificationsGrid([
      { Specs: [{ Name: 'Make', Value: 'HONDA' }, { Name: 'Model', Value: 'ACCORD 4DR' }, { Name: 'OL', Value: '494' }] },
      { Specs: [{ Name: 'Make', Value: 'HONDA' }, { Name: 'Model', Value: '' }, { Name: 'OL', Value: '1' }] },
      { Specs: [{ Name: 'Make', Value: 'HONDA' }, { Name: 'Model', Value: 'ACCORD 2DR' }, { Name: 'CW', Value: 1454 }, { Name: 'OL', Value: null }] },
      'not an object',
    ]);
    expect(grid).toEqual({
      columnNames: ['Make', 'Model', 'OL', 'CW'],
      data: [
        ['HONDA', 'ACCORD 4DR', '494', ''],
        ['HONDA', 'ACCORD 2DR', '', '1454'],
      ],
      json: '[{"Make":"HONDA","Model":"ACCORD 4DR","OL":"494","CW":""},{"Make":"HONDA","Model":"ACCORD 2DR","OL":"","CW":"1454"}]',
    });
  });

  it('is undefined when no row names its model', () => {
    expect(carSpecificationsGrid([{ Specs: [{ Name: 'Model', Value: '' }] }])).toBeUndefined();
    expect(carSpecificationsGrid(undefined)).toBeUndefined();
  });
});

describe('vPIC Canadian specifications by make, model and year', () => {
  it('sends all four query keys and maps both variants with all 18 names', async () => {
    const provider = specsProvider();
    const answer = await ask(provider, 'Honda', 'Accord', '2011');
    expect(answer).toMatchObject({ status: 'found', source: 'canada-specs' });
    if (answer.status !== 'found') return;
    const grid = answer.record as { columnNames: string[]; data: string[][]; json: string };
    expect(grid.columnNames).toEqual([...CANADIAN_SPEC_NAMES]);
    expect(grid.data.map((row) => row[1])).toEqual(['ACCORD 4DR SEDAN', 'ACCORD 2DR COUPE']);
    expect(grid.data[1]?.[12]).toBe('');
    expect(JSON.parse(grid.json)).toHaveLength(2);
    expect(fake.server.requests.map((r) => r.url)).toEqual([
      `${NHTSA_BASE_PATH}/GetCanadianVehicleSpecifications/?Year=2011&Make=HONDA&Model=ACCORD&units=Metric&format=json`,
    ]);
  });

  it('is not found for Count 0, and for a year before 1971 or after next year without asking', async () => {
    const provider = specsProvider();
    expect(await ask(provider, 'Honda', 'Civic', '2011')).toEqual({ status: 'not-found' });
    expect(fake.specsCalls).toBe(1);
    expect(await ask(provider, 'Honda', 'Accord', '1970')).toEqual({ status: 'not-found' });
    expect(await ask(provider, 'Honda', 'Accord', '2028')).toEqual({ status: 'not-found' });
    expect(fake.specsCalls).toBe(1);
  });

  it('caches found and not-found answers', async () => {
    const provider = specsProvider();
    await ask(provider, 'Honda', 'Accord', '2011');
    await ask(provider, 'HONDA', 'ACCORD', '2011');
    await ask(provider, 'Honda', 'Civic', '2011');
    await ask(provider, 'Honda', 'Civic', '2011');
    expect(fake.specsCalls).toBe(2);
  });

  it('is unavailable (costs nothing) on a 5xx after one retry, a slow answer, the 404 page and a 200 that is not JSON', async () => {
    const provider = specsProvider();
    fake.failWith = 503;
    expect(await ask(provider, 'Honda', 'Accord', '2011')).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/^canada-specs: /) as unknown });
    expect(fake.specsCalls).toBe(2);
    fake.failWith = undefined;
    fake.server.script({ status: 200, json: { Count: 0, Results: [] }, delayMs: 1000 }, { status: 200, json: { Count: 0, Results: [] }, delayMs: 1000 });
    // A source of its own with a timeout well below the fake's delay: only the slow answer is raced.
    const impatient = specsProvider({ CANADA_SPECS_TIMEOUT_MS: '300', CANADA_SPECS_BUDGET_MS: '2000' });
    expect(await ask(impatient, 'Honda', 'Accord', '2011')).toMatchObject({ status: 'unavailable', reason: 'canada-specs: no answer within 300 ms (attempt 2)' });
    fake.server.script({ status: 404, text: '<html>404</html>' });
    expect(await ask(provider, 'Honda', 'Accord', '2011')).toMatchObject({ status: 'unavailable' });
    fake.server.script({ status: 200, text: '<html>maintenance</html>' });
    expect(await ask(provider, 'Honda', 'Accord', '2011')).toMatchObject({ status: 'unavailable' });
    expect(await ask(provider, 'Honda', 'Accord', '2011')).toMatchObject({ status: 'found' });
  });

  it('opens the breaker after repeated failures and stops asking', async () => {
    const provider = specsProvider({ CANADA_SPECS_BREAKER_FAILURES: '2', CANADA_SPECS_BREAKER_OPEN_S: '600' });
    fake.failWith = 500;
    await ask(provider, 'Honda', 'Accord', '2011');
    await ask(provider, 'Honda', 'Accord', '2011');
    const calls = fake.specsCalls;
    fake.failWith = undefined;
    expect(await ask(provider, 'Honda', 'Accord', '2011')).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/circuit open/) as unknown });
    expect(fake.specsCalls).toBe(calls);
  });
});

describe('the fake vPIC Canadian specifications', () => {
  it('answers its 404 HTML page when a query key is missing, and takes the keys in any case', async () => {
    const url = `${fake.baseUrl}/GetCanadianVehicleSpecifications/`;
    expect((await fetch(`${url}?Year=2011&Make=Honda&Model=Accord&format=json`)).status).toBe(404);
    const res = await fetch(`${url}?year=2011&make=honda&model=&units=&format=json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ Count: 3 });
  });
});

describe('configuration', () => {
  it('is off unless CANADA_SPECS_ENABLED is true, and says so', () => {
    const off = loadProviderConfig({});
    expect(off.canadaSpecs).toBeUndefined();
    expect(off.disabled).toContainEqual({ provider: 'canada-specs', reason: 'CANADA_SPECS_ENABLED is not true' });
    expect(loadProviderConfig({ CANADA_SPECS_ENABLED: 'on' }).canadaSpecs?.settings).toMatchObject({ name: 'canada-specs', baseUrl: 'https://vpic.nhtsa.dot.gov/api/vehicles' });
  });
});
