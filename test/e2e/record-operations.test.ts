import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { BESPOKE_RECORD_OPERATIONS, REG_RECORD_OPERATIONS } from '../../src/catalogue/record-operations.js';
import type { Clock } from '../../src/shared/clock.js';
import { enginesToTest } from '../helpers/engines.js';
import { jsonPathFor, sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const RECORD_OPERATIONS = [...REG_RECORD_OPERATIONS, ...BESPOKE_RECORD_OPERATIONS];
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const BESPOKE_NS = 'http://Regcheck.org.uk/';
const STOLEN_VIN = 'WF0JXXGAHJKE41827';
const NEEDS_CREDENTIALS = "This operation needs the account's credentials";

/** A clock that stands still: every request falls in the same rate-limit second. */
const frozenClock: Clock = { now: () => new Date('2026-11-25T12:00:00.500Z') };

type Binding = 'soap11' | 'soap12' | 'get' | 'post';
const BINDINGS: readonly Binding[] = ['soap11', 'soap12', 'get', 'post'];

describe.each(await enginesToTest())('operations returning the other record types on %s', (engine) => {
  let t: TestApp;

  /**
   * One CheckStolen call over an XML binding. `username` is sent as an extra parameter on purpose:
   * the operation has none, so it must never choose the account that pays.
   */
  async function checkStolen(binding: Binding, headers: Record<string, string> = {}, vin = STOLEN_VIN): Promise<{ status: number; body: string }> {
    const body = `<CheckStolen xmlns="${BESPOKE_NS}"><vinNumber>${vin}</vinNumber><username>payer</username></CheckStolen>`;
    const envelope = (ns: string) => `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body>${body}</soap:Body></soap:Envelope>`;
    const res = await (binding === 'soap11'
      ? t.app.inject({ method: 'POST', url: '/api/bespokeapi.asmx', headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${BESPOKE_NS}CheckStolen"`, ...headers }, payload: envelope(SOAP11) })
      : binding === 'soap12'
        ? t.app.inject({ method: 'POST', url: '/api/bespokeapi.asmx', headers: { 'content-type': `application/soap+xml; charset=utf-8; action="${BESPOKE_NS}CheckStolen"`, ...headers }, payload: envelope(SOAP12) })
        : binding === 'get'
          ? t.app.inject({ url: `/api/bespokeapi.asmx/CheckStolen?vinNumber=${vin}&username=payer`, headers })
          : t.app.inject({ method: 'POST', url: '/api/bespokeapi.asmx/CheckStolen', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: `vinNumber=${vin}&username=payer` }));
    return { status: res.statusCode, body: res.body };
  }

  async function credits(username: string): Promise<number> {
    return (await t.services.accounts.show(username)).credits;
  }

  async function debits(username: string): Promise<number> {
    return (await t.services.accounts.usage(username)).filter((r) => r.kind === 'debit').length;
  }

  beforeAll(async () => {
    t = await createTestApp({ ANONYMOUS_OPERATIONS: 'CheckIrishTaxi', ANONYMOUS_RATE_PER_SECOND: '2' }, frozenClock, engine);
    const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    expect(summary.committed).toBe(true);
    await t.account('payer', 50);
  });
  afterAll(async () => t.close());

  it('answers every sample record of every new operation over JSON and charges it exactly once', async () => {
    const key = await t.account('jsonuser', 1000);
    const auth = t.basic('jsonuser', key);
    const seen = new Set<string>();
    let charged = 0;
    for (const line of sampleLines().filter((l) => RECORD_OPERATIONS.some((op) => op.name === l.operation))) {
      const op = new Catalogue().find(line.operation);
      if (!op) throw new Error(line.operation);
      // CheckPrice's mileage is a required path segment that is not part of the key.
      const path = jsonPathFor(op, { mileage: '42000', ...line.key });
      const before = await credits('jsonuser');
      const res = await t.app.inject({ url: path, headers: { authorization: auth } });
      expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
      expect(res.headers['x-credits-charged'], path).toBe('1');
      expect(await credits('jsonuser'), path).toBe(before - 1);
      charged += 1;
      seen.add(op.name);
    }
    expect([...seen].sort()).toEqual(RECORD_OPERATIONS.map((op) => op.name).sort());
    expect(await debits('jsonuser')).toBe(charged);
  });

  it('answers JSON bodies of each record type as the docs describe them', async () => {
    const auth = t.basic('shapes', await t.account('shapes', 100));
    const json = async (path: string): Promise<unknown> => (await t.app.inject({ url: path, headers: { authorization: auth } })).json();
    expect(await json('/api/json.aspx/CheckPrice/KX19YRD/42000')).toEqual({ Description: '2019 Ford Fiesta Zetec 998cc, average condition', Price: 9475 });
    expect(await json('/api/json.aspx/IsInsured/WP16NHF')).toEqual({ Insured: false, VehicleDetails: 'VOLKSWAGEN GOLF, grey, 2016' });
    expect(await json('/api/json.aspx/CheckRecalledVIN/5YJ3E1EA0KF317254')).toBe('No open recalls found for this VIN.');
    const grid = (await json('/api/json.aspx/CarSpecifications/honda/civic/2019')) as { json: string; columnNames: string[]; data: string[][] };
    expect(grid.columnNames).toEqual(['Specification', 'Value']);
    expect(JSON.parse(grid.json)).toContainEqual({ Specification: 'Body style', Value: 'Sedan' });
  });

  it('answers CheckStolen for a VIN not reported stolen with an empty list, free', async () => {
    const key = await t.account('clean', 5);
    const res = await t.app.inject({ url: '/api/json.aspx/CheckStolen/JH4KA7650MC012343', headers: { authorization: t.basic('clean', key) } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
    expect(res.headers['x-credits-charged']).toBe('0');
    expect(await credits('clean')).toBe(5);
  });

  it('refuses a bad CheckPrice mileage with the ASMX conversion error, at no cost', async () => {
    await t.account('miles', 5);
    const res = await t.app.inject({ url: '/api/bespokeapi.asmx/CheckPrice?RegistrationNumber=KX19YRD&mileage=lots&username=miles' });
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe('Cannot convert lots to System.Int32.\r\n');
    expect(await credits('miles')).toBe(5);
  });

  describe.each(BINDINGS)('without a username, over %s', (binding) => {
    it('charges the account of the HTTP Basic credentials once, never the account named by a username parameter', async () => {
      const key = await t.account(`basic-${binding}`, 3);
      const payerBefore = await credits('payer');
      const res = await checkStolen(binding, { authorization: t.basic(`basic-${binding}`, key) });
      expect(res.status, res.body).toBe(200);
      expect(res.body).toContain('<Name>Status</Name>');
      expect(await credits(`basic-${binding}`)).toBe(2);
      expect(await debits(`basic-${binding}`)).toBe(1);
      expect(await credits('payer')).toBe(payerBefore);
    });

    it('refuses a call without credentials to an operation not open to anonymous callers, spending no account', async () => {
      const payerBefore = await credits('payer');
      const res = await checkStolen(binding);
      expect(res.status).toBe(500);
      expect(res.body).toContain(NEEDS_CREDENTIALS);
      if (binding.startsWith('soap')) expect(res.body).toMatch(/soap:(Client|Sender)/);
      expect(await credits('payer')).toBe(payerBefore);
      expect(await debits('payer')).toBe(0);
    });

    it('refuses wrong credentials rather than answering anonymously, even where anonymous use is allowed', async () => {
      const key = await t.account(`wrong-${binding}`, 3);
      const wrong = t.basic(`wrong-${binding}`, `${key}x`);
      expect((await checkStolen(binding, { authorization: wrong })).body).toContain('Invalid username or API key');
      const taxi = await t.app.inject({ url: '/api/bespokeapi.asmx/CheckIrishTaxi?regNumber=191-D-48213', headers: { authorization: wrong } });
      expect(taxi.statusCode).toBe(500);
      expect(taxi.body).toContain('Invalid username or API key');
      const garbled = await t.app.inject({ url: '/api/bespokeapi.asmx/CheckIrishTaxi?regNumber=191-D-48213', headers: { authorization: 'Basic !!!' } });
      expect(garbled.statusCode).toBe(500);
      expect(await credits(`wrong-${binding}`)).toBe(3);
    });
  });

  it('answers an operation the operator opened to anonymous callers free, rate-limited per client address', async () => {
    const payerBefore = await credits('payer');
    const call = () => t.app.inject({ url: '/api/bespokeapi.asmx/CheckIrishTaxi?regNumber=201-C-9174&username=payer', remoteAddress: '198.51.100.7' });
    const first = await call();
    expect(first.statusCode, first.body).toBe(200);
    expect(first.body).toContain('<LicenceNumber>SPSV-019374</LicenceNumber>');
    expect((await call()).statusCode).toBe(200);
    // ANONYMOUS_RATE_PER_SECOND=2 and the clock stands still: the third is over the limit.
    const third = await call();
    expect(third.statusCode).toBe(500);
    expect(third.body).toContain('anonymous callers may make 2 requests per second');
    expect(third.headers['retry-after']).toBe('1');
    // Another address has its own count.
    const other = await t.app.inject({ url: '/api/bespokeapi.asmx/CheckIrishTaxi?regNumber=201-C-9174', remoteAddress: '198.51.100.8' });
    expect(other.statusCode).toBe(200);
    expect(await credits('payer')).toBe(payerBefore);
    expect(await debits('payer')).toBe(0);
  });

  it('keeps requiring credentials on JSON, even for an operation open to anonymous callers', async () => {
    const res = await t.app.inject({ url: '/api/json.aspx/CheckIrishTaxi/191-D-48213' });
    expect(res.statusCode).toBe(401);
  });
});
