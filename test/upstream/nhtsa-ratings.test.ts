import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeNhtsaRatings } from '../fakes/fake-nhtsa-ratings.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { sharedVinDatabase } from '../vin/shared-vin-database.js';

/**
 * NHTSA 5-Star Safety Ratings (upstream-sources.md §10.5) added to VinCheck and CheckUSA answers
 * with make, model and year, under `NhtsaSafetyRatings`. 1HGCM82633A004352 decodes offline to a
 * 2003 Honda Accord.
 */

let fake: FakeNhtsaRatings;
let vinDb: string;
const apps: TestApp[] = [];

const ratingsEnv = (): Record<string, string> => ({
  NHTSA_RATINGS_ENABLED: 'true', NHTSA_RATINGS_BASE_URL: fake.baseUrl, NHTSA_RATINGS_TIMEOUT_MS: '2000', NHTSA_RATINGS_BUDGET_MS: '5000', NHTSA_RATINGS_BREAKER_FAILURES: '100',
});

async function appWith(env: Record<string, string>): Promise<{ t: TestApp; get: (path: string) => Promise<{ status: number; body: string }>; credits: () => Promise<number> }> {
  const t = await createTestApp({ VIN_DB_PATH: vinDb, ...env });
  apps.push(t);
  const auth = t.basic('alice', await t.account('alice', 10));
  // A CheckUSA record, as an import would store it.
  const camry = { Description: '2015 Toyota Camry', RegistrationYear: '2015', CarMake: { CurrentTextValue: 'Toyota' }, CarModel: { CurrentTextValue: 'Camry' } };
  await t.services.storage.transaction((tx) => t.services.records.upsertRecords(tx, [{ dataset: 'CheckUSA', lookupKey: '7KDJ294|CA', document: JSON.stringify(camry), source: 'test' }], new Date().toISOString()));
  return {
    t,
    async get(path) {
      const res = await t.app.inject({ url: path, headers: { authorization: auth } });
      return { status: res.statusCode, body: res.body };
    },
    credits: async () => (await t.services.accounts.show('alice')).credits,
  };
}

beforeAll(async () => {
  vinDb = await sharedVinDatabase();
  fake = await FakeNhtsaRatings.start();
}, 120_000);
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
});
afterAll(async () => {
  await fake.close();
});

describe('NHTSA 5-Star Safety Ratings', () => {
  it('adds every variant\'s ratings to a VinCheck answer, for the lookup\'s one credit', async () => {
    const { get, credits } = await appWith(ratingsEnv());
    const res = await get('/api/json.aspx/VinCheck/1HGCM82633A004352');
    expect(res.status, res.body).toBe(200);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body).toMatchObject({ CarMake: { CurrentTextValue: 'Honda' }, CarModel: { CurrentTextValue: 'Accord' } });
    expect(body.NhtsaSafetyRatings).toEqual({
      Source: 'NHTSA 5-Star Safety Ratings (US market)',
      ModelYear: 2003,
      Variants: [
        expect.objectContaining({ VehicleId: 7523, VehicleDescription: '2003 Honda Accord 4 DR FWD', OverallRating: '5', RolloverRating: '4', RolloverPossibility: 0.103, NHTSAElectronicStabilityControl: 'Standard' }),
        expect.objectContaining({ VehicleId: 7522, OverallRating: '4' }),
      ],
    });
    expect(fake.server.requests.map((r) => r.path)).toEqual(expect.arrayContaining(['/SafetyRatings/modelyear/2003/make/Honda/model/Accord', '/SafetyRatings/VehicleId/7523']));
    expect(await credits()).toBe(9);
  });

  it('rates an imported CheckUSA record too, and answers a second lookup from its cache', async () => {
    const { get } = await appWith(ratingsEnv());
    const res = await get('/api/json.aspx/CheckUSA/7KDJ294/CA');
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ Description: '2015 Toyota Camry', NhtsaSafetyRatings: { ModelYear: 2015, Variants: [{ VehicleId: 9403, OverallRating: '5' }] } });
    const calls = fake.calls;
    expect(JSON.parse((await get('/api/json.aspx/CheckUSA/7KDJ294/CA')).body)).toHaveProperty('NhtsaSafetyRatings');
    expect(fake.calls).toBe(calls);
  });

  it('serves the vehicle without ratings when NHTSA has none or fails, still for one credit; off by default', async () => {
    const { t, get, credits } = await appWith(ratingsEnv());
    const broken = { Description: 'Ford Broken', RegistrationYear: '2010', CarMake: { CurrentTextValue: 'Ford' }, CarModel: { CurrentTextValue: 'Broken' } };
    const unrated = { Description: 'Ford Model T', RegistrationYear: '1925', CarMake: { CurrentTextValue: 'Ford' }, CarModel: { CurrentTextValue: 'Model T' } };
    await t.services.storage.transaction((tx) =>
      t.services.records.upsertRecords(tx, [
        { dataset: 'CheckUSA', lookupKey: 'BRK1|TX', document: JSON.stringify(broken), source: 'test' },
        { dataset: 'CheckUSA', lookupKey: 'OLD1|TX', document: JSON.stringify(unrated), source: 'test' },
      ], new Date().toISOString()),
    );
    for (const plate of ['BRK1', 'OLD1']) {
      const res = await get(`/api/json.aspx/CheckUSA/${plate}/TX`);
      expect(res.status, plate).toBe(200);
      expect(JSON.parse(res.body), plate).not.toHaveProperty('NhtsaSafetyRatings');
    }
    expect(await credits()).toBe(8);
    const off = await appWith({ NHTSA_RATINGS_BASE_URL: fake.baseUrl });
    const calls = fake.calls;
    expect(JSON.parse((await off.get('/api/json.aspx/VinCheck/1HGCM82633A004352')).body)).not.toHaveProperty('NhtsaSafetyRatings');
    expect(fake.calls).toBe(calls);
  });
});
