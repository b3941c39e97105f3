import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeNhtsa } from '../fakes/fake-nhtsa.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { sharedVinDatabase } from '../vin/shared-vin-database.js';

/**
 * NHTSA vPIC online (upstream-sources.md §4a) filling in thin offline VinCheck decodes, through
 * the JSON interface. WVWZZZ1KZ6W000001 decodes offline to the manufacturer only (a European VIN,
 * docs/vin-decoding.md); 1HGCM82633A004352 decodes to the model offline.
 */

let nhtsa: FakeNhtsa;
let vinDb: string;
const apps: TestApp[] = [];

async function appWith(env: Record<string, string>): Promise<{ get: (vin: string) => Promise<{ status: number; body: string }>; credits: () => Promise<number> }> {
  const t = await createTestApp({ VIN_DB_PATH: vinDb, ...env });
  apps.push(t);
  const auth = t.basic('alice', await t.account('alice', 10));
  return {
    async get(vin) {
      const res = await t.app.inject({ url: `/api/json.aspx/VinCheck/${vin}`, headers: { authorization: auth } });
      return { status: res.statusCode, body: res.body };
    },
    credits: async () => (await t.services.accounts.show('alice')).credits,
  };
}

// Timeouts far above any answer of the local fake however busy the machine: no case here is slow.
const online = (): Record<string, string> => ({ NHTSA_ONLINE: 'true', NHTSA_BASE_URL: nhtsa.baseUrl, NHTSA_TIMEOUT_MS: '10000', NHTSA_BUDGET_MS: '20000', NHTSA_BREAKER_FAILURES: '100' });

beforeAll(async () => {
  vinDb = await sharedVinDatabase();
  nhtsa = await FakeNhtsa.start();
}, 120_000);
afterEach(async () => {
  nhtsa.failWith = undefined;
  for (const t of apps.splice(0)) await t.close();
});
afterAll(async () => {
  await nhtsa.close();
});

describe('VinCheck enriched by NHTSA vPIC online', () => {
  it('fills the model of a manufacturer-only decode from vPIC, keeping the offline values, for one credit', async () => {
    const { get, credits } = await appWith(online());
    const res = await get('WVWZZZ1KZ6W000001');
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({
      CarMake: { CurrentTextValue: 'Volkswagen' }, CarModel: { CurrentTextValue: 'Golf' }, NumberOfDoors: { CurrentTextValue: '5' },
      FuelType: { CurrentTextValue: 'Gasoline' }, VechileIdentificationNumber: 'WVWZZZ1KZ6W000001',
    });
    expect(await credits()).toBe(9);
  });

  it('does not ask vPIC when the offline decode has the model, nor when NHTSA_ONLINE is off', async () => {
    const calls = nhtsa.calls;
    const on = await appWith(online());
    expect((await on.get('1HGCM82633A004352')).status).toBe(200);
    expect(nhtsa.calls).toBe(calls);
    const off = await appWith({ NHTSA_BASE_URL: nhtsa.baseUrl });
    const thin = JSON.parse((await off.get('WVWZZZ1KZ6W000001')).body) as Record<string, unknown>;
    expect(thin).not.toHaveProperty('CarModel');
    expect(nhtsa.calls).toBe(calls);
  });

  it('serves the offline decode when vPIC fails or knows nothing, and asks again after a failure', async () => {
    const { get } = await appWith(online());
    nhtsa.failWith = 503;
    const thin = await get('WVWZZZ1KZ6W000001');
    expect(thin.status).toBe(200);
    expect(JSON.parse(thin.body)).not.toHaveProperty('CarModel');
    nhtsa.failWith = undefined;
    expect(JSON.parse((await get('WVWZZZ1KZ6W000001')).body)).toMatchObject({ CarModel: { CurrentTextValue: 'Golf' } });
    // A VIN vPIC does not know (ErrorCode 7, empty Make) keeps the offline answer.
    const calls = nhtsa.calls;
    const unknown = await get('WVWZZZ1KZ7W000002');
    expect(unknown.status, unknown.body).toBe(200);
    expect(JSON.parse(unknown.body)).toMatchObject({ CarMake: { CurrentTextValue: 'Volkswagen' } });
    expect(JSON.parse(unknown.body)).not.toHaveProperty('CarModel');
    expect(nhtsa.calls).toBe(calls + 1);
  });

  it('caches the enriched answer: a repeated lookup does not ask vPIC again', async () => {
    const { get } = await appWith(online());
    await get('WVWZZZ1KZ6W000001');
    const calls = nhtsa.calls;
    expect(JSON.parse((await get('WVWZZZ1KZ6W000001')).body)).toMatchObject({ CarModel: { CurrentTextValue: 'Golf' } });
    expect(nhtsa.calls).toBe(calls);
  });
});
