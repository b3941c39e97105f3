import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeDvla } from '../fakes/fake-dvla.js';
import { ManualWaitClock } from '../helpers/manual-wait-clock.js';
import { fakeEnv, ManualClock, query, startDvla, ukProviders, type UkProviders } from './harness.js';

let dvla: FakeDvla;
let clock: ManualClock;
/** Request budgets and retry pauses: time moves only by what the client sleeps. */
let wait: ManualWaitClock;
let p: UkProviders;

async function providers(overrides: Record<string, string> = {}, fake: FakeDvla = dvla): Promise<UkProviders> {
  p = await ukProviders(fakeEnv({ dvla: fake }, overrides), clock, undefined, wait);
  return p;
}

beforeAll(async () => {
  dvla = await startDvla();
});
afterAll(async () => dvla.close());
beforeEach(() => {
  dvla.server.reset();
  clock = new ManualClock();
  wait = new ManualWaitClock({ advanceOnSleep: true });
});
afterEach(async () => p.close());

describe('DVLA VES mapping to the Check (UK) vehicleJson', () => {
  it('maps a petrol car: UK Description, RegistrationYear from the first registration, wrapped make, engine and fuel', async () => {
    await providers();
    const answer = await p.check.find(query('Check', 'aa19 aaa'));
    expect(answer).toMatchObject({ status: 'found', source: 'dvla' });
    if (answer.status !== 'found') return;
    expect(answer.record).toEqual({
      Description: '2019 Ford, 1596CC Petrol',
      RegistrationYear: '2019',
      CarMake: { CurrentTextValue: 'FORD' },
      EngineSize: { CurrentTextValue: '1596' },
      FuelType: { CurrentTextValue: 'Petrol' },
      MakeDescription: 'FORD',
      Colour: 'Blue',
      YearOfManufacture: 2019,
      MonthOfFirstRegistration: '2019-03',
      TaxStatus: 'Taxed',
      TaxDueDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) as unknown,
      MotStatus: 'Valid',
      MotExpiryDate: '2026-05-14',
      Co2Emissions: 139,
      EuroStatus: 'EURO 6',
      TypeApproval: 'M1',
      Wheelplan: '2 AXLE RIGID BODY',
      RevenueWeight: 0,
      MarkedForExport: false,
      DateOfLastV5CIssued: '2021-07-09',
    });
    // The plate went in the JSON body with the key header, never in the URL.
    const request = dvla.server.requests[0];
    expect(request?.path).toBe('/vehicle-enquiry/v1/vehicles');
    expect(JSON.parse(request?.body ?? '{}')).toEqual({ registrationNumber: 'AA19AAA' });
  });

  it('maps the other documented plates: electric (no engine size), HGV (no MOT status), SORN (no tax date), old-style plate', async () => {
    await providers();
    const record = async (plate: string): Promise<Record<string, unknown>> => {
      const a = await p.check.find(query('Check', plate));
      if (a.status !== 'found') throw new Error(`${plate}: ${a.status}`);
      return a.record as Record<string, unknown>;
    };
    const ev = await record('AA19EEE');
    expect(ev).toMatchObject({ Description: '2019 Tesla, Electricity', FuelType: { CurrentTextValue: 'Electricity' }, Co2Emissions: 0 });
    expect(ev).not.toHaveProperty('EngineSize');
    const hgv = await record('AA19PPP');
    expect(hgv).toMatchObject({ TypeApproval: 'N3', RevenueWeight: 26000, Description: '2019 Scania, 12740CC Diesel' });
    expect(hgv).not.toHaveProperty('MotStatus');
    const sorn = await record('AA19SRN');
    expect(sorn).toMatchObject({ TaxStatus: 'SORN', MotStatus: 'No details held by DVLA' });
    expect(sorn).not.toHaveProperty('TaxDueDate');
    expect(await record('L2WPS')).toMatchObject({ RegistrationYear: '1994', TaxStatus: 'Untaxed', Description: '1994 Rover, 1396CC Petrol', Colour: 'Red' });
    for (const plate of ['AA19DSL', 'AA19MOT', 'AA19AMP']) expect(await record(plate)).toHaveProperty('CarMake');
  });
});

describe('DVLA VES error paths', () => {
  it('turns 404 (ER19NFD) into not found, cached for the shorter not-found TTL', async () => {
    await providers({ DVLA_NOT_FOUND_TTL_S: '60', DVLA_CACHE_TTL_S: '3600' });
    expect(await p.check.find(query('Check', 'ER19NFD'))).toEqual({ status: 'not-found' });
    expect(await p.check.find(query('Check', 'ER19NFD'))).toEqual({ status: 'not-found' });
    expect(dvla.callsFor('ER19NFD')).toBe(1);
    clock.advance(60_000);
    expect(await p.check.find(query('Check', 'ER19NFD'))).toEqual({ status: 'not-found' });
    expect(dvla.callsFor('ER19NFD')).toBe(2);
  });

  it('turns 400 (ER19BAD) into not found without caching it, and without retrying', async () => {
    await providers();
    expect(await p.check.find(query('Check', 'ER19BAD'))).toEqual({ status: 'not-found' });
    expect(await p.check.find(query('Check', 'ER19BAD'))).toEqual({ status: 'not-found' });
    expect(dvla.callsFor('ER19BAD')).toBe(2);
  });

  it('asks nothing for a plate that cannot be a UK registration', async () => {
    await providers();
    expect(await p.check.find(query('Check', 'ABCDEFGHIJK'))).toEqual({ status: 'not-found' });
    expect(await p.check.find(query('Check', 'ÅB12CDE'))).toEqual({ status: 'not-found' });
    expect(dvla.calls).toBe(0);
  });

  it('reports 500 (ER19ERR) and 503 (ER19MNT) as unavailable after exactly one retry each', async () => {
    await providers({ DVLA_BREAKER_FAILURES: '10' });
    expect(await p.check.find(query('Check', 'ER19ERR'))).toMatchObject({ status: 'unavailable', reason: 'dvla: HTTP 500 on the retry' });
    expect(dvla.callsFor('ER19ERR')).toBe(2);
    expect(await p.check.find(query('Check', 'ER19MNT'))).toMatchObject({ status: 'unavailable' });
    expect(dvla.callsFor('ER19MNT')).toBe(2);
    // Failures are not cached: the next lookup asks again.
    await p.check.find(query('Check', 'ER19ERR'));
    expect(dvla.callsFor('ER19ERR')).toBe(4);
  });

  it('reports 429 (ER19THR) without Retry-After as unavailable at once', async () => {
    await providers();
    expect(await p.check.find(query('Check', 'ER19THR'))).toMatchObject({ status: 'unavailable', reason: 'dvla: HTTP 429 without Retry-After' });
    expect(dvla.callsFor('ER19THR')).toBe(1);
  });

  it('honours Retry-After on 429: waits, retries once, and gives up when the wait exceeds the budget', async () => {
    const throttled = await startDvla({ retryAfter: '1' });
    try {
      await providers({}, throttled);
      expect(await p.check.find(query('Check', 'ER19THR'))).toMatchObject({ status: 'unavailable', reason: 'dvla: HTTP 429 on the retry' });
      expect(wait.sleeps).toEqual([1000]);
      expect(throttled.callsFor('ER19THR')).toBe(2);
      await p.close();
    } finally {
      await throttled.close();
    }
    const patient = await startDvla({ retryAfter: '30' });
    try {
      wait = new ManualWaitClock({ advanceOnSleep: true });
      await providers({ DVLA_BUDGET_MS: '20000' }, patient);
      expect(await p.check.find(query('Check', 'ER19THR'))).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/Retry-After 30 s exceeds/) as unknown });
      // Given up at once: no wait at all.
      expect(wait.sleeps).toEqual([]);
      expect(patient.callsFor('ER19THR')).toBe(1);
    } finally {
      await patient.close();
    }
  });

  it('times out a hanging DVLA after the timeout and one retry', async () => {
    // A fake of its own: an attempt cut off before it reached the fake may arrive later, and must
    // not count in the next test. The reason names the attempts as the client counts them.
    const hanging = await startDvla();
    try {
      await providers({ DVLA_TIMEOUT_MS: '200' }, hanging);
      expect(await p.check.find(query('Check', 'ER19HNG'))).toMatchObject({ status: 'unavailable', reason: 'dvla: no answer within 200 ms (attempt 2)' });
    } finally {
      await hanging.close();
    }
  });

  it('waits for a slow DVLA that answers within the timeout', async () => {
    const slow = await startDvla({ slowMs: 150 });
    try {
      // The harness's timeout (10 s) is far above the fake's 150 ms, however busy the machine.
      await providers({}, slow);
      expect(await p.check.find(query('Check', 'ER19SLW'))).toMatchObject({ status: 'found' });
    } finally {
      await slow.close();
    }
  });

  it('reports a refused API key (403) as unavailable, without retrying, and says so in the provider state', async () => {
    await providers({ DVLA_API_KEY: 'wrong-key-0000000000' });
    expect(await p.check.find(query('Check', 'AA19AAA'))).toMatchObject({ status: 'unavailable', reason: 'dvla: DVLA refused the API key (HTTP 403)' });
    expect(dvla.calls).toBe(1);
    expect(p.monitor.snapshot().dvla?.lastFailure).toMatchObject({ kind: 'auth' });
  });
});

describe('DVLA VES caching and circuit breaker', () => {
  it('answers a repeated lookup from the cache until the TTL expires', async () => {
    await providers({ DVLA_CACHE_TTL_S: '600' });
    await p.check.find(query('Check', 'AA19AAA'));
    const again = await p.check.find(query('Check', 'AA19AAA'));
    expect(again).toMatchObject({ status: 'found', record: { MakeDescription: 'FORD' } });
    expect(dvla.calls).toBe(1);
    clock.advance(599_000);
    await p.check.find(query('Check', 'AA19AAA'));
    expect(dvla.calls).toBe(1);
    clock.advance(1000);
    await p.check.find(query('Check', 'AA19AAA'));
    expect(dvla.calls).toBe(2);
    expect(p.monitor.snapshot().dvla?.lookups).toEqual({ upstream: 2, cache: 2, unavailable: 0 });
  });

  it('shares one upstream call between concurrent lookups of one plate', async () => {
    await providers();
    const answers = await Promise.all([1, 2, 3].map(() => Promise.resolve(p.check.find(query('Check', 'AA19DSL')))));
    expect(answers.every((a) => a.status === 'found')).toBe(true);
    expect(dvla.calls).toBe(1);
  });

  it('opens the circuit after the configured failures, stops asking DVLA, and closes after a successful trial', async () => {
    await providers({ DVLA_BREAKER_FAILURES: '2', DVLA_BREAKER_OPEN_S: '30' });
    await p.check.find(query('Check', 'AA19AAA'));
    await p.check.find(query('Check', 'ER19ERR'));
    await p.check.find(query('Check', 'ER19MNT'));
    expect(p.monitor.snapshot().dvla).toMatchObject({ status: 'down', breaker: 'open', consecutiveFailures: 2 });
    const before = dvla.calls;

    expect(await p.check.find(query('Check', 'AA19DSL'))).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/circuit open/) as unknown });
    expect(dvla.calls).toBe(before);
    // Cached answers are still served while the circuit is open.
    expect(await p.check.find(query('Check', 'AA19AAA'))).toMatchObject({ status: 'found' });

    clock.advance(30_000);
    expect(p.monitor.snapshot().dvla).toMatchObject({ status: 'probing', breaker: 'half-open' });
    expect(await p.check.find(query('Check', 'AA19DSL'))).toMatchObject({ status: 'found' });
    expect(dvla.calls).toBe(before + 1);
    expect(p.monitor.snapshot().dvla).toMatchObject({ status: 'up', breaker: 'closed', consecutiveFailures: 0 });
    expect(p.log()).toMatch(/circuit opened/);
    expect(p.log()).toMatch(/circuit closed/);
  });

  it('does not count not-found answers as failures', async () => {
    await providers({ DVLA_BREAKER_FAILURES: '1', DVLA_NOT_FOUND_TTL_S: '0' });
    for (let i = 0; i < 3; i += 1) await p.check.find(query('Check', 'ER19NFD'));
    expect(p.monitor.snapshot().dvla).toMatchObject({ status: 'up' });
    expect(dvla.callsFor('ER19NFD')).toBe(3);
  });
});
