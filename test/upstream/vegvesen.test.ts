import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeVegvesen } from '../fakes/fake-vegvesen.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Statens vegvesen (upstream-sources.md §5) behind CheckNorway, through the JSON interface: the
 * app reads VEGVESEN_* from the env given to createTestApp, and only found answers cost a credit.
 */

const KEY = 'svv-key-2b7d9f1a4c6e8a0b';
let svv: FakeVegvesen;
const apps: TestApp[] = [];

/** Timeouts far above any answer of the local fake however busy the machine; the hanging plate's app sets its own. */
const svvEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
  VEGVESEN_API_KEY: KEY, VEGVESEN_BASE_URL: svv.baseUrl, VEGVESEN_TIMEOUT_MS: '10000', VEGVESEN_BUDGET_MS: '20000', VEGVESEN_BREAKER_FAILURES: '100', ...overrides,
});

async function appWith(env: Record<string, string>): Promise<{ get: (path: string) => Promise<{ status: number; body: string; charged: string | undefined }>; credits: () => Promise<number> }> {
  const t = await createTestApp(env);
  apps.push(t);
  const auth = t.basic('alice', await t.account('alice', 10));
  return {
    async get(path) {
      const res = await t.app.inject({ url: path, headers: { authorization: auth } });
      const charged = res.headers['x-credits-charged'];
      return { status: res.statusCode, body: res.body, charged: typeof charged === 'string' ? charged : undefined };
    },
    credits: async () => (await t.services.accounts.show('alice')).credits,
  };
}

beforeAll(async () => {
  svv = await FakeVegvesen.start(KEY);
});
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
});
afterAll(async () => {
  await svv.close();
});

describe('CheckNorway from Statens vegvesen', () => {
  it('maps an electric car as the sample Norway records are: numeric RegistrationYear, VechileIdentificationNumber, EngineSize "0"', async () => {
    const { get, credits } = await appWith(svvEnv());
    const res = await get('/api/json.aspx/CheckNorway/EK 39085');
    expect(res.status).toBe(200);
    expect(res.charged).toBe('1');
    // No ImageUrl: live Norwegian answers carry none (compat-notes "Wire differences" 6).
    expect(JSON.parse(res.body)).toEqual({
      Description: 'VOLKSWAGEN E-GOLF', RegistrationYear: 2017, CarMake: { CurrentTextValue: 'VOLKSWAGEN' }, CarModel: { CurrentTextValue: 'E-GOLF' },
      MakeDescription: 'VOLKSWAGEN', ModelDescription: 'E-GOLF', EngineSize: { CurrentTextValue: '0' }, FuelType: { CurrentTextValue: 'Elektrisk' },
      VechileIdentificationNumber: 'WVWZZZAUZH8950429', Colour: 'Grå', NumberOfSeats: { CurrentTextValue: 5 },
    });
    expect(svv.server.requests.at(-1)?.url).toBe('/enkeltoppslag/kjoretoydata?kjennemerke=EK39085');
    expect(await credits()).toBe(9);
  });

  it('reads the engine from the newer motorOgYtelse layout too', async () => {
    const { get } = await appWith(svvEnv());
    expect(JSON.parse((await get('/api/json.aspx/CheckNorway/DN12345')).body)).toMatchObject({
      Description: 'SKODA OCTAVIA', RegistrationYear: 2019, EngineSize: { CurrentTextValue: '1968' }, FuelType: { CurrentTextValue: 'Diesel' }, Colour: 'Svart',
    });
  });

  it('treats 204, 404 and an empty list as not found, charges nothing, and caches the not-found', async () => {
    const { get, credits } = await appWith(svvEnv());
    for (const plate of ['ZZ99999', 'ER19NFD', 'ER19EMP']) {
      const res = await get(`/api/json.aspx/CheckNorway/${plate}`);
      expect(res.status, plate).toBe(500);
      expect(res.body, plate).toMatch(/Lookup failed/);
    }
    const calls = svv.calls;
    await get('/api/json.aspx/CheckNorway/ZZ99999');
    expect(svv.calls).toBe(calls);
    expect(await credits()).toBe(10);
  });

  it('charges nothing for any failure: 429, 500, 503, a non-JSON 200, a record without a make, a hang, a refused key', async () => {
    const { get, credits } = await appWith(svvEnv());
    for (const plate of ['ER19THR', 'ER19ERR', 'ER19MNT', 'ER19JNK', 'NOMAKE1']) {
      const res = await get(`/api/json.aspx/CheckNorway/${plate}`);
      expect(res.status, plate).toBe(500);
      expect(res.body, plate).toMatch(/temporarily unavailable/);
    }
    expect(await credits()).toBe(10);
    // An app of its own whose source gives up well before the fake's answer that never comes.
    const impatient = await appWith(svvEnv({ VEGVESEN_TIMEOUT_MS: '300', VEGVESEN_BUDGET_MS: '2000' }));
    const hang = await impatient.get('/api/json.aspx/CheckNorway/ER19HNG');
    expect(hang.status).toBe(500);
    expect(hang.body).toMatch(/temporarily unavailable/);
    expect(await impatient.credits()).toBe(10);
    const refused = await appWith(svvEnv({ VEGVESEN_API_KEY: 'wrong-key' }));
    const res = await refused.get('/api/json.aspx/CheckNorway/EK39085');
    expect(res.body).toMatch(/temporarily unavailable/);
    expect(res.body).not.toContain('wrong-key');
    expect(await refused.credits()).toBe(10);
  });

  it('answers a repeated lookup from the cache, for one credit each', async () => {
    const { get, credits } = await appWith(svvEnv());
    await get('/api/json.aspx/CheckNorway/DN12345');
    const calls = svv.calls;
    expect((await get('/api/json.aspx/CheckNorway/DN12345')).status).toBe(200);
    expect(svv.calls).toBe(calls);
    expect(await credits()).toBe(8);
  });

  it('is off without VEGVESEN_API_KEY', async () => {
    const { get } = await appWith({ VEGVESEN_BASE_URL: svv.baseUrl });
    const calls = svv.calls;
    expect((await get('/api/json.aspx/CheckNorway/EK39085')).status).toBe(500);
    expect(svv.calls).toBe(calls);
  });
});
