import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { RdwVehicleMapper } from '../../src/datasets/import/rdw-vehicle-mapper.js';
import { FakeRdw, rdwFuels, rdwVehicles } from '../fakes/fake-rdw.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { closedPortUrl } from './harness.js';

/**
 * RDW Open Data (upstream-sources.md §3) behind CheckNetherlands, through the JSON interface: the
 * app reads RDW_* from the env given to createTestApp, and only found answers cost a credit.
 */

let rdw: FakeRdw;
const apps: TestApp[] = [];

/** Timeouts far above any answer of the local fake however busy the machine; the hanging plate's app sets its own. */
const rdwEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
  RDW_ENABLED: 'true', RDW_BASE_URL: rdw.baseUrl, RDW_TIMEOUT_MS: '10000', RDW_BUDGET_MS: '20000', RDW_BREAKER_FAILURES: '100', ...overrides,
});

async function appWith(env: Record<string, string>): Promise<{ t: TestApp; get: (path: string) => Promise<{ status: number; body: string; charged: string | undefined }>; credits: () => Promise<number> }> {
  const t = await createTestApp(env);
  apps.push(t);
  const auth = t.basic('alice', await t.account('alice', 10));
  return {
    t,
    async get(path) {
      const res = await t.app.inject({ url: path, headers: { authorization: auth } });
      const charged = res.headers['x-credits-charged'];
      return { status: res.statusCode, body: res.body, charged: typeof charged === 'string' ? charged : undefined };
    },
    credits: async () => (await t.services.accounts.show('alice')).credits,
  };
}

beforeAll(async () => {
  rdw = await FakeRdw.start({ appToken: 'rdw-app-token-5c1e9a7b3d' });
});
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
});
afterAll(async () => {
  await rdw.close();
});

describe('CheckNetherlands from RDW Open Data', () => {
  it('maps the register row and the primary fuel into the sample dataset shape, for one credit', async () => {
    const { get, credits } = await appWith(rdwEnv());
    const res = await get('/api/json.aspx/CheckNetherlands/AB-123-C');
    expect(res.status).toBe(200);
    expect(res.charged).toBe('1');
    // The pipeline adds ImageUrl to every vehicle answer; the rest is the mapped RDW data.
    expect(JSON.parse(res.body)).toEqual({
      ImageUrl: expect.any(String) as unknown,
      Description: 'VOLKSWAGEN GOLF', RegistrationYear: '2018', CarMake: { CurrentTextValue: 'VOLKSWAGEN' }, CarModel: { CurrentTextValue: 'GOLF' },
      MakeDescription: 'VOLKSWAGEN', ModelDescription: 'GOLF', EngineSize: { CurrentTextValue: '1395' }, FuelType: { CurrentTextValue: 'Benzine' },
      BodyStyle: { CurrentTextValue: 'hatchback' }, NumberOfDoors: { CurrentTextValue: '5' }, NumberOfSeats: { CurrentTextValue: 5 }, Colour: 'GRIJS',
      RegistrationDate: '20180315', APKExpiryDate: '20260930', CataloguePrice: '28450', EuropeanVehicleCategory: 'M1', VehicleType: 'Personenauto',
    });
    expect(await credits()).toBe(9);
  });

  it('gives the same document as the bulk importer for the same RDW data', async () => {
    const { get } = await appWith(rdwEnv());
    const op = new Catalogue().find('CheckNetherlands');
    const rule = op?.parameters.find((p) => p.role === 'key')?.rule;
    if (!rule) throw new Error('no key rule');
    for (const plate of ['AB123C', 'NN001X', 'EV777Z']) {
      const row = rdwVehicles()[plate] ?? {};
      const header = Object.keys(row);
      const mapper = new RdwVehicleMapper(header, rule);
      const fields = mapper.columns.map((at) => (at < 0 ? '' : (row[header[at] ?? ''] ?? '')));
      const primary = (rdwFuels()[plate] ?? []).find((f) => f.brandstof_volgnummer === '1')?.brandstof_omschrijving;
      const imported = mapper.map({ line: 2, fields, width: header.length }, () => primary);
      if (!imported.ok) throw new Error(imported.reason);
      const { ImageUrl: _image, ...online } = JSON.parse((await get(`/api/json.aspx/CheckNetherlands/${plate}`)).body) as Record<string, unknown>;
      expect(online).toEqual(JSON.parse(imported.document));
    }
  });

  it('drops a make repeated in the trade name, takes fuel number 1 of several, and leaves out absent values', async () => {
    const { get } = await appWith(rdwEnv());
    const note = JSON.parse((await get('/api/json.aspx/CheckNetherlands/NN001X')).body) as Record<string, unknown>;
    expect(note).toMatchObject({ Description: 'NISSAN NOTE', ModelDescription: 'NOTE', FuelType: { CurrentTextValue: 'Benzine' } });
    const ev = JSON.parse((await get('/api/json.aspx/CheckNetherlands/EV777Z')).body) as Record<string, unknown>;
    expect(ev).toMatchObject({ FuelType: { CurrentTextValue: 'Elektriciteit' }, NumberOfDoors: { CurrentTextValue: '4' } });
    expect(ev).not.toHaveProperty('EngineSize');
    expect(ev).not.toHaveProperty('APKExpiryDate');
  });

  it('treats an empty list as not found, charges nothing, does not ask for fuel, and caches the not-found', async () => {
    const { get, credits } = await appWith(rdwEnv());
    const fuelBefore = rdw.fuelCalls;
    const before = rdw.vehicleCalls;
    const res = await get('/api/json.aspx/CheckNetherlands/XX999X');
    expect(res.status).toBe(500);
    expect(res.body).toMatch(/Lookup failed/);
    expect(res.charged).not.toBe('1');
    await get('/api/json.aspx/CheckNetherlands/XX999X');
    expect(rdw.vehicleCalls - before).toBe(1);
    expect(rdw.fuelCalls).toBe(fuelBefore);
    expect(await credits()).toBe(10);
  });

  it('charges nothing for any RDW failure: 500, 503, 429, 400, a non-JSON 200, a hang, a refused token, no server', async () => {
    const { get, credits } = await appWith(rdwEnv());
    for (const plate of ['ER19ERR', 'ER19MNT', 'ER19THR', 'ER19BAD', 'ER19JNK']) {
      const res = await get(`/api/json.aspx/CheckNetherlands/${plate}`);
      expect(res.status, plate).toBe(500);
      expect(res.body, plate).toMatch(/temporarily unavailable/);
    }
    expect(await credits()).toBe(10);
    // An app of its own whose source gives up well before the fake's answer that never comes.
    const impatient = await appWith(rdwEnv({ RDW_TIMEOUT_MS: '300', RDW_BUDGET_MS: '2000' }));
    const hang = await impatient.get('/api/json.aspx/CheckNetherlands/ER19HNG');
    expect(hang.status).toBe(500);
    expect(hang.body).toMatch(/temporarily unavailable/);
    expect(await impatient.credits()).toBe(10);
    const refused = await appWith(rdwEnv({ RDW_APP_TOKEN: 'wrong-token' }));
    expect((await refused.get('/api/json.aspx/CheckNetherlands/AB123C')).body).toMatch(/temporarily unavailable/);
    const down = await appWith(rdwEnv({ RDW_BASE_URL: await closedPortUrl() }));
    expect((await down.get('/api/json.aspx/CheckNetherlands/AB123C')).body).toMatch(/temporarily unavailable/);
    expect(await refused.credits()).toBe(10);
    expect(await down.credits()).toBe(10);
  });

  it('sends the app token as X-App-Token, and is throttled (unavailable) without one when Socrata throttles', async () => {
    const throttling = await FakeRdw.start({ appToken: 'rdw-app-token-5c1e9a7b3d', throttleWithoutToken: true });
    try {
      const without = await appWith(rdwEnv({ RDW_BASE_URL: throttling.baseUrl }));
      expect((await without.get('/api/json.aspx/CheckNetherlands/AB123C')).body).toMatch(/temporarily unavailable/);
      const withToken = await appWith(rdwEnv({ RDW_BASE_URL: throttling.baseUrl, RDW_APP_TOKEN: 'rdw-app-token-5c1e9a7b3d' }));
      expect((await withToken.get('/api/json.aspx/CheckNetherlands/AB123C')).status).toBe(200);
      expect(throttling.server.requests.at(-1)?.headers['x-app-token']).toBe('rdw-app-token-5c1e9a7b3d');
    } finally {
      await throttling.close();
    }
  });

  it('answers a repeated lookup from the cache, still for one credit each', async () => {
    const { get, credits } = await appWith(rdwEnv());
    await get('/api/json.aspx/CheckNetherlands/EV777Z');
    const before = rdw.vehicleCalls + rdw.fuelCalls;
    const again = await get('/api/json.aspx/CheckNetherlands/EV777Z');
    expect(again.status).toBe(200);
    expect(rdw.vehicleCalls + rdw.fuelCalls).toBe(before);
    expect(await credits()).toBe(8);
  });

  it('answers from the local store first: an imported plate never reaches RDW', async () => {
    const sample = readFileSync(new URL('../../samples/sample-dataset.jsonl', import.meta.url), 'utf8');
    const line = sample.split('\n').find((l) => l.includes('"ZT482K"'));
    if (line === undefined) throw new Error('ZT482K is not in the sample dataset');
    const { t, get } = await appWith(rdwEnv());
    await t.importRecords([JSON.parse(line)]);
    const before = rdw.vehicleCalls;
    const res = await get('/api/json.aspx/CheckNetherlands/ZT482K');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ Description: 'VOLKSWAGEN POLO' });
    expect(rdw.vehicleCalls).toBe(before);
  });

  it('shows in /readyz as enabled, and as disabled (with the reason) when RDW_ENABLED is not true', async () => {
    const on = await createTestApp(rdwEnv());
    apps.push(on);
    expect((await on.app.inject({ url: '/readyz' })).json()).toMatchObject({ providers: { rdw: { enabled: true } } });
    const off = await createTestApp({});
    apps.push(off);
    expect((await off.app.inject({ url: '/readyz' })).json()).toMatchObject({ providers: { rdw: { enabled: false, status: 'disabled', reason: 'RDW_ENABLED is not true' } } });
  });

  it('is off unless RDW_ENABLED=true', async () => {
    const { get } = await appWith({ RDW_BASE_URL: rdw.baseUrl });
    const before = rdw.vehicleCalls;
    expect((await get('/api/json.aspx/CheckNetherlands/AB123C')).status).toBe(500);
    expect(rdw.vehicleCalls).toBe(before);
  });
});
