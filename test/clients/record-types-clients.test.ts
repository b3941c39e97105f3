import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as soap from 'soap';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Real SOAP clients built from the WSDL we serve call one operation of each record type of the
 * original (issue 15 section 2) and read typed values. Operations without a username send HTTP
 * Basic, as README "Operations without a username" documents.
 */

const run = promisify(execFile);
const DEBIAN_PYTHON = '/usr/bin/python3';
const ZEEP_SCRIPT = new URL('./zeep_records.py', import.meta.url).pathname;
const PHP_SCRIPT = new URL('./php_records.php', import.meta.url).pathname;

/** Calls a WSDL-generated method of the soap client (its methods exist only at run time). */
async function call<T>(client: soap.Client, method: string, args: Record<string, unknown>): Promise<T> {
  const fn: unknown = client[`${method}Async`];
  if (typeof fn !== 'function') throw new Error(`the WSDL has no ${method}`);
  const [result] = (await (fn as (a: Record<string, unknown>) => Promise<unknown[]>).call(client, args)) as [T];
  return result;
}

/** The first sample key of an operation, its values as text. */
function key(operation: string): Record<string, string> {
  const line = sampleLines().find((l) => l.operation === operation && l.key);
  if (!line?.key) throw new Error(`no sample for ${operation}`);
  // Keys may hold numbers (CarSpecifications' year), though SampleLine types them as text.
  return Object.fromEntries(Object.entries(line.key as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
}

const SCENARIO = {
  pricePlate: key('CheckPrice').RegistrationNumber,
  insuredPlate: key('IsInsured').regNumber,
  italyPlate: key('CheckInsuranceStatusItaly').regNumber,
  portugalPlate: key('CheckInsuranceStatusPortugal').regNumber,
  stolenVin: key('CheckStolen').vinNumber,
  // Not in the sample: the empty list.
  cleanVin: 'JH4KA7650MC012343',
  recallVin: key('CheckRecalledVIN').vin,
  frenchPlate: key('CheckAlternativeVersionsFrance').RegNumber,
  irishPlate: key('CheckIrishTaxi').regNumber,
  londonPlate: key('CheckLondonTaxi').regNumber,
  make: key('CarSpecifications').make,
  model: key('CarSpecifications').model,
  year: key('CarSpecifications').year,
  wheelMake: key('WheelSize').make,
  wheelModel: key('WheelSize').model,
  wheelYear: key('WheelSize').year,
};

let t: TestApp;
let base: string;
let apiKey: string;

beforeAll(async () => {
  t = await createTestApp();
  const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
  expect(summary.committed).toBe(true);
  apiKey = await t.account('records', 1000);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t.close());

describe('the soap npm client built from our ?WSDL', () => {
  it('reads every record type of the original with its XML types', async () => {
    const bespoke = await soap.createClientAsync(`${base}/api/bespokeapi.asmx?wsdl`);
    bespoke.setSecurity(new soap.BasicAuthSecurity('records', apiKey));
    const reg = await soap.createClientAsync(`${base}/api/reg.asmx?wsdl`);
    reg.setSecurity(new soap.BasicAuthSecurity('records', apiKey));
    const debits = async (): Promise<number> => (await t.services.accounts.usage('records')).filter((r) => r.kind === 'debit').length;
    const before = await debits();

    const price = await call<{ CheckPriceResult: { Description: string; Price: number } }>(bespoke, 'CheckPrice', { RegistrationNumber: SCENARIO.pricePlate, mileage: 42000, username: 'records' });
    expect(price.CheckPriceResult.Price).toBe(9475);
    const insured = await call<{ IsInsuredResult: { Insured: boolean } }>(bespoke, 'IsInsured', { regNumber: SCENARIO.insuredPlate, username: 'records' });
    expect(insured.IsInsuredResult.Insured).toBe(true);
    const italy = await call<{ CheckInsuranceStatusItalyResult: { Expiry: Date; IsInsured: boolean; Region: string } }>(bespoke, 'CheckInsuranceStatusItaly', { regNumber: SCENARIO.italyPlate, username: 'records' });
    expect(italy.CheckInsuranceStatusItalyResult.Expiry).toBeInstanceOf(Date);
    expect(italy.CheckInsuranceStatusItalyResult.IsInsured).toBe(true);
    expect(italy.CheckInsuranceStatusItalyResult.Region).toBe('Lombardia');
    const portugal = await call<{ CheckInsuranceStatusPortugalResult: { StartDate: Date; Policy: string } }>(bespoke, 'CheckInsuranceStatusPortugal', { regNumber: SCENARIO.portugalPlate, username: 'records' });
    expect(portugal.CheckInsuranceStatusPortugalResult.StartDate).toBeInstanceOf(Date);
    const stolen = await call<{ CheckStolenResult: { NameValue: Array<{ Name: string; Value: string }> } }>(bespoke, 'CheckStolen', { vinNumber: SCENARIO.stolenVin });
    expect(stolen.CheckStolenResult.NameValue[0]).toEqual({ Name: 'Status', Value: 'Reported stolen' });
    const recall = await call<{ CheckRecalledVINResult: string }>(bespoke, 'CheckRecalledVIN', { vin: SCENARIO.recallVin });
    expect(recall.CheckRecalledVINResult).toMatch(/^1 recall: /);
    const french = await call<{ CheckAlternativeVersionsFranceResult: { versions: { FRVersion: Array<{ marque: string }> } } }>(bespoke, 'CheckAlternativeVersionsFrance', { RegNumber: SCENARIO.frenchPlate });
    expect(french.CheckAlternativeVersionsFranceResult.versions.FRVersion.map((v) => v.marque)).toEqual(['PEUGEOT', 'PEUGEOT']);
    const irish = await call<{ CheckIrishTaxiResult: { LicenceNumber: string } }>(bespoke, 'CheckIrishTaxi', { regNumber: SCENARIO.irishPlate });
    expect(irish.CheckIrishTaxiResult.LicenceNumber).toBe('SPSV-004821');
    const london = await call<{ CheckLondonTaxiResult: { Make: string; License: string } }>(bespoke, 'CheckLondonTaxi', { regNumber: SCENARIO.londonPlate });
    expect(london.CheckLondonTaxiResult).toMatchObject({ Make: 'LEVC', License: 'TX-48213' });
    const grid = await call<{ CarSpecificationsResult: { json: string; columnNames: { string: string[] }; data: { ArrayOfString: Array<{ string: string[] }> } } }>(reg, 'CarSpecifications', { make: SCENARIO.make, model: SCENARIO.model, year: Number(SCENARIO.year) });
    expect(grid.CarSpecificationsResult.columnNames.string).toEqual(['Specification', 'Value']);
    expect(grid.CarSpecificationsResult.data.ArrayOfString[0]?.string).toEqual(['Body style', 'Sedan']);
    const wheels = await call<{ WheelSizeResult: string }>(reg, 'WheelSize', { make: SCENARIO.wheelMake, model: SCENARIO.wheelModel, year: Number(SCENARIO.wheelYear) });
    expect(wheels.WheelSizeResult).toMatch(/^Front 195\/55 R16/);
    // Eleven charged answers, one debit each: the Basic credentials paid for the seven without a username.
    expect((await debits()) - before).toBe(11);
  });
});

async function available(command: string, args: readonly string[]): Promise<boolean> {
  try {
    await run(command, [...args]);
    return true;
  } catch {
    return false;
  }
}

describe('Python zeep (strict) built from our ?WSDL', () => {
  it('reads typed values of every record type of the original', async (ctx) => {
    if (!(await available(DEBIAN_PYTHON, ['-c', 'import zeep']))) {
      if (process.env.CI === 'true') throw new Error(`python3-zeep is not installed for ${DEBIAN_PYTHON}`);
      console.warn(`SKIPPED: python3-zeep is not installed for ${DEBIAN_PYTHON} (apt-get install python3-zeep)`);
      ctx.skip();
    }
    const { stdout } = await run(DEBIAN_PYTHON, [ZEEP_SCRIPT, base, 'records', apiKey, JSON.stringify(SCENARIO)], { timeout: 60_000 });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out.valuation).toEqual({ Description: '2019 Ford Fiesta Zetec 998cc, average condition', Price: 9475, priceType: 'float' });
    expect(out.insured).toEqual({ Insured: true, insuredType: 'bool', VehicleDetails: 'FORD FIESTA ZETEC, blue, 2019' });
    expect(out.italy).toEqual({ Company: 'Assicurazioni Esempio S.p.A.', Expiry: '2027-04-30T00:00:00', expiryType: 'datetime', IsInsured: true, Region: 'Lombardia' });
    expect(out.portugal).toEqual({ Company: 'Seguros Exemplo, S.A.', StartDate: '2026-01-15T00:00:00', EndDate: '2027-01-14T00:00:00', Policy: 'PT-0048213579' });
    expect((out.stolen as unknown[])[0]).toEqual({ Name: 'Status', Value: 'Reported stolen' });
    expect(out.clean).toEqual([]);
    expect(out.recall).toMatch(/^1 recall: 19V-502/);
    expect(out.french).toEqual([
      { marque: 'PEUGEOT', libVersion: '1.2 PURETECH 82 ACTIVE', genre: 'VP' },
      { marque: 'PEUGEOT', libVersion: '1.2 PURETECH 82 ALLURE', genre: 'VP' },
    ]);
    expect(out.irish).toEqual({ LicenceNumber: 'SPSV-004821', Expiry: '2027-05-31', LicenceHolder: 'Example Cabs Ltd' });
    expect(out.london).toEqual({ Make: 'LEVC', Model: 'TX', License: 'TX-48213', Expiry: '2027-02-28' });
    const grid = out.grid as { json: unknown[]; columnNames: string[]; data: string[][] };
    expect(grid.columnNames).toEqual(['Specification', 'Value']);
    expect(grid.data).toHaveLength(grid.json.length);
    expect(out.wheels).toMatch(/^Front 195\/55 R16/);
  });
});

describe('PHP SoapClient built from our ?WSDL', () => {
  it('reads typed values of every record type of the original, and is refused without credentials', async (ctx) => {
    if (!(await available('php', ['-r', 'exit(class_exists("SoapClient") ? 0 : 1);']))) {
      console.warn('SKIPPED: php with the soap extension is not installed (apt-get install php-cli php-soap)');
      ctx.skip();
    }
    const { stdout } = await run('php', [PHP_SCRIPT, base, 'records', apiKey, JSON.stringify(SCENARIO)], { timeout: 60_000 });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    // Typed by the WSDL: s:double a PHP float (9475.0 is encoded by json_encode as 9475), s:boolean a PHP bool.
    expect(out.valuation).toEqual({ Description: '2019 Ford Fiesta Zetec 998cc, average condition', Price: 9475 });
    expect(out.insured).toEqual({ Insured: true, VehicleDetails: 'FORD FIESTA ZETEC, blue, 2019' });
    expect(out.italy).toEqual({ Expiry: '2027-04-30T00:00:00', IsInsured: true, Region: 'Lombardia' });
    expect(out.portugal).toEqual({ StartDate: '2026-01-15T00:00:00', Policy: 'PT-0048213579' });
    expect((out.stolen as unknown[]).length).toBe(4);
    expect(out.recall).toMatch(/^1 recall: /);
    expect(out.french).toEqual([
      { marque: 'PEUGEOT', libVersion: '1.2 PURETECH 82 ACTIVE' },
      { marque: 'PEUGEOT', libVersion: '1.2 PURETECH 82 ALLURE' },
    ]);
    expect(out.irish).toEqual({ LicenceNumber: 'SPSV-004821', LicenceHolder: 'Example Cabs Ltd' });
    expect(out.london).toEqual({ Make: 'LEVC', License: 'TX-48213' });
    expect(out.grid).toEqual({ columnNames: ['Specification', 'Value'], rows: 4, first: ['Body style', 'Sedan'] });
    expect(out.wheels).toMatch(/^Front 195\/55 R16/);
    expect(out.anonymous).toEqual({ message: "Server was unable to process request. ---> This operation needs the account's credentials (HTTP Basic with your username and API key)", code: 'soap:Client' });
  });
});
