import { describe, expect, it } from 'vitest';
import { classifyUkvd } from '../../src/providers/ukvd/ukvd.client.js';
import { UpstreamError } from '../../src/providers/upstream/upstream-error.js';
import { enginesToTest } from '../helpers/engines.js';
import { FakeUkvd, UKVD_PLATES as P } from '../fakes/fake-ukvd.js';
import { CLOSE, eachBinding, fiveBindings, lastFailureKind, queryOf, vehicleJsonOf, elementOf, paidSuite } from './paid-harness.js';

/**
 * UK Vehicle Data r2 (issue 32) against its fake: every outcome of commercial-upstreams.md §5
 * classified, the vehicle and MOT packages mapped into Check, CheckMotorBikeUK, CheckUKMinimal
 * and UKMOT on the five bindings, r2's own cost and balance reported, and the caller charged once
 * for an answer and nothing otherwise.
 */

const KEY = 'ukvd-3f9a1c7e-5b2d-4f6a-8c0e-000000000001';
const suite = paidSuite({
  start: () => FakeUkvd.start({ apiKey: KEY }),
  env: (fake) => ({ UKVD_API_KEY: KEY, UKVD_BASE_URL: fake.baseUrl, UKVD_TIMEOUT_MS: '10000', UKVD_BUDGET_MS: '10000', UKVD_BREAKER_FAILURES: '100' }),
  reset: (fake) => {
    fake.balance = 10;
  },
});

const check = (plate: string) => queryOf('Check', { RegistrationNumber: plate });

const AUDI = {
  Description: '2015 Audi A7 S Line Black Ed Tdi Quat Sa, 2967CC Heavy Oil, 5DR, Automatic',
  RegistrationYear: '2015',
  CarMake: { CurrentTextValue: 'AUDI' },
  CarModel: { CurrentTextValue: 'A7 S LINE BLACK ED TDI QUAT SA' },
  EngineSize: { CurrentTextValue: '2967' },
  FuelType: { CurrentTextValue: 'Heavy Oil' },
  MakeDescription: 'AUDI',
  ModelDescription: 'A7 S LINE BLACK ED TDI QUAT SA',
  NumberOfSeats: { CurrentTextValue: 5 },
  Transmission: { CurrentTextValue: 'Automatic' },
  NumberOfDoors: { CurrentTextValue: '5' },
  BodyStyle: { CurrentTextValue: 'Coupe' },
  Colour: 'Black',
  VehicleIdentificationNumber: 'WAUZZZ4G6FN012345',
  YearOfManufacture: 2015,
  MonthOfFirstRegistration: '2015-10',
  Co2Emissions: 142,
  EuroStatus: '6b',
  TypeApproval: 'M1',
  Wheelplan: '2 AXLE RIGID BODY',
  MarkedForExport: false,
};

describe('UK Vehicle Data mapping', () => {
  it('maps VehicleDetails with ModelDetails into the UK Check vehicleJson, asking r2 with the key, package and plate', async () => {
    const p = await suite.providers();
    const answer = await p.provider('Check', 'ukvd').find(check('ab15 aud'));
    expect(answer).toEqual({ status: 'found', record: AUDI, source: 'ukvd', via: 'upstream' });
    const query = new URLSearchParams(suite.fake.server.requests[0]?.url.split('?')[1] ?? '');
    expect(Object.fromEntries(query)).toEqual({ ApiKey: KEY, PackageName: 'VehicleDetails', Vrm: 'AB15AUD' });
    // Never on a pooled connection: a billed call is not retried (paid-request.ts).
    expect(suite.fake.server.requests[0]?.headers.connection).toBe('close');
  });

  it('maps a motorbike without ModelDetails from VehicleDetails alone, and answers CheckMotorBikeUK and Check from one call', async () => {
    const p = await suite.providers();
    const bike = await p.provider('CheckMotorBikeUK', 'ukvd').find(queryOf('CheckMotorBikeUK', { RegistrationNumber: P.motorbike }));
    expect(bike).toMatchObject({ status: 'found' });
    if (bike.status !== 'found') return;
    expect(bike.record).toEqual({
      Description: '2019 Triumph Street Triple Rs, 765CC Petrol',
      RegistrationYear: '2019',
      CarMake: { CurrentTextValue: 'TRIUMPH' },
      CarModel: { CurrentTextValue: 'STREET TRIPLE RS' },
      EngineSize: { CurrentTextValue: '765' },
      FuelType: { CurrentTextValue: 'Petrol' },
      MakeDescription: 'TRIUMPH',
      ModelDescription: 'STREET TRIPLE RS',
      NumberOfSeats: { CurrentTextValue: 2 },
      BodyStyle: { CurrentTextValue: 'MOTORCYCLE' },
      Colour: 'Black',
      VehicleIdentificationNumber: 'SMTD40HL0KT123456',
      YearOfManufacture: 2019,
      MonthOfFirstRegistration: '2019-04',
      Co2Emissions: 142,
      Wheelplan: '2 WHEEL',
      MarkedForExport: false,
    });
    await p.provider('Check', 'ukvd').find(check(P.motorbike));
    expect(suite.fake.calls(P.motorbike)).toBe(1);
  });

  it('serves a partial answer (code 1, ModelDetails failed) without the ModelDetails members, and leaves a masked VIN out', async () => {
    const p = await suite.providers();
    const partial = await p.provider('Check', 'ukvd').find(check(P.partial));
    expect(partial).toMatchObject({ status: 'found', record: { CarMake: { CurrentTextValue: 'AUDI' }, BodyStyle: { CurrentTextValue: '5 DOOR HATCHBACK' }, Description: '2015 Audi A7 S Line Black Ed Tdi Quat Sa, 2967CC Heavy Oil' } });
    if (partial.status === 'found') expect(partial.record).not.toHaveProperty('Transmission');
    const masked = await p.provider('Check', 'ukvd').find(check(P.maskedVin));
    expect(masked).toMatchObject({ status: 'found' });
    if (masked.status === 'found') expect(masked.record).not.toHaveProperty('VehicleIdentificationNumber');
  });

  it('maps MotHistoryDetails into UKMOT: newest first, Pass/Fail, annotations split, dotted dates', async () => {
    const p = await suite.providers();
    const answer = await p.provider('UKMOT', 'ukvd').find(queryOf('UKMOT', { RegistrationNumber: P.car }));
    expect(answer).toEqual({
      status: 'found',
      source: 'ukvd', via: 'upstream',
      record: {
        Tests: [
          { TestDate: '2025.10.10 10:17:46', ExpiryDate: '2026.10.12', Result: 'Pass', Odometer: '89012', TestNumber: '512345678902', FailureReasons: [], Advisories: ['Front Wiper blade defective'] },
          {
            TestDate: '2024.10.01 15:02:10',
            Result: 'Fail',
            Odometer: '81234',
            TestNumber: '412345678901',
            FailureReasons: ['Nearside Front Tyre tread depth below requirements of 1.6mm (5.2.3 (e))', 'Offside Front Brake pipe excessively corroded (1.1.11 (c))'],
            Advisories: ['Oil leak, but not excessive'],
          },
        ],
        ExtendedInformation: { Make: 'AUDI', Model: 'A7', Colour: 'Black', FuelType: 'Diesel', FirstUsedDate: '2015.10.13', MotExpiryDate: '2026.10.12', Registration: 'AB15AUD', OdometerUnit: 'mi' },
      },
    });
    expect(new URLSearchParams(suite.fake.server.requests[0]?.url.split('?')[1] ?? '').get('PackageName')).toBe('MotHistoryDetails');
  });
});

describe('UK Vehicle Data outcomes (commercial-upstreams.md §5)', () => {
  it('classifies every scripted answer: not found, bad input, restricted plate, credentials, quota, funds, down, HTML', async () => {
    const p = await suite.providers();
    const cases: Array<[string, 'not-found' | 'unavailable', string | undefined]> = [
      [P.notFound, 'not-found', undefined],
      [P.noMatch, 'not-found', undefined],
      [P.noDvlaData, 'not-found', undefined],
      [P.retained, 'not-found', undefined],
      [P.badInput, 'not-found', undefined],
      [P.restricted, 'unavailable', 'auth'],
      [P.dailyLimit, 'unavailable', 'quota'],
      [P.concurrency, 'unavailable', 'rate-limited'],
      [P.outOfFunds, 'unavailable', 'out-of-funds'],
      [P.down, 'unavailable', 'server-error'],
      [P.unavailable, 'unavailable', 'server-error'],
      [P.html, 'unavailable', 'server-error'],
      [P.htmlOk, 'unavailable', 'bad-response'],
    ];
    for (const [plate, status, kind] of cases) {
      const answer = await p.provider('Check', 'ukvd').find(check(plate));
      expect(answer.status, plate).toBe(status);
      if (kind !== undefined) expect(lastFailureKind(p.monitor, 'ukvd'), plate).toBe(kind);
      // Paid: asked once, never retried, whatever came back.
      expect(suite.fake.calls(plate), plate).toBe(1);
    }
    // Not found is cached; a refused search term (our normalisation may be at fault) is not.
    await p.provider('Check', 'ukvd').find(check(P.notFound));
    await p.provider('Check', 'ukvd').find(check(P.badInput));
    expect([suite.fake.calls(P.notFound), suite.fake.calls(P.badInput)]).toEqual([1, 2]);
  });

  it('reports an unknown API key (401, code 7) and an unknown package (code 8) as bad credentials', async () => {
    const wrongKey = await suite.providers({ UKVD_API_KEY: 'ukvd-wrong-key-000000000000' });
    expect(await wrongKey.provider('Check', 'ukvd').find(check(P.car))).toMatchObject({ status: 'unavailable', reason: 'ukvd: UK Vehicle Data refused the API key (HTTP 401, StatusCode 7)' });
    expect(lastFailureKind(wrongKey.monitor, 'ukvd')).toBe('auth');
    await wrongKey.close();
    const wrongPackage = await suite.providers({ UKVD_PACKAGE: 'NoSuchPackage' });
    expect(await wrongPackage.provider('Check', 'ukvd').find(check(P.car))).toMatchObject({ status: 'unavailable', reason: 'ukvd: UK Vehicle Data does not know the package NoSuchPackage (StatusCode 8)' });
    expect(lastFailureKind(wrongPackage.monitor, 'ukvd')).toBe('auth');
  });

  it('runs out of funds when the balance cannot pay the package: InsufficientFunds is out-of-funds', async () => {
    suite.fake.balance = 0.07;
    const p = await suite.providers();
    expect(await p.provider('Check', 'ukvd').find(check(P.car))).toMatchObject({ status: 'found' });
    expect(suite.fake.balance).toBe(0.02);
    expect(await p.provider('Check', 'ukvd').find(check(P.motorbike))).toMatchObject({ status: 'unavailable', reason: 'ukvd: UK Vehicle Data account has insufficient funds (BillingResult 1)' });
    expect(lastFailureKind(p.monitor, 'ukvd')).toBe('out-of-funds');
  });

  it('waits for a slow answer within the timeout, and times out a hanging one after one attempt', async () => {
    const p = await suite.providers();
    expect(await p.provider('Check', 'ukvd').find(check(P.slow))).toMatchObject({ status: 'found' });
    await p.close();
    // Providers of their own with a short timeout, for the answer that never comes.
    const impatient = await suite.providers({ UKVD_TIMEOUT_MS: '200', UKVD_BUDGET_MS: '200' });
    suite.fake.server.script({ hang: true });
    expect(await impatient.provider('Check', 'ukvd').find(check(P.car))).toMatchObject({ status: 'unavailable', reason: 'ukvd: no answer within 200 ms (attempt 1)' });
    expect(lastFailureKind(impatient.monitor, 'ukvd')).toBe('timeout');
  });

  it("reports r2's TransactionCost (net of a refund) and AccountBalance as the call's price and balance", async () => {
    const ask = async (plate: string, pkg = 'VehicleDetails'): Promise<{ status: number; text: string }> => {
      const res = await fetch(`${suite.fake.baseUrl}/r2/lookup?${new URLSearchParams({ ApiKey: KEY, PackageName: pkg, Vrm: plate }).toString()}`, CLOSE);
      return { status: res.status, text: await res.text() };
    };
    const found = await ask(P.car);
    expect(classifyUkvd(found.status, found.text, 'VehicleDetails', 'VehicleDetails')).toMatchObject({ status: 'found', cost: 0.05, balance: 9.95 });
    const partial = await ask(P.partial);
    expect(classifyUkvd(partial.status, partial.text, 'VehicleDetails', 'VehicleDetails')).toMatchObject({ status: 'found', cost: 0.03, balance: 9.92 });
    const mot = await ask(P.car, 'MotHistoryDetails');
    expect(classifyUkvd(mot.status, mot.text, 'MotHistoryDetails', 'MotHistoryDetails')).toMatchObject({ status: 'found', cost: 0.04, balance: 9.88 });
    const gone = await ask(P.notFound);
    expect(classifyUkvd(gone.status, gone.text, 'VehicleDetails', 'VehicleDetails')).toEqual({ status: 'not-found' });
    const limit = await ask(P.dailyLimit);
    expect(() => classifyUkvd(limit.status, limit.text, 'VehicleDetails', 'VehicleDetails')).toThrow(new UpstreamError('quota', 'UK Vehicle Data daily limit reached (StatusCode 20)', 429));
  });

  it('keeps the API key out of every message and log line', async () => {
    const p = await suite.providers({ UKVD_API_KEY: 'ukvd-wrong-key-000000000000' });
    await p.provider('Check', 'ukvd').find(check(P.car));
    await p.provider('Check', 'ukvd').find(check(P.down));
    expect(p.log()).toContain('ukvd');
    expect(p.log()).not.toContain('ukvd-wrong-key-000000000000');
  });
});

describe('UK Vehicle Data on the five bindings', () => {
  it('answers Check, CheckMotorBikeUK and CheckUKMinimal with the mapped vehicleJson on every binding, from one upstream call per plate', async () => {
    const t = await suite.app();
    const key = await t.account('alice', 100);
    const auth = t.basic('alice', key);
    for (const [operation, params, expected] of [
      ['Check', [['RegistrationNumber', P.car]], AUDI],
      ['CheckMotorBikeUK', [['RegistrationNumber', P.motorbike]], { CarMake: { CurrentTextValue: 'TRIUMPH' }, Wheelplan: '2 WHEEL' }],
      ['CheckUKMinimal', [['regNumber', P.partial]], { Description: '2015 Audi A7 S Line Black Ed Tdi Quat Sa, 2967CC Heavy Oil', CarMake: { CurrentTextValue: 'AUDI' } }],
    ] as const) {
      const b = await fiveBindings(t, operation, params, 'alice', auth);
      for (const [name, res] of eachBinding(b)) expect(res.statusCode, `${operation} ${name}: ${res.body}`).toBe(200);
      const json = JSON.parse(b.json.body) as Record<string, unknown>;
      expect(json, operation).toMatchObject(expected);
      expect(json.ImageUrl, operation).toMatch(/\/image\.aspx\/@/);
      for (const res of [b.get, b.post, b.soap11, b.soap12]) expect(vehicleJsonOf(res.body), operation).toEqual(json);
      if (operation === 'CheckUKMinimal') expect(Object.keys(json).sort()).toEqual(['CarMake', 'CarModel', 'Description', 'ImageUrl', 'MakeDescription', 'ModelDescription', 'RegistrationYear']);
    }
    // The motorbike's picture is marked as one, as the original marks it.
    const bike = JSON.parse((await fiveBindings(t, 'CheckMotorBikeUK', [['RegistrationNumber', P.motorbike]], 'alice', auth)).json.body) as { ImageUrl: string };
    expect(Buffer.from(bike.ImageUrl.split('@')[1] ?? '', 'base64').toString()).toMatch(/\|motorcycle$/);
    expect([suite.fake.calls(P.car), suite.fake.calls(P.motorbike), suite.fake.calls(P.partial)]).toEqual([1, 1, 1]);
    expect((await t.services.accounts.show('alice')).credits).toBe(100 - 20);
  });

  it('answers UKMOT on every binding', async () => {
    const t = await suite.app();
    const key = await t.account('alice', 10);
    const b = await fiveBindings(t, 'UKMOT', [['RegistrationNumber', P.car]], 'alice', t.basic('alice', key));
    for (const [name, res] of eachBinding(b)) expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
    const json = JSON.parse(b.json.body) as { Tests: Array<{ Result: string }> };
    expect(json.Tests.map((x) => x.Result)).toEqual(['Pass', 'Fail']);
    for (const res of [b.get, b.post, b.soap11, b.soap12]) {
      expect(JSON.parse(elementOf(res.body, 'Json').text)).toEqual(json.Tests);
    }
    expect(suite.fake.calls(P.car)).toBe(1);
  });
});

describe.each(await enginesToTest())('UK Vehicle Data and the caller’s credits (%s)', (engine) => {
  it('charges each answer once and every failure nothing', async () => {
    const t = await suite.app({}, engine);
    const key = await t.account('alice', 10);
    const auth = t.basic('alice', key);
    const found = await t.app.inject({ url: `/api/json.aspx/Check/${P.car}`, headers: { authorization: auth } });
    expect(found.statusCode).toBe(200);
    expect(found.headers['x-credits-charged']).toBe('1');
    for (const plate of [P.notFound, P.badInput, P.dailyLimit, P.outOfFunds, P.down, P.html, P.restricted]) {
      const res = await t.app.inject({ url: `/api/json.aspx/Check/${plate}`, headers: { authorization: auth } });
      expect(res.statusCode, plate).toBe(500);
      expect(res.body, plate).toMatch(plate === P.notFound || plate === P.badInput ? /Lookup failed/ : /temporarily unavailable/);
    }
    const account = await t.services.accounts.show('alice');
    expect(account.credits).toBe(9);
    const debits = (await t.services.accounts.usage('alice')).filter((r) => r.kind === 'debit');
    expect(debits.map((r) => r.delta)).toEqual([-1]);
  });
});
