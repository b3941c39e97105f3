/**
 * The original's Vehicle lookups we lacked (issue 15 section 2, compat-notes "The original's whole
 * contract"): each reachable through JSON on its path shape, charged exactly once, at the price
 * the operator set (OPERATION_COSTS) where one is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { enginesToTest } from '../helpers/engines.js';
import { jsonPathFor, sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { fakeEnv, startDvla } from '../upstream/harness.js';

const NEW_REG = [
  'CheckUAE', 'CheckRussia', 'CheckCyprus', 'CheckUkraine', 'CheckIceland', 'CheckLatvia', 'CheckSwitzerland', 'CheckChina',
  'CheckGreece', 'CheckKazakhstan', 'CheckMalta', 'CheckOman', 'CheckPoland', 'CheckRomania', 'CheckSlovenia', 'CheckTaiwan',
];
const NEW_BESPOKE = ['CheckFrance', 'CheckArgentinaExtensive', 'CheckUSADynamic', 'CheckUSAEdBolian', 'CheckUKMinimal', 'CheckIOM'];

/** Not 1, so a lookup charged the catalogue's cost instead would show. */
const UK_MINIMAL_COST = 3;

describe.each(await enginesToTest())('the whole contract\'s Vehicle lookups on %s', (engine) => {
  let t: TestApp;
  let base: string;
  let auth: string;

  const get = (path: string): Promise<Response> => fetch(`${base}${path}`, { headers: { authorization: auth } });
  const balance = async (): Promise<number> => (await t.services.accounts.show('buyer')).credits;
  const debits = async (): Promise<number> => (await t.services.accounts.usage('buyer')).filter((e) => e.kind === 'debit').length;

  beforeAll(async () => {
    t = await createTestApp({ OPERATION_COSTS: `CheckUKMinimal:${UK_MINIMAL_COST}` }, undefined, engine);
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    expect(summary.committed).toBe(true);
    auth = t.basic('buyer', await t.account('buyer', 1000));
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => t.close());

  it('answers every sample record of every new operation through JSON, debiting its cost exactly once', async () => {
    const seen = new Set<string>();
    for (const line of sampleLines().filter((l) => [...NEW_REG, ...NEW_BESPOKE].includes(l.operation))) {
      const op = t.services.catalogue.find(line.operation);
      if (!op) throw new Error(`${line.operation} is not in the catalogue`);
      const path = jsonPathFor(op, line.key ?? {});
      const [before, rowsBefore] = [await balance(), await debits()];
      const res = await get(path);
      expect(res.status, `${path}: ${res.status === 200 ? '' : await res.clone().text()}`).toBe(200);
      const cost = op.name === 'CheckUKMinimal' ? UK_MINIMAL_COST : 1;
      expect(res.headers.get('x-credits-charged'), path).toBe(String(cost));
      expect(await balance(), path).toBe(before - cost);
      const rows = (await t.services.accounts.usage('buyer')).filter((e) => e.kind === 'debit').slice(rowsBefore);
      expect(rows.map((r) => [r.operation, r.interface, r.delta]), path).toEqual([[op.name, 'json', -cost]]);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body.Description, path).toBe(line.vehicle?.Description);
      seen.add(op.name);
    }
    expect([...seen].sort()).toEqual([...NEW_REG, ...NEW_BESPOKE].sort());
    expect(await debits()).toBeGreaterThanOrEqual(2 * seen.size);
  });

  it('serves CheckUKMinimal the UK records with the minimal field set only', async () => {
    const line = sampleLines().find((l) => l.operation === 'CheckUKMinimal');
    const res = await get(`/api/json.aspx/CheckUKMinimal/${line?.key?.regNumber ?? ''}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['CarMake', 'CarModel', 'Description', 'ImageUrl', 'MakeDescription', 'ModelDescription', 'RegistrationYear']);
    // The same record, whole, through Check: one dataset.
    const whole = (await (await get(`/api/json.aspx/Check/${line?.key?.regNumber ?? ''}`)).json()) as Record<string, unknown>;
    expect(whole.VehicleIdentificationNumber).toBe(line?.vehicle?.VehicleIdentificationNumber);
    expect(whole.Description).toBe(body.Description);
  });

  it('reads the variants from their base datasets', async () => {
    const usa = sampleLines().find((l) => l.operation === 'CheckUSA');
    const plate = usa?.key?.RegistrationNumber ?? '';
    const state = usa?.key?.State ?? '';
    for (const path of [`/api/json.aspx/CheckUSADynamic/${plate}/${state.toLowerCase()}`, `/api/json.aspx/CheckUSAEdBolian/${plate}/${state}`]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(((await res.json()) as Record<string, unknown>).Description).toBe(usa?.vehicle?.Description);
    }
    const argentina = sampleLines().find((l) => l.operation === 'CheckArgentina');
    const res = await get(`/api/json.aspx/CheckArgentinaExtensive/${argentina?.key?.RegistrationNumber ?? ''}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Record<string, unknown>).Description).toBe(argentina?.vehicle?.Description);
  });

  it('finds a Russian, Ukrainian or Greek plate typed in either script', async () => {
    // Imported as Cyrillic Е317ВМ199, Latin A482KX77 and Cyrillic ВС3172ЕІ, Greek ΥΗΜ3179.
    for (const path of ['CheckRussia/E317BM199', 'CheckRussia/%D0%90482%D0%9A%D0%A577', 'CheckUkraine/BC3172EI', 'CheckGreece/YHM3179']) {
      const res = await get(`/api/json.aspx/${path}`);
      expect(res.status, path).toBe(200);
    }
  });

  it('charges nothing for a plate that is not found or that its country\'s rule refuses, and says why', async () => {
    const before = await balance();
    const notFound = await get('/api/json.aspx/CheckUAE/ZZ99999');
    expect(notFound.status).toBe(500);
    expect(await notFound.text()).toMatch(/^UAE Lookup failed/);
    const iom = await get('/api/json.aspx/CheckIOM/ZZ99999');
    expect(await iom.text()).toMatch(/^Isle of Man Lookup failed/);
    const refused = await get('/api/json.aspx/CheckSwitzerland/XX123');
    expect(refused.status).toBe(500);
    expect(await refused.text()).toMatch(/RegistrationNumber must be a canton code and 1 to 6 digits/);
    const badState = await get('/api/json.aspx/CheckUSADynamic/7KDJ294/QQ');
    expect(badState.status).toBe(500);
    expect(await badState.text()).toMatch(/state must be one of/);
    expect(await balance()).toBe(before);
  });

  it('shows the configured price on CheckUKMinimal\'s help page', async () => {
    const res = await t.app.inject({ url: '/api/bespokeapi.asmx?op=CheckUKMinimal' });
    expect(res.body).toContain(`Costs ${UK_MINIMAL_COST} credits when it succeeds`);
  });
});

describe('CheckUKMinimal without OPERATION_COSTS', () => {
  it('costs 1 credit, like every other lookup (credits are whole: half of 1 would be free)', async () => {
    const t = await createTestApp();
    try {
      const line = sampleLines().find((l) => l.operation === 'CheckUKMinimal');
      await t.importRecords([line]);
      const auth = t.basic('plain', await t.account('plain', 10));
      const res = await t.app.inject({ url: `/api/json.aspx/CheckUKMinimal/${line?.key?.regNumber ?? ''}`, headers: { authorization: auth } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-credits-charged']).toBe('1');
      expect((await t.services.accounts.show('plain')).credits).toBe(9);
    } finally {
      await t.close();
    }
  });
});

describe('CheckUKMinimal with the DVLA source on', () => {
  it('answers a plate the store lacks from DVLA, as Check does, with the minimal field set and one credit', async () => {
    const dvla = await startDvla();
    const t = await createTestApp(fakeEnv({ dvla }));
    try {
      const auth = t.basic('uk', await t.account('uk', 10));
      const res = await t.app.inject({ url: '/api/json.aspx/CheckUKMinimal/AA19AAA', headers: { authorization: auth } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['x-credits-charged']).toBe('1');
      const body = res.json<Record<string, unknown>>();
      expect(body).toMatchObject({ Description: '2019 Ford, 1596CC Petrol', CarMake: { CurrentTextValue: 'FORD' } });
      expect(Object.keys(body).every((k) => ['Description', 'RegistrationYear', 'CarMake', 'CarModel', 'MakeDescription', 'ModelDescription', 'ImageUrl'].includes(k))).toBe(true);
      expect(body).not.toHaveProperty('TaxStatus');
      expect((await t.services.accounts.show('uk')).credits).toBe(9);
    } finally {
      await t.close();
      await dvla.close();
    }
  });
});
