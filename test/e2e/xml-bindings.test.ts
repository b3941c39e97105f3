import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const VEHICLE = { Description: 'RENAULT CLIO', CarMake: { CurrentTextValue: 'RENAULT' }, CarModel: { CurrentTextValue: 'CLIO' } };
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';

describe.each(await enginesToTest())('XML bindings on %s', (engine) => {
  let t: TestApp;

  const envelope = (version: string, body: string): string =>
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${version}"><soap:Body>${body}</soap:Body></soap:Envelope>`;
  const checkFrance = (username: string, plate = 'AB123CD'): string =>
    `<CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>${plate}</RegistrationNumber><username>${username}</username></CheckFrance>`;

  /** One CheckFrance lookup over each of the five ways in; returns the HTTP statuses. */
  async function lookupEverywhere(username: string, apiKey?: string): Promise<Record<string, number>> {
    const basic = apiKey === undefined ? {} : { authorization: t.basic(username, apiKey) };
    const results: Record<string, number> = {};
    results.json = (await t.app.inject({ url: '/api/json.aspx/CheckFrance/AB123CD', headers: { authorization: t.basic(username, apiKey ?? 'none') } })).statusCode;
    results.soap11 = (
      await t.app.inject({
        method: 'POST',
        url: '/api/reg.asmx',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/CheckFrance"', ...basic },
        payload: envelope(SOAP11, checkFrance(username)),
      })
    ).statusCode;
    results.soap12 = (
      await t.app.inject({
        method: 'POST',
        url: '/api/reg.asmx',
        headers: { 'content-type': 'application/soap+xml; charset=utf-8; action="http://regcheck.org.uk/CheckFrance"', ...basic },
        payload: envelope(SOAP12, checkFrance(username)),
      })
    ).statusCode;
    results.get = (await t.app.inject({ url: `/api/reg.asmx/CheckFrance?RegistrationNumber=AB123CD&username=${username}`, headers: basic })).statusCode;
    results.post = (
      await t.app.inject({
        method: 'POST',
        url: '/api/reg.asmx/CheckFrance',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic },
        payload: `RegistrationNumber=AB123CD&username=${username}`,
      })
    ).statusCode;
    return results;
  }

  beforeAll(async () => {
    t = await createTestApp({ BASE_URL: 'https://api.example.test' }, undefined, engine);
    await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE }]);
  });
  afterAll(async () => t.close());

  describe('one credit pool across every binding', () => {
    it('spends one account across JSON, SOAP 1.1, SOAP 1.2, GET and POST with an exact balance and ledger', async () => {
      const key = await t.account('everywhere', 12);
      // Two rounds of five lookups, then a third that runs out after two.
      expect(await lookupEverywhere('everywhere', key)).toEqual({ json: 200, soap11: 200, soap12: 200, get: 200, post: 200 });
      expect(await lookupEverywhere('everywhere', key)).toEqual({ json: 200, soap11: 200, soap12: 200, get: 200, post: 200 });
      expect(await lookupEverywhere('everywhere', key)).toEqual({ json: 200, soap11: 200, soap12: 500, get: 500, post: 500 });
      const account = await t.services.accounts.show('everywhere');
      expect(account.credits).toBe(0);
      const rows = await t.services.accounts.usage('everywhere');
      const debits = rows.filter((r) => r.kind === 'debit');
      expect(debits).toHaveLength(12);
      expect(debits.map((r) => r.interface)).toEqual(['json', 'soap11', 'soap12', 'http-get', 'http-post', 'json', 'soap11', 'soap12', 'http-get', 'http-post', 'json', 'soap11']);
      expect(debits.every((r) => r.delta === -1)).toBe(true);
      expect(rows.reduce((sum, r) => sum + r.delta, 0)).toBe(account.credits);
    });

    it('answers "Out of credit" as a fault on SOAP and as plain text on GET/POST', async () => {
      await t.account('empty', 0);
      const soapRes = await t.app.inject({
        method: 'POST',
        url: '/api/reg.asmx',
        headers: { 'content-type': 'text/xml', soapaction: 'http://regcheck.org.uk/CheckFrance' },
        payload: envelope(SOAP11, checkFrance('empty')),
      });
      expect(soapRes.statusCode).toBe(500);
      expect(soapRes.body).toContain('<faultcode>soap:Server</faultcode><faultstring>Server was unable to process request. ---&gt; Out of credit');
      const getRes = await t.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=AB123CD&username=empty' });
      expect(getRes.statusCode).toBe(500);
      expect(getRes.body).toMatch(/^Out of credit.*\r\n$/);
    });
  });

  describe('API key on the XML bindings', () => {
    it('authenticates by username alone by default', async () => {
      await t.account('plain', 10);
      const statuses = await lookupEverywhere('plain');
      expect(statuses).toMatchObject({ soap11: 200, soap12: 200, get: 200, post: 200 });
    });

    it('requires the API key (HTTP Basic) on every binding for an account flagged so', async () => {
      const key = await t.account('strict', 20);
      await t.services.accounts.setRequireApiKey('strict', true);
      expect(await lookupEverywhere('strict')).toEqual({ json: 401, soap11: 500, soap12: 500, get: 500, post: 500 });
      expect(await lookupEverywhere('strict', 'wrong-key')).toEqual({ json: 401, soap11: 500, soap12: 500, get: 500, post: 500 });
      expect(await lookupEverywhere('strict', key)).toEqual({ json: 200, soap11: 200, soap12: 200, get: 200, post: 200 });
      expect((await t.services.accounts.show('strict')).credits).toBe(15);
    });

    it('requires it for every account when REQUIRE_API_KEY is set', async () => {
      const strictApp = await createTestApp({ REQUIRE_API_KEY: 'true' }, undefined, engine);
      try {
        await strictApp.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE }]);
        const key = await strictApp.account('someone', 5);
        const without = await strictApp.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=AB123CD&username=someone' });
        expect(without.statusCode).toBe(500);
        // As for an unknown name: a stranger learns nothing of the account (issue 17 item 10).
        expect(without.body).toBe('Your username is incorrect\r\n');
        const withKey = await strictApp.app.inject({
          url: '/api/reg.asmx/CheckFrance?RegistrationNumber=AB123CD&username=someone',
          headers: { authorization: strictApp.basic('someone', key) },
        });
        expect(withKey.statusCode).toBe(200);
      } finally {
        await strictApp.close();
      }
    });

    it('rejects an unknown username with "Your username is incorrect" and a disabled account without data', async () => {
      const res = await t.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=AB123CD&username=ghost' });
      expect(res.body).toBe('Your username is incorrect\r\n');
      const key = await t.account('off', 5);
      await t.services.accounts.setDisabled('off', true);
      const disabled = await t.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=AB123CD&username=off' });
      expect(disabled.statusCode).toBe(500);
      // Only a caller holding the key learns the state (issue 17 item 10).
      expect(disabled.body).toBe('Your username is incorrect\r\n');
      const keyed = await t.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=AB123CD&username=off', headers: { authorization: t.basic('off', key) } });
      expect(keyed.body).toBe('Account off is disabled\r\n');
      expect((await t.services.accounts.show('off')).credits).toBe(5);
    });
  });

  describe('WSDL, disco and help pages', () => {
    it('serves the WSDL for ?WSDL in any letter case with addresses from BASE_URL', async () => {
      for (const query of ['WSDL', 'wsdl', 'Wsdl']) {
        const res = await t.app.inject({ url: `/api/reg.asmx?${query}` });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('text/xml; charset=utf-8');
        expect(res.body).toContain('<soap:address location="https://api.example.test/api/reg.asmx" />');
        expect(res.body).toContain('<soap12:address location="https://api.example.test/api/reg.asmx" />');
      }
    });

    it('builds WSDL addresses from the request when BASE_URL is not set', async () => {
      const other = await createTestApp({}, undefined, engine);
      try {
        const res = await other.app.inject({ url: '/api/bespokeapi.asmx?wsdl', headers: { host: 'cars.local:9000' } });
        expect(res.body).toContain('<http:address location="http://cars.local:9000/api/bespokeapi.asmx" />');
        expect(res.body).toContain('soapAction="http://Regcheck.org.uk/CheckEuroNCap"');
      } finally {
        await other.close();
      }
    });

    it('uses configured namespaces in the WSDL and on the wire', async () => {
      const other = await createTestApp({ REG_NAMESPACE: 'urn:cars', BASE_URL: 'http://x.test' }, undefined, engine);
      try {
        await other.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE }]);
        await other.account('ns', 2);
        const wsdl = (await other.app.inject({ url: '/api/reg.asmx?wsdl' })).body;
        expect(wsdl).toContain('targetNamespace="urn:cars"');
        expect(wsdl).toContain('soapAction="urn:cars/CheckFrance"');
        const res = await other.app.inject({
          method: 'POST',
          url: '/api/reg.asmx',
          headers: { 'content-type': 'text/xml', soapaction: 'urn:cars/CheckFrance' },
          payload: envelope(SOAP11, '<CheckFrance xmlns="urn:cars"><RegistrationNumber>AB123CD</RegistrationNumber><username>ns</username></CheckFrance>'),
        });
        expect(res.statusCode).toBe(200);
        expect(res.body).toContain('<CheckFranceResponse xmlns="urn:cars">');
      } finally {
        await other.close();
      }
    });

    it('serves disco with the SOAP bindings', async () => {
      const res = await t.app.inject({ url: '/api/reg.asmx?disco' });
      expect(res.headers['content-type']).toBe('text/xml; charset=utf-8');
      expect(res.body).toContain('<contractRef ref="https://api.example.test/api/reg.asmx?wsdl"');
      expect(res.body).toMatch(/binding="q1:CarRegSoap"/);
      expect(res.body).toMatch(/binding="q2:CarRegSoap12"/);
    });

    it('lists the operations with their documentation on the help page', async () => {
      const res = await t.app.inject({ url: '/api/bespokeapi.asmx' });
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const bespoke = ['CheckAustraliaExtensive', 'CheckMotorBikeFrance', 'CheckMotorBikeSpain', 'CheckUSAMinimal', 'CheckItalyMotorbike', 'CheckEuroNCap'];
      // compat-notes "The original's whole contract": bespokeapi.asmx has its own CheckFrance too.
      const wholeContract = ['CheckFrance', 'CheckArgentinaExtensive', 'CheckUSADynamic', 'CheckUSAEdBolian', 'CheckUKMinimal', 'CheckIOM'];
      for (const op of [...bespoke, ...wholeContract]) expect(res.body).toContain(`?op=${op}`);
      expect(res.body).not.toContain('?op=CheckUSA"');
      expect(res.body).not.toContain('?op=CheckRussia');
    });

    it('shows samples for all four bindings and a working HTTP GET form on an operation page', async () => {
      const res = await t.app.inject({ url: '/api/reg.asmx?op=CheckUSA' });
      const html = res.body;
      expect(html).toContain('SOAPAction: &quot;http://regcheck.org.uk/CheckUSA&quot;');
      expect(html).toContain('Content-Type: application/soap+xml; charset=utf-8');
      expect(html).toContain('GET /api/reg.asmx/CheckUSA?RegistrationNumber=string&amp;State=string&amp;username=string');
      expect(html).toContain('&lt;CheckUSAResponse xmlns=&quot;http://regcheck.org.uk&quot;&gt;');
      const form = /<form action="([^"]+)" method="GET">([\s\S]*?)<\/form>/.exec(html);
      expect(form?.[1]).toBe('/api/reg.asmx/CheckUSA');
      const names = [...(form?.[2] ?? '').matchAll(/name="([^"]+)"/g)].map((m) => m[1]);
      expect(names).toEqual(['RegistrationNumber', 'State', 'username']);
      // Submitting the form as a browser would reaches the operation.
      await t.account('former', 1);
      await t.importRecords([{ operation: 'CheckUSA', key: { RegistrationNumber: 'FORM1', State: 'NJ' }, vehicle: VEHICLE }]);
      const submitted = await t.app.inject({ url: `${form?.[1] ?? ''}?RegistrationNumber=FORM1&State=nj&username=former` });
      expect(submitted.statusCode).toBe(200);
      expect(submitted.body).toContain('<Vehicle ');
    });

    it('answers 404 with the operation list for an unknown ?op', async () => {
      const res = await t.app.inject({ url: '/api/reg.asmx?op=Nope' });
      expect(res.statusCode).toBe(404);
      expect(res.body).toContain('No operation named Nope.');
    });
  });
});
