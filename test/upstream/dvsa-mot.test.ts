import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeDvla } from '../fakes/fake-dvla.js';
import type { FakeDvsaMot } from '../fakes/fake-dvsa-mot.js';
import { closedPortUrl, fakeEnv, ManualClock, query, startDvla, startDvsa, ukProviders, type UkProviders } from './harness.js';

let dvsa: FakeDvsaMot;
let dvla: FakeDvla;
let clock: ManualClock;
let p: UkProviders | undefined;

async function providers(overrides: Record<string, string> = {}, withDvla = false, fake: FakeDvsaMot = dvsa): Promise<UkProviders> {
  p = await ukProviders(fakeEnv(withDvla ? { dvsa: fake, dvla } : { dvsa: fake }, overrides), clock);
  return p;
}

async function found(provider: UkProviders['check'] | undefined, operation: 'Check' | 'UKMOT', plate: string): Promise<Record<string, unknown>> {
  if (!provider) throw new Error('no provider');
  const answer = await provider.find(query(operation, plate));
  if (answer.status !== 'found') throw new Error(`${operation} ${plate}: ${JSON.stringify(answer)}`);
  return answer.record as Record<string, unknown>;
}

beforeAll(async () => {
  dvsa = await startDvsa({ expiresIn: 1199 });
  dvla = await startDvla();
});
afterAll(async () => {
  await dvsa.close();
  await dvla.close();
});
beforeEach(() => {
  dvsa.server.reset();
  dvsa.revokeTokens();
  dvla.server.reset();
  clock = new ManualClock();
});
afterEach(async () => {
  await p?.close();
  p = undefined;
});

describe('DVSA MOT history: OAuth2 client credentials', () => {
  it('sends the bearer token and the API key, and reuses one token for many lookups', async () => {
    await providers();
    await found(p?.ukmot, 'UKMOT', 'AA19AAA');
    await found(p?.ukmot, 'UKMOT', 'AA19DSL');
    await found(p?.ukmot, 'UKMOT', 'L2WPS');
    expect(dvsa.tokenCalls).toBe(1);
    expect(dvsa.calls).toBe(3);
    const token = dvsa.server.requests.find((r) => r.path.includes('/oauth2/'));
    expect(new URLSearchParams(token?.body).get('grant_type')).toBe('client_credentials');
    const call = dvsa.server.requests.find((r) => r.path.includes('/registration/'));
    expect(call?.headers.authorization).toBe(`Bearer ${dvsa.tokens[0] ?? ''}`);
    expect(call?.headers['x-api-key']).toBeDefined();
  });

  it('fetches a new token shortly before the old one expires, without waiting for a 401', async () => {
    await providers({ DVSA_CACHE_TTL_S: '0', DVSA_NOT_FOUND_TTL_S: '0' });
    await found(p?.ukmot, 'UKMOT', 'AA19AAA');
    clock.advance((1199 - 61) * 1000);
    await found(p?.ukmot, 'UKMOT', 'AA19AAA');
    expect(dvsa.tokenCalls).toBe(1);
    clock.advance(2000);
    await found(p?.ukmot, 'UKMOT', 'AA19AAA');
    expect(dvsa.tokenCalls).toBe(2);
    expect(dvsa.calls).toBe(3);
  });

  it('refreshes a short-lived token at half its lifetime', async () => {
    const shortLived = await startDvsa({ expiresIn: 30 });
    try {
      await providers({ DVSA_CACHE_TTL_S: '0' }, false, shortLived);
      await found(p?.ukmot, 'UKMOT', 'AA19AAA');
      clock.advance(14_000);
      await found(p?.ukmot, 'UKMOT', 'AA19AAA');
      expect(shortLived.tokenCalls).toBe(1);
      clock.advance(1000);
      await found(p?.ukmot, 'UKMOT', 'AA19AAA');
      expect(shortLived.tokenCalls).toBe(2);
    } finally {
      await shortLived.close();
    }
  });

  it('on a 401 for a token the issuer revoked, gets a new token and asks once more', async () => {
    await providers({ DVSA_CACHE_TTL_S: '0' });
    await found(p?.ukmot, 'UKMOT', 'AA19AAA');
    dvsa.revokeTokens();
    expect(await found(p?.ukmot, 'UKMOT', 'AA19AAA')).toHaveProperty('Tests');
    expect(dvsa.tokenCalls).toBe(2);
    expect(dvsa.calls).toBe(3);
  });

  it('treats 403 MOTH-FB-02 (access token expired) like a 401', async () => {
    const strict = await startDvsa({ expiredTokenStatus: 403 });
    try {
      await providers({ DVSA_CACHE_TTL_S: '0' }, false, strict);
      await found(p?.ukmot, 'UKMOT', 'AA19AAA');
      strict.revokeTokens();
      await found(p?.ukmot, 'UKMOT', 'AA19AAA');
      expect(strict.tokenCalls).toBe(2);
    } finally {
      await strict.close();
    }
  });

  it('reports refused client credentials (invalid_client) as unavailable, naming the OAuth error only', async () => {
    const other = await startDvsa({ clientSecret: 'a-different-secret-value' });
    try {
      await providers({}, false, other);
      const answer = await p?.ukmot?.find(query('UKMOT', 'AA19AAA'));
      expect(answer).toEqual({ status: 'unavailable', reason: 'dvsa-mot: token endpoint refused the request (HTTP 401, invalid_client)' });
      expect(other.calls).toBe(0);
      expect(p?.log()).toMatch(/access token request failed/);
    } finally {
      await other.close();
    }
  });

  it('reports a refused API key (403 MOTH-FB-03) as unavailable without fetching another token', async () => {
    await providers({ DVSA_API_KEY: 'not-the-registered-key' });
    expect(await p?.ukmot?.find(query('UKMOT', 'AA19AAA'))).toEqual({ status: 'unavailable', reason: 'dvsa-mot: DVSA refused our credentials (HTTP 403, MOTH-FB-03)' });
    expect(dvsa.tokenCalls).toBe(1);
    expect(dvsa.calls).toBe(1);
  });

  it('retries the token request once when the token endpoint fails, then reports unavailable', async () => {
    await providers();
    dvsa.server.script({ status: 500 }, { status: 503 });
    expect(await p?.ukmot?.find(query('UKMOT', 'AA19AAA'))).toMatchObject({ status: 'unavailable', reason: 'dvsa-mot: token endpoint: HTTP 503 on the retry' });
    expect(dvsa.tokenCalls).toBe(2);
    expect(dvsa.calls).toBe(0);
    // The next lookup tries again.
    await found(p?.ukmot, 'UKMOT', 'AA19AAA');
  });
});

describe('DVSA MOT history mapping to UKMOT', () => {
  it('lists tests newest first with UK dates and times, odometer text, failure reasons and advisories by defect type', async () => {
    await providers();
    expect(await found(p?.ukmot, 'UKMOT', 'AA19AAA')).toEqual({
      Tests: [
        {
          // 10:12 UTC on 10 May is 11:12 in the UK (BST).
          TestDate: '2025.05.10 11:12:00',
          ExpiryDate: '2026.05.14',
          Result: 'Pass',
          Odometer: '84512',
          TestNumber: '123456789012',
          FailureReasons: ['Offside headlamp aim too high (4.1.2 (a))'],
          Advisories: ['Nearside front tyre worn close to legal limit (5.2.3 (e))', 'Windscreen chipped (3.2 (a))'],
        },
        {
          TestDate: '2025.05.09 16:40:00',
          Result: 'Fail',
          Odometer: '84510',
          TestNumber: '123456789011',
          FailureReasons: ['Brake pipe excessively corroded (1.1.11 (c))', 'Offside headlamp aim too high (4.1.2 (a))'],
          Advisories: ['Tester note: customer informed'],
        },
        { TestDate: '2024.05.10 10:00:00', ExpiryDate: '2025.05.14', Result: 'Pass', Odometer: '61200', TestNumber: '111111111111', FailureReasons: [], Advisories: [] },
      ],
      ExtendedInformation: {
        Make: 'FORD',
        Model: 'FOCUS',
        Colour: 'Blue',
        FuelType: 'Petrol',
        EngineSize: '1596',
        FirstUsedDate: '2019.03.01',
        YearOfManufacture: '2019',
        MotExpiryDate: '2026.05.14',
        Registration: 'AA19AAA',
        RegistrationDate: '2019.03.01',
        ManufactureDate: '2019.02.20',
        OdometerUnit: 'mi',
        HasOutstandingRecall: 'No',
      },
    });
  });

  it('adds the tax date (dd MMM yyyy) and DVLA statuses when DVLA is configured too', async () => {
    await providers({}, true);
    const mot = await found(p?.ukmot, 'UKMOT', 'AA19DSL');
    expect(mot.taxDate).toBe('01 Sep 2026');
    expect(mot.ExtendedInformation).toMatchObject({ TaxStatus: 'Taxed', MotStatus: 'Valid', Co2Emissions: '118', YearOfManufacture: '2019', OdometerUnit: 'km' });
    // A Northern Ireland (DVA) test has no defects list.
    expect(mot.Tests).toEqual([{ TestDate: '2025.01.15 12:00:00', ExpiryDate: '2026.01.14', Result: 'Pass', Odometer: '120500', TestNumber: '999888777666', FailureReasons: [], Advisories: [] }]);
  });

  it('answers a vehicle with no test yet with no tests and its first test due date', async () => {
    await providers();
    expect(await found(p?.ukmot, 'UKMOT', 'AA19EEE')).toMatchObject({ Tests: [], ExtendedInformation: { Model: 'MODEL 3', MotTestDueDate: '2022.06.19', YearOfManufacture: '2019' } });
  });

  it('leaves out an odometer that was not read', async () => {
    await providers();
    const mot = await found(p?.ukmot, 'UKMOT', 'L2WPS');
    expect(mot.Tests).toEqual([{ TestDate: '2017.10.31 08:05:09', Result: 'Fail', TestNumber: '555444333222', FailureReasons: ['Corrosion (6.1.1)'], Advisories: [] }]);
  });

  it('still answers UKMOT, without the tax date, when DVLA is down', async () => {
    await providers({ DVLA_BASE_URL: `${await closedPortUrl()}/vehicle-enquiry` }, true);
    const mot = await found(p?.ukmot, 'UKMOT', 'AA19AAA');
    expect(mot).not.toHaveProperty('taxDate');
    expect(mot.Tests).toHaveLength(3);
  });
});

describe('DVSA MOT history error codes', () => {
  it('maps MOTH-NF-01 to not found (cached) and MOTH-IV-03 to not found (not cached)', async () => {
    await providers();
    for (let i = 0; i < 2; i += 1) {
      expect(await p?.ukmot?.find(query('UKMOT', 'ER19NFD'))).toEqual({ status: 'not-found' });
      expect(await p?.ukmot?.find(query('UKMOT', 'ER19BAD'))).toEqual({ status: 'not-found' });
    }
    expect(dvsa.server.requests.filter((r) => r.path.endsWith('/ER19NFD'))).toHaveLength(1);
    expect(dvsa.server.requests.filter((r) => r.path.endsWith('/ER19BAD'))).toHaveLength(2);
  });

  it('reports MOTH-RL-02 (429) at once, and 500 / 503 after one retry, as unavailable', async () => {
    await providers({ DVSA_BREAKER_FAILURES: '10' });
    expect(await p?.ukmot?.find(query('UKMOT', 'ER19THR'))).toMatchObject({ status: 'unavailable' });
    expect(dvsa.server.requests.filter((r) => r.path.endsWith('/ER19THR'))).toHaveLength(1);
    expect(await p?.ukmot?.find(query('UKMOT', 'ER19ERR'))).toMatchObject({ status: 'unavailable' });
    expect(dvsa.server.requests.filter((r) => r.path.endsWith('/ER19ERR'))).toHaveLength(2);
    expect(await p?.ukmot?.find(query('UKMOT', 'ER19MNT'))).toMatchObject({ status: 'unavailable' });
    expect(dvsa.server.requests.filter((r) => r.path.endsWith('/ER19MNT'))).toHaveLength(2);
  });

  it('reports MOTH-NF-02 (URL not found) as a configuration problem, not as an unknown vehicle', async () => {
    await providers({ DVSA_BASE_URL: `${dvsa.server.url}/v9/nowhere` });
    expect(await p?.ukmot?.find(query('UKMOT', 'AA19AAA'))).toEqual({ status: 'unavailable', reason: 'dvsa-mot: HTTP 404, MOTH-NF-02: check DVSA_BASE_URL' });
  });

  it('times out a hanging MOT API after the timeout and one retry', async () => {
    // A fake of its own: an attempt cut off before it reached the fake may arrive later, and must
    // not count in the next test. The reason names the attempts as the client counts them.
    const hanging = await startDvsa();
    try {
      await providers({ DVSA_TIMEOUT_MS: '200' }, false, hanging);
      expect(await p?.ukmot?.find(query('UKMOT', 'ER19HNG'))).toMatchObject({ status: 'unavailable', reason: 'dvsa-mot: no answer within 200 ms (attempt 2)' });
    } finally {
      await hanging.close();
    }
  });
});

describe('Check (UK) from DVLA and DVSA together', () => {
  it('adds the model from the MOT history to the DVLA vehicle', async () => {
    await providers({}, true);
    const answer = await p?.check.find(query('Check', 'AA19AAA'));
    expect(answer).toMatchObject({
      status: 'found',
      source: 'dvla+dvsa-mot',
      record: { Description: '2019 Ford Focus, 1596CC Petrol', CarModel: { CurrentTextValue: 'FOCUS' }, ModelDescription: 'FOCUS', CarMake: { CurrentTextValue: 'FORD' } },
    });
  });

  it('answers from DVLA without the model when the MOT API fails or has no history, and not found when DVLA says so', async () => {
    await providers({}, true);
    // The token endpoint fails twice (the request and its retry): the MOT side is unavailable.
    dvsa.server.script({ status: 500 }, { status: 500 });
    const record = await found(p?.check, 'Check', 'AA19AAA');
    expect(record).not.toHaveProperty('CarModel');
    expect(record.Description).toBe('2019 Ford, 1596CC Petrol');
    expect(dvsa.tokenCalls).toBe(2);
    // DVSA has no MOT history for AA19MOT: no model either.
    expect(await found(p?.check, 'Check', 'AA19MOT')).not.toHaveProperty('CarModel');
    expect(await p?.check.find(query('Check', 'ER19NFD'))).toEqual({ status: 'not-found' });
  });

  it('builds the vehicle from the MOT history when only DVSA is configured', async () => {
    await providers();
    expect(await found(p?.check, 'Check', 'AA19AAA')).toEqual({
      Description: '2019 Ford Focus, 1596CC Petrol',
      RegistrationYear: '2019',
      CarMake: { CurrentTextValue: 'FORD' },
      CarModel: { CurrentTextValue: 'FOCUS' },
      EngineSize: { CurrentTextValue: '1596' },
      FuelType: { CurrentTextValue: 'Petrol' },
      MakeDescription: 'FORD',
      ModelDescription: 'FOCUS',
      Colour: 'Blue',
    });
  });

  it('shares the cached MOT answer between Check and UKMOT', async () => {
    await providers({}, true);
    await found(p?.check, 'Check', 'AA19DSL');
    await found(p?.ukmot, 'UKMOT', 'AA19DSL');
    expect(dvsa.calls).toBe(1);
    expect(dvla.calls).toBe(1);
  });
});
