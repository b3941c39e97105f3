import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { classifyVincario, controlSum } from '../../src/providers/vincario/vincario.client.js';
import { enginesToTest } from '../helpers/engines.js';
import { FakeVincario, VINCARIO_VINS as V } from '../fakes/fake-vincario.js';
import { CLOSE, eachBinding, elementOf, fiveBindings, lastFailureKind, queryOf, vehicleJsonOf, paidSuite } from './paid-harness.js';

/**
 * Vincario API 3.2 (issue 32) against its fake: the control sum, every outcome of
 * commercial-upstreams.md §5 classified, VinCheck and CheckStolen mapped on the five bindings,
 * the price and per-service balance reported, the caller charged once for an answer with data.
 */

const KEY = 'vincario-key-7d2e4f6a0b1c';
const SECRET = 'vincario~secret.Qw8Er7Ty6Ui5';
const suite = paidSuite({
  start: () => FakeVincario.start({ apiKey: KEY, secret: SECRET }),
  env: (fake) => ({ VINCARIO_API_KEY: KEY, VINCARIO_SECRET: SECRET, VINCARIO_BASE_URL: fake.baseUrl, VINCARIO_BREAKER_FAILURES: '100' }),
  reset: (fake) => {
    fake.balance['API Decode'] = 20;
    fake.balance['API Stolen Check'] = 20;
  },
});

const vin = (v: string) => queryOf('VinCheck', { Vin: v });
const stolen = (v: string) => queryOf('CheckStolen', { vinNumber: v });

const FOCUS = {
  Description: '2005 Ford Focus',
  RegistrationYear: '2005',
  CarMake: { CurrentTextValue: 'Ford' },
  CarModel: { CurrentTextValue: 'Focus' },
  MakeDescription: { CurrentTextValue: 'Ford' },
  ModelDescription: { CurrentTextValue: 'Focus' },
  BodyStyle: { CurrentTextValue: 'Hatchback/Liftback/Notchback' },
  EngineSize: { CurrentTextValue: '1596' },
  FuelType: { CurrentTextValue: 'Gasoline' },
  Transmission: { CurrentTextValue: 'Manual/Standard' },
  NumberOfDoors: { CurrentTextValue: '4' },
  DriveType: { CurrentTextValue: 'Front-wheel drive' },
  VechileIdentificationNumber: V.focus,
  ManufacturerName: 'Ford Germany',
  PlantCity: 'Saarlouis',
  PlantCountry: 'Germany',
};

describe('the control sum', () => {
  it('is the first 10 hex characters of sha1("VIN|operation|key|secret"), in the path after the key', async () => {
    expect(controlSum(V.focus, 'decode', KEY, SECRET)).toBe(createHash('sha1').update(`${V.focus}|decode|${KEY}|${SECRET}`).digest('hex').slice(0, 10));
    const p = await suite.providers();
    await p.provider('VinCheck', 'vincario').find(vin(V.focus));
    await p.provider('CheckStolen', 'vincario').find(stolen(V.focus));
    expect(suite.fake.server.requests.map((r) => r.path)).toEqual([
      `/3.2/${KEY}/${controlSum(V.focus, 'decode', KEY, SECRET)}/decode/${V.focus}.json`,
      `/3.2/${KEY}/${controlSum(V.focus, 'stolen-check', KEY, SECRET)}/stolen-check/${V.focus}.json`,
    ]);
    // The secret itself is never sent.
    for (const r of suite.fake.server.requests) expect(JSON.stringify(r)).not.toContain(SECRET);
  });
});

describe('Vincario mapping', () => {
  it('maps a decode into the VinCheck vehicleJson', async () => {
    const p = await suite.providers();
    expect(await p.provider('VinCheck', 'vincario').find(vin(V.focus))).toEqual({ status: 'found', record: FOCUS, source: 'vincario', via: 'upstream' });
  });

  it('maps a partial decode (labels left out) into what it has', async () => {
    const p = await suite.providers();
    expect(await p.provider('VinCheck', 'vincario').find(vin(V.partial))).toEqual({
      status: 'found',
      source: 'vincario', via: 'upstream',
      record: { Description: 'Skoda Octavia', CarMake: { CurrentTextValue: 'Skoda' }, CarModel: { CurrentTextValue: 'Octavia' }, MakeDescription: { CurrentTextValue: 'Skoda' }, ModelDescription: { CurrentTextValue: 'Octavia' }, VechileIdentificationNumber: V.partial },
    });
  });

  it('maps a stolen check into CheckStolen name/value pairs: the report when a register lists the VIN, the empty list when none does', async () => {
    const p = await suite.providers();
    expect(await p.provider('CheckStolen', 'vincario').find(stolen(V.stolen))).toEqual({
      status: 'found',
      source: 'vincario', via: 'upstream',
      record: [
        { Name: 'Status', Value: 'Reported stolen' },
        { Name: 'Czech Republic', Value: 'Not reported stolen' },
        { Name: 'Hungary', Value: 'Not reported stolen' },
        { Name: 'Romania', Value: 'Not reported stolen' },
        { Name: 'Slovenia', Value: 'Not reported stolen' },
        { Name: 'Slovakia', Value: 'Reported stolen' },
        { Name: 'Italy', Value: 'Not reported stolen' },
        { Name: 'International database', Value: 'Not reported stolen' },
      ],
    });
    expect(await p.provider('CheckStolen', 'vincario').find(stolen(V.focus))).toEqual({ status: 'found', source: 'vincario', via: 'upstream', record: [] });
  });
});

describe('Vincario outcomes (commercial-upstreams.md §5)', () => {
  it('classifies every scripted answer', async () => {
    const p = await suite.providers();
    const cases: Array<[string, 'not-found' | 'unavailable', string | undefined]> = [
      [V.notRecognized, 'not-found', undefined],
      [V.invalid, 'not-found', undefined],
      [V.rateLimited, 'unavailable', 'rate-limited'],
      [V.down, 'unavailable', 'server-error'],
      [V.html, 'unavailable', 'server-error'],
    ];
    for (const [v, status, kind] of cases) {
      expect((await p.provider('VinCheck', 'vincario').find(vin(v))).status, v).toBe(status);
      if (kind !== undefined) expect(lastFailureKind(p.monitor, 'vincario'), v).toBe(kind);
      expect(suite.fake.calls('decode', v), v).toBe(1);
    }
    // "Not recognized" is cached; "invalid" (our validation let it through) is not.
    await p.provider('VinCheck', 'vincario').find(vin(V.notRecognized));
    await p.provider('VinCheck', 'vincario').find(vin(V.invalid));
    expect([suite.fake.calls('decode', V.notRecognized), suite.fake.calls('decode', V.invalid)]).toEqual([1, 2]);
    // A register that could not verify the VIN never reads as "not stolen".
    expect(await p.provider('CheckStolen', 'vincario').find(stolen(V.unverified))).toMatchObject({ status: 'unavailable', reason: 'vincario: a stolen-vehicle register Vincario asks could not be verified' });
  });

  it('reports an unknown key and a wrong secret (control sum refused) as bad credentials', async () => {
    const wrongKey = await suite.providers({ VINCARIO_API_KEY: 'vincario-not-our-key' });
    expect(await wrongKey.provider('VinCheck', 'vincario').find(vin(V.focus))).toMatchObject({ status: 'unavailable', reason: 'vincario: Vincario does not know the API key (VINCARIO_API_KEY)' });
    expect(lastFailureKind(wrongKey.monitor, 'vincario')).toBe('auth');
    const wrongSecret = await suite.providers({ VINCARIO_SECRET: 'not-the-secret' });
    expect(await wrongSecret.provider('CheckStolen', 'vincario').find(stolen(V.focus))).toMatchObject({ status: 'unavailable', reason: 'vincario: Vincario refused the control sum (check VINCARIO_SECRET)' });
    expect(lastFailureKind(wrongSecret.monitor, 'vincario')).toBe('auth');
  });

  it('runs out of lookups per service: "Not Enough Lookups" is out of funds for that service only', async () => {
    suite.fake.balance['API Decode'] = 1;
    const p = await suite.providers();
    expect(await p.provider('VinCheck', 'vincario').find(vin(V.focus))).toMatchObject({ status: 'found' });
    expect(await p.provider('VinCheck', 'vincario').find(vin(V.partial))).toMatchObject({ status: 'unavailable', reason: 'vincario: Vincario has no API Decode lookups left' });
    expect(lastFailureKind(p.monitor, 'vincario')).toBe('out-of-funds');
    expect(await p.provider('CheckStolen', 'vincario').find(stolen(V.partial))).toMatchObject({ status: 'found' });
  });

  it('waits for a slow answer within the timeout, and times out a hanging one after one attempt', async () => {
    const p = await suite.providers();
    expect(await p.provider('VinCheck', 'vincario').find(vin(V.slow))).toMatchObject({ status: 'found' });
    // Providers of their own with a short timeout, for the answer that never comes.
    const impatient = await suite.providers({ VINCARIO_TIMEOUT_MS: '200', VINCARIO_BUDGET_MS: '200' });
    suite.fake.server.script({ hang: true });
    expect(await impatient.provider('VinCheck', 'vincario').find(vin(V.focus))).toMatchObject({ status: 'unavailable', reason: 'vincario: no answer within 200 ms (attempt 1)' });
    expect(lastFailureKind(impatient.monitor, 'vincario')).toBe('timeout');
  });

  it('reports a charged price as the cost and the service’s lookups left as the balance', async () => {
    const url = (action: 'decode' | 'stolen-check', v: string): string => `${suite.fake.baseUrl}/${KEY}/${controlSum(v, action, KEY, SECRET)}/${action}/${v}.json`;
    const res = await fetch(url('decode', V.focus), CLOSE);
    // Prepaid (price 0): the call used one of the lookups; the configured price is the better figure.
    expect(classifyVincario(res.status, await res.text(), 'decode')).toMatchObject({ status: 'found', balance: 19 });
    const charged = await FakeVincario.start({ apiKey: KEY, secret: SECRET, price: 0.49 });
    try {
      const r = await fetch(`${charged.baseUrl}/${KEY}/${controlSum(V.stolen, 'stolen-check', KEY, SECRET)}/stolen-check/${V.stolen}.json`, CLOSE);
      expect(classifyVincario(r.status, await r.text(), 'stolen-check')).toMatchObject({ status: 'found', cost: 0.49, balance: 19 });
    } finally {
      await charged.close();
    }
    const prepaid = classifyVincario(200, JSON.stringify({ price: 0, price_currency: 'EUR', balance: { 'API Decode': 3 }, decode: [{ label: 'Make', value: 'Ford' }] }), 'decode');
    expect(prepaid).not.toHaveProperty('cost');
  });
});

describe('Vincario on the five bindings', () => {
  it('answers VinCheck and CheckStolen on every binding, from one upstream call each', async () => {
    const t = await suite.app({ VIN_DECODER: 'off' });
    const key = await t.account('alice', 100);
    const auth = t.basic('alice', key);
    const v = await fiveBindings(t, 'VinCheck', [['Vin', V.focus]], 'alice', auth);
    for (const [name, res] of eachBinding(v)) expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
    const json = JSON.parse(v.json.body) as Record<string, unknown>;
    expect(json).toMatchObject(FOCUS);
    for (const res of [v.get, v.post, v.soap11, v.soap12]) expect(vehicleJsonOf(res.body)).toEqual(json);
    const s = await fiveBindings(t, 'CheckStolen', [['vinNumber', V.stolen]], 'alice', auth);
    for (const [name, res] of eachBinding(s)) expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
    const pairs = JSON.parse(s.json.body) as Array<{ Name: string; Value: string }>;
    expect(pairs[0]).toEqual({ Name: 'Status', Value: 'Reported stolen' });
    for (const res of [s.get, s.post, s.soap11, s.soap12]) {
      const list = elementOf(res.body, res === s.get || res === s.post ? 'ArrayOfNameValue' : 'CheckStolenResult');
      expect(list.children.map((c) => [c.children.find((x) => x.local === 'Name')?.text, c.children.find((x) => x.local === 'Value')?.text])).toEqual(pairs.map((x) => [x.Name, x.Value]));
    }
    expect([suite.fake.calls('decode', V.focus), suite.fake.calls('stolen-check', V.stolen)]).toEqual([1, 1]);
    expect((await t.services.accounts.show('alice')).credits).toBe(90);
  });
});

describe.each(await enginesToTest())('Vincario and the caller’s credits (%s)', (engine) => {
  it('charges a decode and a theft report once, and a clean stolen check and every failure nothing', async () => {
    const t = await suite.app({ VIN_DECODER: 'off' }, engine);
    const key = await t.account('alice', 10);
    const auth = t.basic('alice', key);
    const get = (path: string) => t.app.inject({ url: `/api/json.aspx/${path}`, headers: { authorization: auth } });
    expect((await get(`VinCheck/${V.focus}`)).headers['x-credits-charged']).toBe('1');
    expect((await get(`CheckStolen/${V.stolen}`)).headers['x-credits-charged']).toBe('1');
    const clean = await get(`CheckStolen/${V.focus}`);
    expect([clean.statusCode, clean.body]).toEqual([200, '[]']);
    for (const path of [`VinCheck/${V.notRecognized}`, `VinCheck/${V.down}`, `VinCheck/${V.rateLimited}`, `CheckStolen/${V.unverified}`]) {
      const res = await get(path);
      expect(res.statusCode, path).toBe(500);
    }
    expect((await t.services.accounts.show('alice')).credits).toBe(8);
    const rows = (await t.services.accounts.usage('alice')).filter((r) => r.kind !== 'topup');
    expect(rows.map((r) => [r.kind, r.delta])).toEqual(expect.arrayContaining([['debit', -1], ['debit', -1], ['free', 0]]));
    expect(rows.filter((r) => r.kind === 'debit')).toHaveLength(2);
  });
});
