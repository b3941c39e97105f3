import { registeredProvider } from '../../src/providers/provider-chains.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildQuery } from '../../src/lookup/lookup-query.js';
import { readRecallCampaigns, recallText } from '../../src/providers/nhtsa/recall-text.mapper.js';
import type { Provider } from '../../src/lookup/provider.js';
import { loadProviderConfig } from '../../src/config/provider-config.js';
import { upstreamRegistrations } from '../../src/providers/upstream/upstream-registrations.js';
import { UpstreamMonitor } from '../../src/providers/upstream/upstream-monitor.js';
import { OfflineVinProvider } from '../../src/providers/vin-offline/offline-vin.provider.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { FakeNhtsaRecalls } from '../fakes/fake-nhtsa-recalls.js';
import { tempDir } from '../helpers/test-app.js';
import { sharedVinDatabase } from '../vin/shared-vin-database.js';
import { declared, ManualClock } from './harness.js';

/**
 * CheckRecalledVIN's source: the offline VIN decode, then the NHTSA Recalls API by make, model and
 * model year (upstream-sources.md §10.4), against the fake. Queries are built from the catalogue's
 * own declaration, as the pipeline builds them.
 */
const CHECK_RECALLED_VIN = declared('CheckRecalledVIN');

const HONDA = '1HGCM82633A004352'; // 2003 Honda Accord: two campaigns in the fake
const TESLA = '5YJ3E1EA2JF000316'; // 2018 Tesla Model 3: 200 with no campaigns
const GOLF = 'WVWZZZ1KZ6W000001'; // a European VIN: make and year offline, no model, so nothing to ask
const EVOQUE = 'SALVA2AE2EH894156'; // no vPIC pattern: no model, not found

let fake: FakeNhtsaRecalls;
let vinDb: string;
let storage: Storage;
let dir: { path: string; remove: () => void };

function recallsProvider(env: Record<string, string> = {}): Provider {
  const clock = new ManualClock();
  const config = loadProviderConfig({
    NHTSA_RECALLS_ENABLED: 'true',
    NHTSA_RECALLS_BASE_URL: fake.baseUrl,
    // Far above any answer of the local fake however busy the machine; the slow case sets its own.
    NHTSA_RECALLS_TIMEOUT_MS: '10000',
    NHTSA_RECALLS_BUDGET_MS: '20000',
    NHTSA_RECALLS_BREAKER_FAILURES: '100',
    ...env,
  });
  const registrations = upstreamRegistrations({
    db: storage.db,
    clock,
    config,
    observer: { upstream: new UpstreamMonitor(() => clock.now()) },
    vinOffline: new OfflineVinProvider(vinDb, clock),
  });
  const provider = registrations.flatMap((r) => (r.operations.includes('CheckRecalledVIN') ? [registeredProvider(r) ?? []].flat() : []))[0];
  if (!provider) throw new Error('no CheckRecalledVIN provider registered');
  return provider;
}

const ask = (provider: Provider, vin: string): ReturnType<Provider['find']> => provider.find(buildQuery(CHECK_RECALLED_VIN, { vin }));

beforeAll(async () => {
  vinDb = await sharedVinDatabase();
  fake = await FakeNhtsaRecalls.start();
}, 120_000);
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

describe('the CheckRecalledVIN answer text', () => {
  it('writes one line per campaign, "NHTSA {campaign}: {component}: {summary}", newest report first, each campaign once', () => {
    const rows = [
      { NHTSACampaignNumber: '15V320000', ReportReceivedDate: '27/05/2015', Component: 'AIR BAGS', Summary: 'May rupture\r\n  in a crash.' },
      { NHTSACampaignNumber: '19V182000', ReportReceivedDate: '07/03/2019', Component: 'AIR BAGS:DRIVER', Summary: 'May explode.' },
      { NHTSACampaignNumber: '15V320000', ReportReceivedDate: '27/05/2015', Component: 'AIR BAGS', Summary: 'Repeated.' },
      { NHTSACampaignNumber: '', Summary: 'no campaign number: skipped' },
      { NHTSACampaignNumber: '20V001000', Component: '', Summary: null },
      'not an object',
    ];
    expect(recallText(readRecallCampaigns(rows))).toBe(
      ['NHTSA 19V182000: AIR BAGS:DRIVER: May explode.', 'NHTSA 15V320000: AIR BAGS: May rupture in a crash.', 'NHTSA 20V001000'].join('\n'),
    );
  });

  it('is empty for no campaigns', () => {
    expect(recallText(readRecallCampaigns([]))).toBe('');
    expect(recallText(readRecallCampaigns(undefined))).toBe('');
  });
});

describe('NHTSA recalls by the decoded VIN', () => {
  it('asks by the make, model and model year decoded offline and lists the campaigns', async () => {
    const provider = recallsProvider();
    const answer = await ask(provider, HONDA);
    expect(answer).toEqual({
      status: 'found',
      source: 'nhtsa-recalls',
      record: [
        'NHTSA 19V182000: AIR BAGS:FRONTAL:DRIVER SIDE:INFLATOR MODULE: The driver air bag inflator may explode on deployment.',
        'NHTSA 15V320000: AIR BAGS:FRONTAL:PASSENGER SIDE:INFLATOR MODULE: The passenger frontal air bag inflator may rupture due to propellant degradation.',
      ].join('\n'),
    });
    expect(fake.server.requests.map((r) => r.url)).toEqual(['/recalls/recallsByVehicle?make=Honda&model=Accord&modelYear=2003']);
  });

  it('answers an empty text when NHTSA has no campaign: a 200 with no rows, or the documented 400 with an empty results', async () => {
    const provider = recallsProvider();
    expect(await ask(provider, TESLA)).toEqual({ status: 'found', source: 'nhtsa-recalls', record: '' });
    fake.server.script({ status: 400, json: { Count: 0, Message: 'No results found for this request', results: [] } });
    expect(await ask(provider, HONDA)).toEqual({ status: 'found', source: 'nhtsa-recalls', record: '' });
  });

  it('keeps answers in the cache, the 400 "no recalls" too (for the not-found TTL)', async () => {
    const provider = recallsProvider();
    fake.server.script({ status: 400, json: { Count: 0, Message: 'No results found for this request', results: [] } });
    await ask(provider, HONDA);
    await ask(provider, HONDA);
    await ask(provider, TESLA);
    await ask(provider, TESLA);
    expect(fake.calls).toBe(2);
  });

  it('is not found, without asking NHTSA, when the VIN decodes to no model', async () => {
    const provider = recallsProvider();
    expect(await ask(provider, GOLF)).toEqual({ status: 'not-found' });
    expect(await ask(provider, EVOQUE)).toEqual({ status: 'not-found' });
    expect(fake.calls).toBe(0);
  });

  it('is unavailable (costs nothing) on a 5xx after one retry, and answers again once NHTSA is back', async () => {
    const provider = recallsProvider();
    fake.failWith = 503;
    expect(await ask(provider, HONDA)).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/^nhtsa-recalls: /) as unknown });
    expect(fake.calls).toBe(2);
    fake.failWith = undefined;
    expect(await ask(provider, HONDA)).toMatchObject({ status: 'found' });
  });

  it('is unavailable on a slow answer (timeout), a 400 that is not the "no recalls" one, a 403 and a 200 without results', async () => {
    const provider = recallsProvider();
    fake.server.script({ status: 200, json: { results: [] }, delayMs: 1000 }, { status: 200, json: { results: [] }, delayMs: 1000 });
    // A source of its own with a timeout well below the fake's delay: only the slow answer is raced.
    const impatient = recallsProvider({ NHTSA_RECALLS_TIMEOUT_MS: '300', NHTSA_RECALLS_BUDGET_MS: '2000' });
    expect(await ask(impatient, HONDA)).toMatchObject({ status: 'unavailable', reason: 'nhtsa-recalls: no answer within 300 ms (attempt 2)' });
    fake.server.script({ status: 400, json: { Count: 0, Message: 'Your request was not successful.' } });
    expect(await ask(provider, HONDA)).toMatchObject({ status: 'unavailable' });
    fake.server.script({ status: 403, json: { message: 'Forbidden' } });
    expect(await ask(provider, HONDA)).toMatchObject({ status: 'unavailable' });
    fake.server.script({ status: 200, text: '<html>maintenance</html>' });
    expect(await ask(provider, HONDA)).toMatchObject({ status: 'unavailable' });
  });

  it('opens the breaker after repeated failures and stops asking', async () => {
    const provider = recallsProvider({ NHTSA_RECALLS_BREAKER_FAILURES: '2', NHTSA_RECALLS_BREAKER_OPEN_S: '600' });
    fake.failWith = 500;
    await ask(provider, HONDA);
    await ask(provider, HONDA);
    const calls = fake.calls;
    fake.failWith = undefined;
    expect(await ask(provider, HONDA)).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/circuit open/) as unknown });
    expect(fake.calls).toBe(calls);
  });
});

describe('the fake NHTSA Recalls API', () => {
  it('answers 403 to a path in another case, 400 with an empty results to a vehicle not on file, 400 without make', async () => {
    const get = async (path: string): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${fake.baseUrl}${path}`);
      return { status: res.status, body: await res.json() };
    };
    expect((await get('/Recalls/recallsByVehicle?make=Honda&model=Accord&modelYear=2003')).status).toBe(403);
    expect(await get('/recalls/recallsByVehicle?make=Lada&model=Niva&modelYear=1990')).toMatchObject({ status: 400, body: { results: [] } });
    expect(await get('/recalls/recallsByVehicle?model=Accord')).toMatchObject({ status: 400 });
    expect(await get('/recalls/recallsByVehicle?make=honda&model=accord&modelYear=2003')).toMatchObject({ status: 200, body: { Count: 3 } });
  });
});

describe('configuration', () => {
  it('is off unless NHTSA_RECALLS_ENABLED is true, and says so', () => {
    const off = loadProviderConfig({});
    expect(off.nhtsaRecalls).toBeUndefined();
    expect(off.disabled).toContainEqual({ provider: 'nhtsa-recalls', reason: 'NHTSA_RECALLS_ENABLED is not true' });
    expect(loadProviderConfig({ NHTSA_RECALLS_ENABLED: 'yes' }).nhtsaRecalls?.settings).toMatchObject({ name: 'nhtsa-recalls', baseUrl: 'https://api.nhtsa.gov' });
  });
});
