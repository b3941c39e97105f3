import { describe, expect, it } from 'vitest';
import { classifyCarsxe } from '../../src/providers/carsxe/carsxe.client.js';
import { CARSXE_PLATE_OPERATIONS } from '../../src/providers/carsxe/carsxe-countries.js';
import { enginesToTest } from '../helpers/engines.js';
import { CARSXE_PLATES as PL, CARSXE_TRIGGERS as T, CARSXE_VINS as V, FakeCarsxe } from '../fakes/fake-carsxe.js';
import { declared } from './harness.js';
import { CLOSE, eachBinding, fiveBindings, lastFailureKind, queryOf, vehicleJsonOf, paidSuite } from './paid-harness.js';

/**
 * CarsXE (issue 32) against its fake: every outcome of commercial-upstreams.md §1.6 and §5
 * classified, the v2 plate decoder mapped into CheckUSA, CheckAustralia, CheckCanada (with their
 * state or province) and the other countries it lists, `/specs` into VinCheck, on the five
 * bindings; the key CarsXE echoes never kept; the caller charged once for an answer.
 */

const KEY = 'carsxe-key-9b8a7c6d5e4f3a2b';
const suite = paidSuite({
  start: () => FakeCarsxe.start({ apiKey: KEY }),
  env: (fake) => ({ CARSXE_API_KEY: KEY, CARSXE_BASE_URL: fake.baseUrl, CARSXE_BREAKER_FAILURES: '100' }),
});

const usa = (plate: string, state = 'CA') => queryOf('CheckUSA', { RegistrationNumber: plate, State: state });

const KIA = {
  Description: '2017 Kia Forte',
  RegistrationYear: '2017',
  CarMake: { CurrentTextValue: 'Kia' },
  CarModel: { CurrentTextValue: 'Forte' },
  MakeDescription: { CurrentTextValue: 'Kia' },
  ModelDescription: { CurrentTextValue: 'Forte LX' },
  BodyStyle: { CurrentTextValue: 'Sedan' },
  EngineSize: { CurrentTextValue: '2.0L I4 MPI' },
  FuelType: { CurrentTextValue: 'Gasoline' },
  Transmission: { CurrentTextValue: 'Automatic' },
  DriveType: { CurrentTextValue: 'FWD' },
  Colour: 'White',
  VechileIdentificationNumber: '3KPFK4A78HE103497',
  AssemblyPlant: 'Mexico',
};

const BMW = {
  Description: '2012 BMW 5-Series',
  RegistrationYear: '2012',
  CarMake: { CurrentTextValue: 'BMW' },
  CarModel: { CurrentTextValue: '5-Series' },
  MakeDescription: { CurrentTextValue: 'BMW' },
  ModelDescription: { CurrentTextValue: '5-Series 535i' },
  BodyStyle: { CurrentTextValue: 'Sedan/Saloon' },
  EngineSize: { CurrentTextValue: '3.0L L6 DOHC 24V' },
  FuelType: { CurrentTextValue: 'Gasoline' },
  Transmission: { CurrentTextValue: '6-Speed Manual | 8-Speed Automatic' },
  NumberOfDoors: { CurrentTextValue: '4' },
  DriveType: { CurrentTextValue: 'RWD' },
  VechileIdentificationNumber: V.bmw,
  PlantCountry: 'GERMANY',
};

describe('CarsXE mapping', () => {
  it('maps a US plate (CheckUSA) from the v2 plate decoder, sending plate, country and state', async () => {
    const p = await suite.providers();
    expect(await p.provider('CheckUSA', 'carsxe').find(usa(PL.us.plate, 'ca'))).toEqual({ status: 'found', record: KIA, source: 'carsxe', via: 'upstream' });
    const sent = Object.fromEntries(new URLSearchParams(suite.fake.server.requests[0]?.url.split('?')[1] ?? ''));
    expect(sent).toEqual({ key: KEY, plate: '7XER187', country: 'US', state: 'CA' });
    expect(suite.fake.server.requests[0]?.path).toBe('/v2/platedecoder');
  });

  it('maps Australia (state), Canada (province), the UK and the UAE in their own shapes', async () => {
    const p = await suite.providers();
    expect(await p.provider('CheckAustralia', 'carsxe').find(queryOf('CheckAustralia', { RegistrationNumber: PL.au.plate, State: 'NSW' }))).toMatchObject({
      status: 'found',
      record: { Description: 'TOYOTA COROLLA', RegistrationYear: '2019', CarMake: { CurrentTextValue: 'TOYOTA' }, BodyStyle: { CurrentTextValue: 'HATCHBACK' }, Transmission: { CurrentTextValue: 'CVT' }, FuelType: { CurrentTextValue: 'PETROL' }, Colour: 'WHITE', VechileIdentificationNumber: 'JTNKB3BE403048217' },
    });
    expect(await p.provider('CheckCanada', 'carsxe').find(queryOf('CheckCanada', { RegistrationNumber: PL.ca.plate, Province: 'ON' }))).toMatchObject({
      status: 'found',
      record: { Description: '2018 Honda Civic', ModelDescription: { CurrentTextValue: 'Civic LX' }, BodyStyle: { CurrentTextValue: 'Sedan 4D' }, AssemblyPlant: 'Alliston, Ontario' },
    });
    expect(Object.fromEntries(new URLSearchParams(suite.fake.server.requests[1]?.url.split('?')[1] ?? ''))).toMatchObject({ country: 'CA', state: 'ON' });
    expect(await p.provider('Check', 'carsxe').find(queryOf('Check', { RegistrationNumber: PL.gb.plate }))).toEqual({
      status: 'found',
      source: 'carsxe', via: 'upstream',
      record: {
        Description: '2019 Ford Fiesta Zetec, 998CC Petrol',
        RegistrationYear: '2019',
        CarMake: { CurrentTextValue: 'FORD' },
        CarModel: { CurrentTextValue: 'FIESTA ZETEC' },
        MakeDescription: 'FORD',
        ModelDescription: 'FIESTA ZETEC',
        BodyStyle: { CurrentTextValue: 'Hatchback' },
        EngineSize: { CurrentTextValue: '998' },
        FuelType: { CurrentTextValue: 'Petrol' },
        Transmission: { CurrentTextValue: 'Manual' },
        Colour: 'BLUE',
        VehicleIdentificationNumber: 'WF0JXXGAHJKE41827',
      },
    });
    expect(await p.provider('CheckUAE', 'carsxe').find(queryOf('CheckUAE', { RegistrationNumber: PL.ae.plate }))).toEqual({
      status: 'found',
      source: 'carsxe', via: 'upstream',
      record: { Description: 'NISSAN PATROL', CarMake: { CurrentTextValue: 'NISSAN' }, CarModel: { CurrentTextValue: 'PATROL' }, MakeDescription: { CurrentTextValue: 'Nissan' }, ModelDescription: { CurrentTextValue: 'Patrol LE Platinum' } },
    });
  });

  it('maps a sparse answer ("" for what CarsXE does not know) into only what it has', async () => {
    const p = await suite.providers();
    expect(await p.provider('CheckUSA', 'carsxe').find(usa(PL.partial.plate, 'TX'))).toEqual({
      status: 'found',
      source: 'carsxe', via: 'upstream',
      record: { Description: 'Ford F-150', CarMake: { CurrentTextValue: 'Ford' }, CarModel: { CurrentTextValue: 'F-150' }, MakeDescription: { CurrentTextValue: 'Ford' }, ModelDescription: { CurrentTextValue: 'F-150' } },
    });
  });

  it('maps /specs into the VinCheck vehicleJson, and keeps nothing of the request echo (it repeats the key)', async () => {
    const p = await suite.providers();
    expect(await p.provider('VinCheck', 'carsxe').find(queryOf('VinCheck', { Vin: V.bmw }))).toEqual({ status: 'found', record: BMW, source: 'carsxe', via: 'upstream' });
    expect(suite.fake.server.requests[0]?.path).toBe('/specs');
    const rows = await p.storage.db.selectFrom('upstream_cache').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(KEY);
  });

  it('serves only operations of the catalogue, each a plate lookup of a country CarsXE lists', () => {
    for (const [name, shape] of Object.entries(CARSXE_PLATE_OPERATIONS)) {
      const op = declared(name);
      expect(op.resultType, name).toBe('Vehicle');
      expect(op.parameters.filter((x) => x.role === 'key').length, name).toBe(shape.region === 'state' ? 2 : shape.region === 'district' ? 3 : 1);
    }
  });
});

describe('CarsXE outcomes (commercial-upstreams.md §1.6, §5)', () => {
  it('classifies every scripted answer', async () => {
    const p = await suite.providers();
    const cases: Array<[string, 'not-found' | 'unavailable', string | undefined]> = [
      [T.notFound, 'not-found', undefined],
      [T.quota, 'unavailable', 'quota'],
      [T.noCredit, 'unavailable', 'out-of-funds'],
      [T.blocked, 'unavailable', 'auth'],
      [T.down, 'unavailable', 'server-error'],
      [T.error, 'unavailable', 'server-error'],
      [T.html, 'unavailable', 'server-error'],
      [T.htmlOk, 'unavailable', 'bad-response'],
    ];
    for (const [plate, status, kind] of cases) {
      expect((await p.provider('CheckUSA', 'carsxe').find(usa(plate))).status, plate).toBe(status);
      if (kind !== undefined) expect(lastFailureKind(p.monitor, 'carsxe'), plate).toBe(kind);
      expect(suite.fake.calls('/v2/platedecoder', ['plate', plate]), plate).toBe(1);
    }
    // Bad input (400) is not found, not cached; a VIN /specs does not know is not found, cached.
    expect(await p.provider('VinCheck', 'carsxe').find(queryOf('VinCheck', { Vin: V.unknown }))).toEqual({ status: 'not-found' });
    await p.provider('VinCheck', 'carsxe').find(queryOf('VinCheck', { Vin: V.unknown }));
    expect(suite.fake.calls('/specs', ['vin', V.unknown])).toBe(1);
    expect(classifyCarsxe(400, JSON.stringify({ success: false, message: 'Wrong VIN length, must be 17 characters' }), 'specs')).toEqual({ status: 'not-found', cache: false });
  });

  it('reports a refused key (401) as bad credentials', async () => {
    const p = await suite.providers({ CARSXE_API_KEY: 'carsxe-not-our-key' });
    expect(await p.provider('CheckUSA', 'carsxe').find(usa(PL.us.plate))).toMatchObject({ status: 'unavailable', reason: 'carsxe: CarsXE refused the API key (HTTP 401)' });
    expect(lastFailureKind(p.monitor, 'carsxe')).toBe('auth');
  });

  it('reads a quota 429 at once instead of waiting or retrying', async () => {
    const p = await suite.providers();
    expect(await p.provider('CheckUSA', 'carsxe').find(usa(T.quota))).toMatchObject({ status: 'unavailable', reason: 'carsxe: CarsXE usage limit for the period reached (HTTP 429)' });
    expect(suite.fake.calls('/v2/platedecoder')).toBe(1);
  });

  it('waits for a slow answer within the timeout, and times out a hanging one after one attempt', async () => {
    const p = await suite.providers();
    expect(await p.provider('CheckUSA', 'carsxe').find(usa(T.slow, 'TX'))).toMatchObject({ status: 'found' });
    // Providers of their own with a short timeout, for the answer that never comes.
    const impatient = await suite.providers({ CARSXE_TIMEOUT_MS: '200', CARSXE_BUDGET_MS: '200' });
    suite.fake.server.script({ hang: true });
    expect(await impatient.provider('VinCheck', 'carsxe').find(queryOf('VinCheck', { Vin: V.bmw }))).toMatchObject({ status: 'unavailable', reason: 'carsxe: no answer within 200 ms (attempt 1)' });
    expect(lastFailureKind(impatient.monitor, 'carsxe')).toBe('timeout');
  });

  it('sends no price or balance signal: CarsXE has none in its bodies', async () => {
    const res = await fetch(`${suite.fake.baseUrl}/v2/platedecoder?${new URLSearchParams({ key: KEY, plate: PL.us.plate, state: 'CA' }).toString()}`, CLOSE);
    const outcome = classifyCarsxe(res.status, await res.text(), 'plate');
    expect(outcome.status).toBe('found');
    expect(outcome).not.toHaveProperty('cost');
    expect(outcome).not.toHaveProperty('balance');
    expect(JSON.stringify(outcome)).not.toContain(KEY);
  });
});

describe('CarsXE on the five bindings', () => {
  it('answers CheckUSA, CheckCanada, CheckAustralia and VinCheck on every binding, from one upstream call each', async () => {
    const t = await suite.app({ VIN_DECODER: 'off' });
    const key = await t.account('alice', 100);
    const auth = t.basic('alice', key);
    for (const [operation, params, expected, path, param] of [
      ['CheckUSA', [['RegistrationNumber', PL.us.plate], ['State', 'CA']], KIA, '/v2/platedecoder', ['plate', PL.us.plate]],
      ['CheckCanada', [['RegistrationNumber', PL.ca.plate], ['Province', 'ON']], { Description: '2018 Honda Civic' }, '/v2/platedecoder', ['plate', PL.ca.plate]],
      ['CheckAustralia', [['RegistrationNumber', PL.au.plate], ['State', 'NSW']], { Description: 'TOYOTA COROLLA' }, '/v2/platedecoder', ['plate', PL.au.plate]],
      ['VinCheck', [['Vin', V.bmw]], BMW, '/specs', ['vin', V.bmw]],
    ] as const) {
      const b = await fiveBindings(t, operation, params, 'alice', auth);
      for (const [name, res] of eachBinding(b)) expect(res.statusCode, `${operation} ${name}: ${res.body}`).toBe(200);
      const json = JSON.parse(b.json.body) as Record<string, unknown>;
      expect(json, operation).toMatchObject(expected);
      for (const res of [b.get, b.post, b.soap11, b.soap12]) expect(vehicleJsonOf(res.body), operation).toEqual(json);
      expect(suite.fake.calls(path, param), operation).toBe(1);
    }
    expect((await t.services.accounts.show('alice')).credits).toBe(80);
  });
});

describe.each(await enginesToTest())('CarsXE and the caller’s credits (%s)', (engine) => {
  it('charges each answer once and every failure nothing', async () => {
    const t = await suite.app({}, engine);
    const key = await t.account('alice', 10);
    const auth = t.basic('alice', key);
    const found = await t.app.inject({ url: `/api/json.aspx/CheckUSA/${PL.us.plate}/CA`, headers: { authorization: auth } });
    expect([found.statusCode, found.headers['x-credits-charged']]).toEqual([200, '1']);
    for (const plate of [T.notFound, T.quota, T.noCredit, T.blocked, T.down, T.html]) {
      const res = await t.app.inject({ url: `/api/json.aspx/CheckUSA/${plate}/CA`, headers: { authorization: auth } });
      expect(res.statusCode, plate).toBe(500);
    }
    expect((await t.services.accounts.show('alice')).credits).toBe(9);
    expect((await t.services.accounts.usage('alice')).filter((r) => r.kind === 'debit').map((r) => r.delta)).toEqual([-1]);
  });
});
