/**
 * Clients generated from the WSDL we serve call the whole contract's new Vehicle lookups (issue 15
 * section 2): node-soap and Python zeep (strict), one new operation of each service at least, and
 * the bespoke CheckFrance that shares its name with reg.asmx's.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as soap from 'soap';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const run = promisify(execFile);
/** Debian's interpreter: python3-zeep is installed for it (`.ci/run` does so), not for pyenv's. */
const DEBIAN_PYTHON = '/usr/bin/python3';
const ZEEP_SCRIPT = new URL('./zeep_vehicle_operations.py', import.meta.url).pathname;
const MINIMAL_FIELDS = ['Description', 'RegistrationYear', 'CarMake', 'CarModel', 'MakeDescription', 'ModelDescription', 'ImageUrl'];

interface VehicleResult {
  vehicleJson: string;
  vehicleData: { CarMake: { CurrentTextValue: string } };
}

/** Calls a WSDL-generated method: the client's methods are made at run time, so its type has them as `any`. */
async function call(client: soap.Client, method: string, args: Record<string, unknown>): Promise<VehicleResult> {
  const fn: unknown = client[`${method}Async`];
  if (typeof fn !== 'function') throw new Error(`the WSDL has no ${method}`);
  const [result] = (await (fn as (a: Record<string, unknown>) => Promise<unknown[]>).call(client, args)) as [Record<string, VehicleResult>];
  const vehicle = result[`${method}Result`];
  if (!vehicle) throw new Error(`no ${method}Result`);
  return vehicle;
}

function key(operation: string): Record<string, string> {
  const line = sampleLines().find((l) => l.operation === operation && l.key);
  if (!line?.key) throw new Error(`no sample for ${operation}`);
  return line.key;
}

let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  const summary = await t.services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
  expect(summary.committed).toBe(true);
  await t.account('client', 1000);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t.close());

describe('the soap npm client built from our ?WSDL', () => {
  it('calls a new reg.asmx country over SOAP 1.1 and reads vehicleJson and vehicleData', async () => {
    const client = await soap.createClientAsync(`${base}/api/reg.asmx?WSDL`);
    const ukraine = await call(client, 'CheckUkraine', { RegistrationNumber: key('CheckUkraine').RegistrationNumber, username: 'client' });
    const json = JSON.parse(ukraine.vehicleJson) as { CarMake: { CurrentTextValue: string }; Department: string };
    expect(ukraine.vehicleData.CarMake.CurrentTextValue).toBe(json.CarMake.CurrentTextValue);
    expect(json.Department).toMatch(/^ТСЦ/);
    expect(client.lastRequestHeaders).toMatchObject({ SOAPAction: '"http://regcheck.org.uk/CheckUkraine"' });
  });

  it('calls the bespoke variants over SOAP 1.2 in the bespoke namespace, CheckFrance included', async () => {
    const client = await soap.createClientAsync(`${base}/api/bespokeapi.asmx?wsdl`, { forceSoap12Headers: true });
    const usa = key('CheckUSADynamic');
    const dynamic = await call(client, 'CheckUSADynamic', { regNumber: usa.regNumber, state: usa.state, username: 'client' });
    expect(dynamic.vehicleData.CarMake.CurrentTextValue).toBe('Honda');
    expect(client.lastRequestHeaders).toMatchObject({ 'Content-Type': expect.stringContaining('action="http://Regcheck.org.uk/CheckUSADynamic"') as unknown });

    const minimal = await call(client, 'CheckUKMinimal', { regNumber: key('CheckUKMinimal').regNumber, username: 'client' });
    expect(Object.keys(JSON.parse(minimal.vehicleJson) as object).every((k) => MINIMAL_FIELDS.includes(k))).toBe(true);

    const france = await call(client, 'CheckFrance', { RegistrationNumber: key('CheckFrance').RegistrationNumber, username: 'client' });
    expect(france.vehicleData.CarMake.CurrentTextValue).toBe('RENAULT');
    expect(client.lastRequest).toContain('http://Regcheck.org.uk/');
  });
});

async function zeepAvailable(): Promise<boolean> {
  try {
    await run(DEBIAN_PYTHON, ['-c', 'import zeep']);
    return true;
  } catch {
    return false;
  }
}

describe('Python zeep (strict) built from our ?WSDL', () => {
  it('calls a new reg.asmx country over SOAP 1.1 and the bespoke variants over SOAP 1.2', async (ctx) => {
    if (!(await zeepAvailable())) {
      if (process.env.CI === 'true') throw new Error(`python3-zeep is not installed for ${DEBIAN_PYTHON}`);
      console.warn(`SKIPPED: python3-zeep is not installed for ${DEBIAN_PYTHON} (apt-get install python3-zeep)`);
      ctx.skip();
    }
    const usa = key('CheckUSAEdBolian');
    const scenario = {
      swissPlate: key('CheckSwitzerland').RegistrationNumber,
      usaPlate: usa.RegistrationNumber,
      usaState: usa.State,
      ukPlate: key('CheckUKMinimal').regNumber,
      francePlate: key('CheckFrance').RegistrationNumber,
    };
    const { stdout } = await run(DEBIAN_PYTHON, [ZEEP_SCRIPT, base, 'client', JSON.stringify(scenario)], { timeout: 60_000 });
    type Read = { vehicleJson: Record<string, unknown> & { CarMake: { CurrentTextValue: string } }; carMake: string };
    const out = JSON.parse(stdout) as { switzerland: Read; edBolian: Read; ukMinimal: Read; bespokeFrance: Read; refused: { message: string; code: string } | null };
    expect(out.switzerland.carMake).toBe('SKODA');
    expect(out.switzerland.vehicleJson.Canton).toBe('ZH');
    expect(out.edBolian.carMake).toBe(out.edBolian.vehicleJson.CarMake.CurrentTextValue);
    expect(Object.keys(out.ukMinimal.vehicleJson).every((k) => MINIMAL_FIELDS.includes(k))).toBe(true);
    expect(out.ukMinimal.carMake).toBeTruthy();
    expect(out.bespokeFrance.carMake).toBe('RENAULT');
    expect(out.refused?.code).toBe('soap:Client');
    expect(out.refused?.message).toMatch(/canton code/);
  });
});
