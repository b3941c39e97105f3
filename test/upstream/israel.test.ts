import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { englishMake } from '../../src/providers/israel/israel-vehicle.mapper.js';
import { foldFieldNames, ISRAEL_REGISTERS, plateFilterValue } from '../../src/providers/israel/israel-registers.js';
import { CKAN_PATH, FakeIsrael, RESOURCES } from '../fakes/fake-israel.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * The Ministry of Transport registers on data.gov.il (upstream-sources.md §10.1) behind
 * CheckIsrael, through the JSON interface: the app reads ISRAEL_* from the env given to
 * createTestApp, and only found answers cost a credit.
 */

let gov: FakeIsrael;
const apps: TestApp[] = [];

const ilEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
  ISRAEL_ENABLED: 'true', ISRAEL_BASE_URL: gov.baseUrl, ISRAEL_TIMEOUT_MS: '2000', ISRAEL_BUDGET_MS: '4000', ISRAEL_BREAKER_FAILURES: '100', ...overrides,
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
  gov = await FakeIsrael.start();
});
beforeEach(() => {
  gov.searched.length = 0;
});
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
});
afterAll(async () => {
  await gov.close();
});

describe('CheckIsrael from data.gov.il', () => {
  it('maps the main register and the model catalogue: English make and fuel, VIN without its * separators, for one credit', async () => {
    const { get, credits } = await appWith(ilEnv());
    const res = await get('/api/json.aspx/CheckIsrael/3254433');
    expect(res.status).toBe(200);
    expect(res.charged).toBe('1');
    expect(JSON.parse(res.body)).toEqual({
      Description: 'DACIA SANDERO', RegistrationYear: '2015', CarMake: { CurrentTextValue: 'DACIA' }, CarModel: { CurrentTextValue: 'SANDERO' },
      MakeDescription: 'DACIA', ModelDescription: 'SANDERO', EngineSize: { CurrentTextValue: '898' }, FuelType: { CurrentTextValue: 'Petrol' },
      Colour: 'שחור מטלי', Trim: 'LAUREATE', NumberOfSeats: { CurrentTextValue: 5 }, NumberOfDoors: { CurrentTextValue: '5' },
      VechileIdentificationNumber: 'UU15SDA1CF0078185', EngineCode: 'H4B', FirstOnRoad: '2015-11', LastInspectionDate: '2024-11-14',
      RegistrationValidUntil: '2025-11-28', RegisterStatus: 'Active', ImageUrl: expect.any(String) as unknown,
    });
    expect(await credits()).toBe(9);
    // The plate filter and the catalogue join, each with an explicit limit.
    // The first request of each resource (a retry after a slow answer on a busy machine would repeat it).
    const params = gov.server.requests.map((r) => new URL(r.url, 'http://x').searchParams);
    const first = params.find((p) => p.get('resource_id') === RESOURCES.main);
    const second = params.find((p) => p.get('resource_id') === RESOURCES.models);
    expect(first?.get('resource_id')).toBe(RESOURCES.main);
    expect(JSON.parse(first?.get('filters') ?? '')).toEqual({ mispar_rechev: 3254433 });
    expect(first?.get('limit')).toBe('1');
    expect(second?.get('resource_id')).toBe(RESOURCES.models);
    expect(JSON.parse(second?.get('filters') ?? '')).toEqual({ tozeret_cd: 351, degem_cd: 12, shnat_yitzur: 2015, sug_degem: 'P' });
    expect(second?.get('limit')).toBe('1');
    expect(gov.server.requests.at(-1)?.headers['user-agent']).toMatch(/^Mozilla\/5\.0/);
  });

  it('follows the related registers in the documented order where the main one has no match', async () => {
    const { get } = await appWith(ilEnv());
    const moto = JSON.parse((await get('/api/json.aspx/CheckIsrael/5512345')).body) as Record<string, unknown>;
    expect(moto).toMatchObject({ Description: 'YAMAHA MT-07', EngineSize: { CurrentTextValue: '689' }, RegisterStatus: 'Active' });
    expect(gov.searched).toEqual([RESOURCES.main, RESOURCES.motorcycles]);
  });

  it('finds a plate in the all-text archives by its zero-padded form, and says it was taken off the road', async () => {
    const { get, credits } = await appWith(ilEnv());
    for (const typed of ['4252235', '04252235']) {
      gov.searched.length = 0;
      const res = await get(`/api/json.aspx/CheckIsrael/${typed}`);
      expect(res.status, typed).toBe(200);
      expect(JSON.parse(res.body), typed).toMatchObject({ Description: 'FIAT PUNTO', RegistrationYear: '2004', FirstOnRoad: '2004', RegisterStatus: 'Taken off the road' });
    }
    // The first lookup walked the chain up to the 2010-2016 archive; the second came from the cache (one key for both forms).
    expect(gov.searched).toEqual([]);
    expect(await credits()).toBe(8);
    const archive = gov.server.requests.find((r) => r.url.includes(RESOURCES.archive2010));
    expect(JSON.parse(new URL(archive?.url ?? '', 'http://x').searchParams.get('filters') ?? '')).toEqual({ mispar_rechev: '04252235' });
  });

  it('treats a plate no register has (HTTP 200, no records anywhere) as not found, free, after asking every register once, and caches it', async () => {
    const { get, credits } = await appWith(ilEnv());
    const res = await get('/api/json.aspx/CheckIsrael/1111111');
    expect(res.status).toBe(500);
    expect(res.body).toMatch(/Lookup failed/);
    expect(gov.searched).toEqual(ISRAEL_REGISTERS.map((r) => r.resourceId));
    const calls = gov.calls;
    await get('/api/json.aspx/CheckIsrael/1111111');
    expect(gov.calls).toBe(calls);
    // Letters cannot be an Israeli plate: not found without asking.
    await get('/api/json.aspx/CheckIsrael/AB123');
    expect(gov.calls).toBe(calls);
    expect(await credits()).toBe(10);
  });

  it('charges nothing for an HTML page with HTTP 200, a 403 WAF page, a 500, CKAN success:false, a hang or a record without a make', async () => {
    const { get, credits } = await appWith(ilEnv());
    for (const plate of ['9990001', '9990004', '9990002', '9990005', '9990003', '7000001']) {
      const res = await get(`/api/json.aspx/CheckIsrael/${plate}`);
      expect(res.status, plate).toBe(500);
      expect(res.body, plate).toMatch(/temporarily unavailable/);
      expect(res.body, plate).not.toMatch(/html|בתחזוקה/i);
    }
    expect(await credits()).toBe(10);
  });

  it('counts an HTML maintenance page against the breaker, which then stops asking', async () => {
    const { get } = await appWith(ilEnv({ ISRAEL_BREAKER_FAILURES: '2', ISRAEL_BREAKER_OPEN_S: '86400' }));
    await get('/api/json.aspx/CheckIsrael/9990001');
    await get('/api/json.aspx/CheckIsrael/9990001');
    const calls = gov.calls;
    const res = await get('/api/json.aspx/CheckIsrael/3254433');
    expect(res.body).toMatch(/temporarily unavailable/);
    expect(gov.calls).toBe(calls);
  });

  it('gives a make the table lacks as the register writes it, and names plug-in hybrids', async () => {
    const { get } = await appWith(ilEnv());
    expect(JSON.parse((await get('/api/json.aspx/CheckIsrael/12345678')).body)).toMatchObject({
      CarMake: { CurrentTextValue: 'מותג חדש סין' }, FuelType: { CurrentTextValue: 'Plug-in hybrid (petrol)' }, FirstOnRoad: '2024-03',
    });
  });

  it('is off without ISRAEL_ENABLED', async () => {
    const { get } = await appWith({ ISRAEL_BASE_URL: gov.baseUrl });
    const calls = gov.calls;
    expect((await get('/api/json.aspx/CheckIsrael/3254433')).status).toBe(500);
    expect(gov.calls).toBe(calls);
    expect(gov.server.count(CKAN_PATH)).toBe(calls);
  });
});

describe('Israeli register details', () => {
  it('folds upper-case field names and names with spaces to one spelling', () => {
    expect(foldFieldNames({ 'MISPAR RECHEV': 1, MISPAR_RECHEV: 2, 'SUG TAV': 'x', co2_wltp: 3 })).toEqual({ mispar_rechev: 2, sug_tav: 'x', co2_wltp: 3 });
  });

  it('sends a number to numeric registers and an 8-character zero-padded string to the all-text archives', () => {
    const numeric = ISRAEL_REGISTERS.find((r) => r.plateColumn === 'numeric');
    const text = ISRAEL_REGISTERS.find((r) => r.plateColumn === 'text-padded-8');
    expect(numeric && plateFilterValue(numeric, '0425223')).toBe(425223);
    expect(text && plateFilterValue(text, '4252235')).toBe('04252235');
  });

  it('reads the make from a Hebrew name with the country after it, multi-word makes included', () => {
    expect(englishMake('דאציה רומניה')).toBe('DACIA');
    expect(englishMake('לנד רובר  בריטניה')).toBe('LAND ROVER');
    expect(englishMake('טויוטה')).toBe('TOYOTA');
  });
});
