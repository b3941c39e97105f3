import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { imagePath } from '../../src/results/image-url.js';
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';
import { sharedVinDatabase } from './shared-vin-database.js';

/**
 * VinCheck end to end over the JSON interface (and one XML binding). The provider reads
 * VIN_DECODER and VIN_DB_PATH from the process environment when the services are built
 * (src/services.ts), so each app is built with them stubbed, pointing at the shared copy.
 */
async function appWith(env: Record<string, string>): Promise<TestApp> {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    return await createTestApp();
  } finally {
    vi.unstubAllEnvs();
  }
}

let databasePath: string;
beforeAll(async () => {
  databasePath = await sharedVinDatabase();
});

describe('VinCheck with offline decoding on (the default)', () => {
  let t: TestApp;
  let auth: string;
  const credits = async (): Promise<number> => (await t.services.accounts.show('vin')).credits;
  const get = (vin: string) => t.app.inject({ url: `/api/json.aspx/VinCheck/${vin}`, headers: { authorization: auth } });

  beforeAll(async () => {
    t = await appWith({ VIN_DB_PATH: databasePath });
    auth = t.basic('vin', await t.account('vin', 100));
  });
  afterAll(async () => t.close());

  it('returns the decoded vehicleJson with an ImageUrl, and costs 1 credit', async () => {
    const before = await credits();
    const res = await get('1HGCM82633A004352');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const doc = res.json<Record<string, unknown>>();
    expect(doc).toMatchObject({
      Description: '2003 Honda Accord',
      RegistrationYear: '2003',
      CarMake: { CurrentTextValue: 'Honda' },
      CarModel: { CurrentTextValue: 'Accord' },
      VechileIdentificationNumber: '1HGCM82633A004352',
    });
    expect(doc.ImageUrl).toBe(`http://localhost:80${imagePath('Honda Accord')}`);
    expect(await credits()).toBe(before - 1);
  });

  it('normalises the VIN as typed (lower case, spaces) before decoding', async () => {
    const res = await get('1hgcm826%2033a004352');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Record<string, unknown>>().VechileIdentificationNumber).toBe('1HGCM82633A004352');
  });

  it('answers a European VIN with what the VIN itself tells, and charges for it', async () => {
    const before = await credits();
    const res = await get('WVWZZZ1KZ6W000001');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ Description: '2006 Volkswagen', CarMake: { CurrentTextValue: 'Volkswagen' }, PlantCountry: 'Germany' });
    expect(await credits()).toBe(before - 1);
  });

  it('rejects a North American VIN with a wrong check digit with a clear 500, and costs nothing', async () => {
    const before = await credits();
    const res = await get('5YJ3E1EA7JF000316');
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/^VinCheck: Vin check digit is wrong: expected 2 at position 9, found 7/);
    expect(await credits()).toBe(before);
  });

  it('reports a VIN no source can decode as "Lookup failed", and costs nothing', async () => {
    const before = await credits();
    const res = await get('ZZZ12345678901234');
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe('VIN Lookup failed');
    expect(await credits()).toBe(before);
  });

  it('lets an imported VinCheck record win over the decoder', async () => {
    await t.importRecords([{ operation: 'VinCheck', key: { Vin: '2T1BURHE0JC014702' }, vehicle: { Description: 'Imported Corolla', CarMake: { CurrentTextValue: 'Toyota' } } }]);
    const res = await get('2T1BURHE0JC014702');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ Description: 'Imported Corolla' });
    expect(res.json()).not.toHaveProperty('RegistrationYear');
  });

  it('answers on the XML bindings too, with vehicleData derived from the decode', async () => {
    const res = await t.app.inject({ url: '/api/reg.asmx/VinCheck?Vin=5YJ3E1EA2JF000316&username=vin' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('2018 Tesla Model 3');
    // GET/POST answers hold only what the record has: no CurrentValue the decode has none for (compat-notes 4).
    expect(res.body).toMatch(/<CarMake>\s*<CurrentTextValue>Tesla<\/CurrentTextValue>\s*<\/CarMake>/);
  });
});

describe('VinCheck with offline decoding off or not installed', () => {
  it('VIN_DECODER=off: only imported records answer; a decodable VIN is "Lookup failed" and free', async () => {
    const t = await appWith({ VIN_DECODER: 'off', VIN_DB_PATH: databasePath });
    try {
      const auth = t.basic('off', await t.account('off', 10));
      await t.importRecords([{ operation: 'VinCheck', key: { Vin: '2T1BURHE0JC014702' }, vehicle: { Description: 'Imported Corolla' } }]);
      const decodable = await t.app.inject({ url: '/api/json.aspx/VinCheck/1HGCM82633A004352', headers: { authorization: auth } });
      expect(decodable.statusCode).toBe(500);
      expect(decodable.body).toMatch(/^VIN Lookup failed/);
      const imported = await t.app.inject({ url: '/api/json.aspx/VinCheck/2T1BURHE0JC014702', headers: { authorization: auth } });
      expect(imported.statusCode).toBe(200);
      expect((await t.services.accounts.show('off')).credits).toBe(9);
    } finally {
      await t.close();
    }
  });

  it('without an installed database: "temporarily unavailable", free, and nothing is unpacked on the request', async () => {
    const dir = tempDir();
    const missing = join(dir.path, 'vin', 'vpic.sqlite');
    const t = await appWith({ VIN_DB_PATH: missing });
    try {
      const auth = t.basic('none', await t.account('none', 10));
      const res = await t.app.inject({ url: '/api/json.aspx/VinCheck/1HGCM82633A004352', headers: { authorization: auth } });
      expect(res.statusCode).toBe(500);
      expect(res.body).toBe('VIN lookup is temporarily unavailable, please try again later');
      expect((await t.services.accounts.show('none')).credits).toBe(10);
      expect(existsSync(missing)).toBe(false);
    } finally {
      await t.close();
      dir.remove();
    }
  });

  it('refuses to build with a VIN_DECODER that is neither on nor off', async () => {
    await expect(appWith({ VIN_DECODER: 'maybe' })).rejects.toThrow('VIN_DECODER must be on or off (got "maybe")');
  });
});
