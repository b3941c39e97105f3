import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeNhtsa } from '../fakes/fake-nhtsa.js';
import { FakeNhtsaRecalls } from '../fakes/fake-nhtsa-recalls.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { sharedVinDatabase } from '../vin/shared-vin-database.js';

/**
 * End to end on a real port: CheckRecalledVIN (bespokeapi.asmx, a `string`) answered by the NHTSA
 * Recalls API through the offline VIN decode, and CarSpecifications (reg.asmx, a `DataGrid`)
 * answered by vPIC's Canadian specifications, each source on against its fake. Neither operation
 * has a username, so the XML bindings charge the account of the HTTP Basic credentials (README
 * "Operations without a username"). Caching is off so each test sees the upstream it scripts.
 */

const HONDA = '1HGCM82633A004352'; // 2003 Honda Accord: two campaigns in the fake
const TESLA = '5YJ3E1EA2JF000316'; // 2018 Tesla Model 3: NHTSA lists no campaign
const HONDA_RECALLS = [
  'NHTSA 19V182000: AIR BAGS:FRONTAL:DRIVER SIDE:INFLATOR MODULE: The driver air bag inflator may explode on deployment.',
  'NHTSA 15V320000: AIR BAGS:FRONTAL:PASSENGER SIDE:INFLATOR MODULE: The passenger frontal air bag inflator may rupture due to propellant degradation.',
].join('\n');
const BESPOKE_NS = 'http://Regcheck.org.uk/';
const RECALLS_UNAVAILABLE = 'Recall lookup is temporarily unavailable, please try again later';
const SPECS_UNAVAILABLE = 'Car specifications lookup is temporarily unavailable, please try again later';

let recalls: FakeNhtsaRecalls;
let vpic: FakeNhtsa;
let vinDb: string;
/** The app every test asks, with timeouts far above any answer of the local fakes however busy the machine. */
let served: Served;

/** An app on a real port, and the HTTP Basic credentials of its paying account (alice). */
interface Served {
  readonly t: TestApp;
  readonly base: string;
  readonly auth: string;
}

/** An app with both sources on against their fakes; `overrides` changes their settings. */
async function serve(overrides: Record<string, string> = {}): Promise<Served> {
  const t = await createTestApp({
    VIN_DB_PATH: vinDb,
    NHTSA_RECALLS_ENABLED: 'true',
    NHTSA_RECALLS_BASE_URL: recalls.baseUrl,
    NHTSA_RECALLS_TIMEOUT_MS: '10000',
    NHTSA_RECALLS_BUDGET_MS: '20000',
    NHTSA_RECALLS_BREAKER_FAILURES: '100',
    NHTSA_RECALLS_CACHE_TTL_S: '0',
    NHTSA_RECALLS_NOT_FOUND_TTL_S: '0',
    CANADA_SPECS_ENABLED: 'true',
    CANADA_SPECS_BASE_URL: vpic.baseUrl,
    CANADA_SPECS_TIMEOUT_MS: '10000',
    CANADA_SPECS_BUDGET_MS: '20000',
    CANADA_SPECS_BREAKER_FAILURES: '100',
    CANADA_SPECS_CACHE_TTL_S: '0',
    CANADA_SPECS_NOT_FOUND_TTL_S: '0',
    ...overrides,
  });
  const auth = t.basic('alice', await t.account('alice', 100));
  return { t, auth, base: await t.app.listen({ port: 0, host: '127.0.0.1' }) };
}

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly charged: string | null;
}

async function send(path: string, init: RequestInit = {}, to: Served = served): Promise<Answer> {
  const res = await fetch(`${to.base}${path}`, { ...init, headers: { authorization: to.auth, ...(init.headers as Record<string, string> | undefined) } });
  return { status: res.status, text: await res.text(), charged: res.headers.get('x-credits-charged') };
}

/** CheckRecalledVIN over SOAP 1.1, as a .NET client sends it: no username, credentials in HTTP Basic. */
function soapRecalls(vin: string, to: Served = served): Promise<Answer> {
  const envelope =
    '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">' +
    `<soap:Body><CheckRecalledVIN xmlns="${BESPOKE_NS}"><vin>${vin}</vin></CheckRecalledVIN></soap:Body></soap:Envelope>`;
  return send('/api/bespokeapi.asmx', { method: 'POST', headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${BESPOKE_NS}CheckRecalledVIN"` }, body: envelope }, to);
}

/** The credits and the number of debit rows of the paying account. */
async function account(to: Served = served): Promise<{ credits: number; debits: number }> {
  const credits = (await to.t.services.accounts.show('alice')).credits;
  const debits = (await to.t.services.accounts.usage('alice')).filter((r) => r.kind === 'debit').length;
  return { credits, debits };
}

/** Runs `call` and returns how many credits and debit rows it cost. */
async function cost(call: () => Promise<unknown>, to: Served = served): Promise<{ credits: number; debits: number }> {
  const before = await account(to);
  await call();
  const after = await account(to);
  return { credits: before.credits - after.credits, debits: after.debits - before.debits };
}

beforeAll(async () => {
  vinDb = await sharedVinDatabase();
  recalls = await FakeNhtsaRecalls.start();
  vpic = await FakeNhtsa.start();
  served = await serve();
}, 120_000);
afterAll(async () => {
  await served.t.close();
  await recalls.close();
  await vpic.close();
});
beforeEach(() => {
  recalls.server.reset();
  recalls.failWith = undefined;
  vpic.server.reset();
  vpic.failWith = undefined;
});

describe('CheckRecalledVIN from the NHTSA Recalls API', () => {
  it('answers the campaign lines as a JSON string, asked by the offline decode, for one credit', async () => {
    let res: Answer | undefined;
    expect(await cost(async () => (res = await send(`/api/json.aspx/CheckRecalledVIN/${HONDA}`)))).toEqual({ credits: 1, debits: 1 });
    expect(res).toMatchObject({ status: 200, charged: '1' });
    expect(JSON.parse(res?.text ?? '')).toBe(HONDA_RECALLS);
    expect(recalls.server.requests.map((r) => r.url)).toEqual(['/recalls/recallsByVehicle?make=Honda&model=Accord&modelYear=2003']);
  });

  it('answers the campaign lines as the SOAP 1.1 CheckRecalledVINResult text, charged once to the HTTP Basic account', async () => {
    let res: Answer | undefined;
    expect(await cost(async () => (res = await soapRecalls(HONDA)))).toEqual({ credits: 1, debits: 1 });
    expect(res?.status, res?.text).toBe(200);
    expect(res?.text).toContain(`<CheckRecalledVINResponse xmlns="${BESPOKE_NS}"><CheckRecalledVINResult>${HONDA_RECALLS}</CheckRecalledVINResult></CheckRecalledVINResponse>`);
  });

  it('answers an empty text, free, for a vehicle NHTSA lists no campaign for (the string codec: empty text is no answer)', async () => {
    let json: Answer | undefined;
    let soap: Answer | undefined;
    expect(
      await cost(async () => {
        json = await send(`/api/json.aspx/CheckRecalledVIN/${TESLA}`);
        soap = await soapRecalls(TESLA);
      }),
    ).toEqual({ credits: 0, debits: 0 });
    expect(json).toMatchObject({ status: 200, text: '""', charged: '0' });
    expect(soap?.status).toBe(200);
    expect(soap?.text).toMatch(/<CheckRecalledVINResult ?\/>/);
    expect(recalls.calls).toBe(2);
  });

  it('answers "temporarily unavailable" and charges nothing when NHTSA fails (5xx) or does not answer in time', async () => {
    const answers: Answer[] = [];
    // An app of its own whose recalls source gives up well before the fake's slow answer: only that answer is raced.
    const impatient = await serve({ NHTSA_RECALLS_TIMEOUT_MS: '300', NHTSA_RECALLS_BUDGET_MS: '2000' });
    const spent = await cost(async () => {
      recalls.failWith = 503;
      answers.push(await send(`/api/json.aspx/CheckRecalledVIN/${HONDA}`, {}, impatient));
      answers.push(await soapRecalls(HONDA, impatient));
      recalls.failWith = undefined;
      const slow = { status: 200, json: { Count: 0, Message: 'Results returned successfully', results: [] }, delayMs: 1000 };
      recalls.server.script(slow, slow);
      answers.push(await send(`/api/json.aspx/CheckRecalledVIN/${HONDA}`, {}, impatient));
    }, impatient).finally(() => impatient.t.close());
    expect(spent).toEqual({ credits: 0, debits: 0 });
    const [json5xx, soap5xx, jsonTimeout] = answers;
    expect(json5xx).toMatchObject({ status: 500, text: RECALLS_UNAVAILABLE, charged: null });
    expect(jsonTimeout).toMatchObject({ status: 500, text: RECALLS_UNAVAILABLE, charged: null });
    expect(soap5xx?.status).toBe(500);
    expect(soap5xx?.text).toContain(RECALLS_UNAVAILABLE);
  });
});

describe('CarSpecifications from vPIC Canadian specifications', () => {
  const expectHondaGrid = (grid: { columnNames: string[]; data: string[][]; json: string }): void => {
    expect(grid.columnNames.slice(0, 4)).toEqual(['Make', 'Model', 'MYR', 'OL']);
    expect(grid.columnNames).toHaveLength(18);
    expect(grid.data.map((row) => row.slice(0, 4))).toEqual([
      ['HONDA', 'ACCORD 4DR SEDAN', '11', '494'],
      ['HONDA', 'ACCORD 2DR COUPE', '11', '485'],
    ]);
    expect(JSON.parse(grid.json)).toMatchObject([{ Model: 'ACCORD 4DR SEDAN', CW: '1475' }, { Model: 'ACCORD 2DR COUPE', CW: '1454' }]);
  };

  it('answers the DataGrid (columnNames, data rows, json) over JSON for one credit', async () => {
    let res: Answer | undefined;
    expect(await cost(async () => (res = await send('/api/json.aspx/CarSpecifications/Honda/Accord/2011')))).toEqual({ credits: 1, debits: 1 });
    expect(res).toMatchObject({ status: 200, charged: '1' });
    expectHondaGrid(JSON.parse(res?.text ?? '') as { columnNames: string[]; data: string[][]; json: string });
    expect(vpic.specsCalls).toBe(1);
  });

  it('answers the DataGrid over HTTP GET, charged once to the HTTP Basic account', async () => {
    let res: Answer | undefined;
    expect(await cost(async () => (res = await send('/api/reg.asmx/CarSpecifications?make=Honda&model=Accord&year=2011')))).toEqual({ credits: 1, debits: 1 });
    expect(res?.status, res?.text).toBe(200);
    // The GET binding indents its document; the whitespace between elements carries nothing.
    const text = (res?.text ?? '').replace(/>\s+</g, '><');
    expect(text).toMatch(/^<\?xml[^>]*\?><DataGrid [^>]*xmlns="http:\/\/regcheck.org.uk">/);
    expect(text).toContain('<columnNames><string>Make</string><string>Model</string><string>MYR</string>');
    expect(text).toContain('<data><ArrayOfString><string>HONDA</string><string>ACCORD 4DR SEDAN</string>');
    expect(text).toContain('<ArrayOfString><string>HONDA</string><string>ACCORD 2DR COUPE</string>');
    expect(text).toContain('<json>[{"Make":"HONDA","Model":"ACCORD 4DR SEDAN","MYR":"11","OL":"494"');
  });

  it('is not found, and free, for a model vPIC has no specifications of', async () => {
    let res: Answer | undefined;
    expect(await cost(async () => (res = await send('/api/json.aspx/CarSpecifications/Honda/Civic/2011')))).toEqual({ credits: 0, debits: 0 });
    expect(res).toMatchObject({ status: 500, text: 'Car specifications Lookup failed', charged: null });
    // vPIC was asked and said Count 0: the source's answer, not a source that is off.
    expect(vpic.specsCalls).toBe(1);
  });

  it('answers "temporarily unavailable" and charges nothing when vPIC fails (5xx) or does not answer in time', async () => {
    const answers: Answer[] = [];
    // An app of its own whose specifications source gives up well before the fake's slow answer: only that answer is raced.
    const impatient = await serve({ CANADA_SPECS_TIMEOUT_MS: '300', CANADA_SPECS_BUDGET_MS: '2000' });
    const spent = await cost(async () => {
      vpic.failWith = 500;
      answers.push(await send('/api/json.aspx/CarSpecifications/Honda/Accord/2011', {}, impatient));
      answers.push(await send('/api/reg.asmx/CarSpecifications?make=Honda&model=Accord&year=2011', {}, impatient));
      vpic.failWith = undefined;
      const slow = { status: 200, json: { Count: 0, Results: [] }, delayMs: 1000 };
      vpic.server.script(slow, slow);
      answers.push(await send('/api/json.aspx/CarSpecifications/Honda/Accord/2011', {}, impatient));
    }, impatient).finally(() => impatient.t.close());
    expect(spent).toEqual({ credits: 0, debits: 0 });
    const [json5xx, get5xx, jsonTimeout] = answers;
    expect(json5xx).toMatchObject({ status: 500, text: SPECS_UNAVAILABLE, charged: null });
    expect(jsonTimeout).toMatchObject({ status: 500, text: SPECS_UNAVAILABLE, charged: null });
    expect(get5xx?.status).toBe(500);
    expect(get5xx?.text).toContain(SPECS_UNAVAILABLE);
  });
});
