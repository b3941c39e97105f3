import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { jsonPathFor, sampleLines } from '../helpers/sample-data.js';

const catalogue = new Catalogue();
describe.each(await enginesToTest())('JSON interface on %s', (engine) => {
  let t: TestApp;
  let base: string;
  let auth: string;

  async function get(path: string, headers: Record<string, string> = { authorization: auth }): Promise<Response> {
    return fetch(`${base}${path}`, { headers });
  }

  async function balance(username = 'alice'): Promise<number> {
    return (await t.services.accounts.show(username)).credits;
  }

  beforeAll(async () => {
    t = await createTestApp({}, undefined, engine);
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    expect(summary.committed).toBe(true);
    auth = t.basic('alice', await t.account('alice', 100_000));
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => t.close());

  describe('JSON interface on a real port', () => {
    it('answers every sample record of every operation over its documented path shape', async () => {
      const seen = new Set<string>();
      for (const line of sampleLines()) {
        const op = catalogue.find(line.operation);
        if (!op) throw new Error(line.operation);
        const path = op.name === 'CheckEuroNCap' ? `/api/json.aspx/CheckEuroNCap/${encodeURIComponent(String(line.ncap?.Make))}/${encodeURIComponent(String(line.ncap?.Model))}` : jsonPathFor(op, { mileage: '42000', ...line.key }); // CheckPrice's mileage is a path segment, not a key
        const res = await get(path);
        expect(res.status, `${path}: ${res.status === 200 ? '' : await res.clone().text()}`).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        const body: unknown = await res.json();
        if (line.vehicle) {
          const doc = body as Record<string, unknown>;
          if (op.fieldSubset) {
            for (const k of Object.keys(doc)) expect([...op.fieldSubset, 'ImageUrl']).toContain(k);
          } else {
            const { ImageUrl: _ignored, ...rest } = doc;
            const { ImageUrl: _stored, ...storedRest } = line.vehicle;
            expect(rest, path).toEqual(storedRest);
          }
        }
        seen.add(op.name);
      }
      expect([...seen].sort()).toEqual(catalogue.operations.map((o) => o.name).sort());
    });

    it('returns UKMOT as an object with a Tests array and an ExtendedInformation object', async () => {
      const line = sampleLines().find((l) => l.operation === 'UKMOT');
      const res = await get(`/api/json.aspx/UKMOT/${line?.key?.RegistrationNumber ?? ''}/Ford`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { Tests: unknown[]; ExtendedInformation: Record<string, string> };
      expect(Array.isArray(body.Tests)).toBe(true);
      expect(body.Tests.length).toBeGreaterThan(0);
      expect(typeof body.ExtendedInformation).toBe('object');
    });

    it('returns CheckEuroNCap as a list searched by exact make and contained model, case-insensitively', async () => {
      const all = (await (await get('/api/json.aspx/CheckEuroNCap/volvo')).json()) as Array<{ Make: string; Model: string }>;
      expect(all.length).toBeGreaterThanOrEqual(2);
      expect(all.every((r) => r.Make.toLowerCase() === 'volvo')).toBe(true);
      const xc6 = (await (await get('/api/json.aspx/CheckEuroNCap/VOLVO/xc6')).json()) as Array<{ Model: string }>;
      expect(xc6.map((r) => r.Model)).toEqual(['XC60']);
      const partialMake = (await (await get('/api/json.aspx/CheckEuroNCap/volv')).json()) as unknown[];
      expect(partialMake).toEqual([]);
    });

    it('charges nothing for a CheckEuroNCap search with no results', async () => {
      const before = await balance();
      const res = await get('/api/json.aspx/CheckEuroNCap/Nonexistent/Car');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([]);
      expect(res.headers.get('x-credits-charged')).toBe('0');
      expect(await balance()).toBe(before);
    });

    it('treats + and %20 in path values as spaces and ignores case, spaces and hyphens in plates', async () => {
      const plate = sampleLines().find((l) => l.operation === 'CheckFrance')?.key?.RegistrationNumber ?? '';
      const spaced = `${plate.slice(0, 2).toLowerCase()}+${plate.slice(2, 5)}%20${plate.slice(5)}`;
      expect((await get(`/api/json.aspx/CheckFrance/${spaced}`)).status).toBe(200);
      expect((await get(`/api/json.aspx/CheckFrance/${plate.slice(0, 2)}-${plate.slice(2)}`)).status).toBe(200);
    });

    it('accepts lower-case US states', async () => {
      const line = sampleLines().find((l) => l.operation === 'CheckUSA');
      const res = await get(`/api/json.aspx/CheckUSA/${line?.key?.RegistrationNumber ?? ''}/${(line?.key?.State ?? '').toLowerCase()}`);
      expect(res.status).toBe(200);
    });

    it('takes a German KBA number split over two segments or encoded in one', async () => {
      const kba = sampleLines().find((l) => l.operation === 'CheckGermany')?.key?.KBANumber ?? '';
      const [hsn = '', tsn = ''] = kba.split('/');
      expect((await get(`/api/json.aspx/CheckGermany/${hsn}/${tsn}`)).status).toBe(200);
      expect((await get(`/api/json.aspx/CheckGermany/${hsn}%2F${tsn.toLowerCase()}`)).status).toBe(200);
    });

    it('adds an absolute ImageUrl that the service answers with an image', async () => {
      const line = sampleLines().find((l) => l.operation === 'CheckFrance');
      const body = (await (await get(`/api/json.aspx/CheckFrance/${line?.key?.RegistrationNumber ?? ''}`)).json()) as { ImageUrl: string };
      expect(body.ImageUrl.startsWith(`${base}/image.aspx/@`)).toBe(true);
      const makeModel = Buffer.from(body.ImageUrl.split('/@')[1] ?? '', 'base64').toString('utf8');
      expect(makeModel).toMatch(/RENAULT|PEUGEOT/i);
      const image = await fetch(body.ImageUrl);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toMatch(/^image\//);
      const svg = await image.text();
      expect(svg).toContain('<svg');
      expect(svg).toContain(makeModel.split(' ')[0]);
    });

    it('keeps an ImageUrl the record already has', async () => {
      const line = sampleLines().find((l) => l.vehicle && typeof l.vehicle.ImageUrl === 'string' && l.operation === 'Check');
      const body = (await (await get(`/api/json.aspx/Check/${line?.key?.RegistrationNumber ?? ''}`)).json()) as { ImageUrl: string };
      expect(body.ImageUrl).toBe(line?.vehicle?.ImageUrl);
    });

    it('uses BASE_URL for ImageUrl when configured', async () => {
      const other = await createTestApp({ BASE_URL: 'https://cars.example.com/' }, undefined, engine);
      try {
        await other.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AA123BB' }, vehicle: { CarMake: { CurrentTextValue: 'Citroën' }, CarModel: { CurrentTextValue: 'C3' } } }]);
        const key = await other.account('bob', 5);
        const res = await other.app.inject({ url: '/api/json.aspx/CheckFrance/AA123BB', headers: { authorization: other.basic('bob', key) } });
        const url = (JSON.parse(res.body) as { ImageUrl: string }).ImageUrl;
        expect(url).toBe(`https://cars.example.com/image.aspx/@${Buffer.from('Citroën C3', 'utf8').toString('base64')}`);
      } finally {
        await other.close();
      }
    });
  });

  describe('JSON interface errors', () => {
    const expectPlain500 = async (res: Response, phrase: RegExp) => {
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const text = await res.text();
      expect(text).toMatch(phrase);
      expect(text).not.toMatch(/at .*\.ts:\d+|Error:/);
    };

    it('answers 401 with a Basic challenge for missing, malformed or wrong credentials', async () => {
      for (const headers of [{}, { authorization: 'Bearer x' }, { authorization: t.basic('alice', 'wrong-key') }, { authorization: t.basic('nobody', 'x') }]) {
        const res = await get('/api/json.aspx/CheckFrance/AB123CD', headers);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="vehicle-lookup"/);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
      }
    });

    it('uses the configured realm', async () => {
      const other = await createTestApp({ AUTH_REALM: 'Car Registration API' }, undefined, engine);
      try {
        const res = await other.app.inject({ url: '/api/json.aspx/Check/AB12CDE' });
        expect(res.headers['www-authenticate']).toMatch(/^Basic realm="Car Registration API"/);
      } finally {
        await other.close();
      }
    });

    it('reports unknown and wrongly-cased method names as 500 plain text', async () => {
      await expectPlain500(await get('/api/json.aspx/CheckAtlantis/AB123'), /Unknown method CheckAtlantis/);
      await expectPlain500(await get('/api/json.aspx/checkfrance/AB123'), /case sensitive.*CheckFrance/);
    });

    it('reports a wrong number of path segments with the expected shape', async () => {
      await expectPlain500(await get('/api/json.aspx/CheckUSA/ABC123'), /CheckUSA expects \/CheckUSA\/\{RegistrationNumber\}\/\{State\}/);
      await expectPlain500(await get('/api/json.aspx/CheckFrance/AB/CD'), /CheckFrance expects/);
      await expectPlain500(await get('/api/json.aspx/CheckPakistan/ABC123/PUNJAB'), /\{District\}/);
    });

    it('reports invalid input without charging', async () => {
      const before = await balance();
      await expectPlain500(await get('/api/json.aspx/CheckAustralia/ABC123/NY'), /State must be one of NSW/);
      await expectPlain500(await get('/api/json.aspx/VinCheck/SHORTVIN'), /Vin must be 17 characters/);
      await expectPlain500(await get('/api/json.aspx/CheckAustria/12x'), /NatCode must be a whole number/);
      await expectPlain500(await get('/api/json.aspx/CheckFrance/%E0%A4%A'), /malformed percent-encoding/);
      expect(await balance()).toBe(before);
    });

    it('reports a plate that is not found with "Lookup failed" and charges nothing', async () => {
      const before = await balance();
      await expectPlain500(await get('/api/json.aspx/Check/ZZ99ZZZ'), /^UK Lookup failed/);
      await expectPlain500(await get('/api/json.aspx/UKMOT/ZZ99ZZZ'), /^UK MOT Lookup failed$/);
      expect(await balance()).toBe(before);
    });

    it('reports "Out of credit" and returns no data when the balance is too low', async () => {
      const key = await t.account('broke', 0);
      const plate = sampleLines().find((l) => l.operation === 'CheckFrance')?.key?.RegistrationNumber ?? '';
      const res = await get(`/api/json.aspx/CheckFrance/${plate}`, { authorization: t.basic('broke', key) });
      await expectPlain500(res, /Out of credit/);
    });

    it('refuses a disabled account with 500 and serves it again once enabled', async () => {
      const key = await t.account('paused', 3);
      const plate = sampleLines().find((l) => l.operation === 'CheckFrance')?.key?.RegistrationNumber ?? '';
      await t.services.accounts.setDisabled('paused', true);
      await expectPlain500(await get(`/api/json.aspx/CheckFrance/${plate}`, { authorization: t.basic('paused', key) }), /disabled/);
      expect((await t.services.accounts.show('paused')).credits).toBe(3);
      await t.services.accounts.setDisabled('paused', false);
      expect((await get(`/api/json.aspx/CheckFrance/${plate}`, { authorization: t.basic('paused', key) })).status).toBe(200);
    });

    it('answers an OPTIONS preflight with 204 allowing GET and the Authorization header', async () => {
      const res = await fetch(`${base}/api/json.aspx/CheckFrance/AB123CD`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toMatch(/GET/);
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    });
  });

  describe('getcredits.aspx', () => {
    it('returns the balance as a plain integer and 0 for an unknown user', async () => {
      const res = await fetch(`${base}/ajax/getcredits.aspx?username=alice`);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await res.text()).toBe(String(await balance()));
      expect(await (await fetch(`${base}/ajax/getcredits.aspx?UserName=nobody`)).text()).toBe('0');
      expect(await (await fetch(`${base}/ajax/getcredits.aspx`)).text()).toBe('0');
    });

    it('can be switched off', async () => {
      const other = await createTestApp({ GETCREDITS_ENABLED: 'false' }, undefined, engine);
      try {
        expect((await other.app.inject({ url: '/ajax/getcredits.aspx?username=x' })).statusCode).toBe(404);
      } finally {
        await other.close();
      }
    });
  });
});
