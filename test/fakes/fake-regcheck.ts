import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake of the original Car Registration API's HTTP GET binding (regcheck.org.uk; issue 24), as
 * ASMX answers it (compat-notes "HTTP GET/POST results", "Errors"; the shapes of the live answers
 * in shared/reference/torqvoice, whose data is not copied: every vehicle here is made up):
 *
 * - `GET /api/reg.asmx/{Op}?...&username=` and `GET /api/bespokeapi.asmx/{Op}?...`: 200
 *   `text/xml; charset=utf-8`, the result document (root named after the result type, in the
 *   service's namespace, 2-space indentation, CRLF, .NET's escapes) for a known query;
 * - an unknown vehicle: HTTP 500 text/plain "{Country} Lookup failed";
 * - a username it does not know: 500 "Your username is incorrect"; an account with no credit left:
 *   500 "Out of credit" (a found answer costs the account one credit, as at the original);
 * - trigger plates: `MAINT200` (a 200 HTML maintenance page), `MAINT503` (the same page with 503),
 *   `SLOW1` (answers after `slowMs`), `ERR500` (an unexpected .NET exception with its stack
 *   trace), `ERR503` (a bare 503);
 * - `GET /ajax/getcredits.aspx?username=`: the account's credits as a plain integer, `0` for a
 *   username it does not know.
 */

/** One answer of the fake: the operation, its GET parameters (without username) and the result document. */
export interface RegcheckFixture {
  readonly operation: string;
  readonly service: 'reg' | 'bespoke';
  /** The result type (the root element's name). */
  readonly resultType: string;
  /** GET parameters in the operation's order, without username. */
  readonly params: ReadonlyArray<readonly [string, string]>;
  /** The result document's content under the root: what the fake writes. */
  readonly content: readonly XmlNode[];
}

/** An element: `[name, text]` or `[name, children]`; `null` text writes `xsi:nil`. */
export type XmlNode = readonly [string, string | null | readonly XmlNode[]];

export const REG_NS = 'http://regcheck.org.uk';
export const BESPOKE_NS = 'http://Regcheck.org.uk/';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/**
 * vehicleJson texts as the original writes them: UK answers on one line with spaces inside the
 * braces, Australian ones indented (Json.NET, CRLF line ends). Each carries what a parse and
 * re-stringify would change (spacing, `\u00e9`, `1.60`, `\/`), so only a byte-for-byte pass
 * through gives them back.
 */
export const UK_VEHICLE_JSON =
  '{ "Description": "ROVER 75 CLUB SE", "RegistrationYear": "2004", "CarMake": { "CurrentTextValue": "ROVER" }, "CarModel": { "CurrentTextValue": "75 CLUB SE" }, ' +
  '"MakeDescription": { "CurrentTextValue": "ROVER" }, "ModelDescription": { "CurrentTextValue": "75 CLUB SE" }, "EngineSize": { "CurrentTextValue": "1796" }, ' +
  '"BodyStyle": { "CurrentTextValue": "Motorbike" }, "FuelType": { "CurrentTextValue": "PETROL" }, "Variant": "", "Colour": "GREEN", ' +
  '"VehicleIdentificationNumber": "SARRJZLBB1M900001", "KType": "", "EngineNumber": "18K4F-X0001", ' +
  `"ImageUrl": "https://www.regcheck.org.uk/image.aspx/@${b64('ROVER 75 CLUB SE|motorcycle')}" }`;

/**
 * The original's CheckUKMinimal answer of the same vehicle as UK_VEHICLE_JSON (its "less data"
 * lookup: six members and the ImageUrl). Check and CheckUKMinimal share a dataset here, so a
 * replayed store must keep each operation's answer apart.
 */
export const UK_MINIMAL_VEHICLE_JSON =
  '{ "Description": "ROVER 75 CLUB SE", "RegistrationYear": "2004", "CarMake": { "CurrentTextValue": "ROVER" }, "CarModel": { "CurrentTextValue": "75 CLUB SE" }, ' +
  '"MakeDescription": { "CurrentTextValue": "ROVER" }, "ModelDescription": { "CurrentTextValue": "75 CLUB SE" }, ' +
  `"ImageUrl": "https://www.regcheck.org.uk/image.aspx/@${b64('ROVER 75 CLUB SE')}" }`;

export const AU_VEHICLE_JSON = [
  '{',
  '  "Description": "HOLDEN Barina 3D Hatchback Caf\\u00e9",',
  '  "RegistrationYear": "2009",',
  '  "CarMake": {',
  '    "CurrentTextValue": "HOLDEN"',
  '  },',
  '  "MakeDescription": {',
  '    "CurrentTextValue": "HOLDEN"',
  '  },',
  '  "ModelDescription": {',
  '    "CurrentTextValue": "Barina 3D Hatchback"',
  '  },',
  '  "BodyStyle": {',
  '    "CurrentTextValue": "Tk 4-Speed Auto & <more>"',
  '  },',
  '  "Colour": "",',
  '  "extended": {',
  '    "engine": {',
  '      "capacity": {',
  '        "value": 1.60,',
  '        "unit": "L"',
  '      }',
  '    }',
  '  },',
  `  "ImageUrl": "http:\\/\\/www.carregistrationapi.com\\/image.aspx\\/@${b64('HOLDEN Barina 3D Hatchback')}",`,
  '  "State": "NSW"',
  '}',
].join('\r\n');

export const IOM_VEHICLE_JSON = '{"Description":"FORD FOCUS","RegistrationYear":2012,"CarMake":{"CurrentTextValue":"FORD"},"NumberOfSeats":{"CurrentValue":5,"CurrentTextValue":"5"}}';

/** One answer per result type (Vehicle four times: both services, both text styles, two operations of one dataset). */
export const REGCHECK_FIXTURES: readonly RegcheckFixture[] = [
  {
    operation: 'Check', service: 'reg', resultType: 'Vehicle', params: [['RegistrationNumber', 'LV04XYZ']],
    content: [
      ['vehicleJson', UK_VEHICLE_JSON],
      ['vehicleData', [
        ['Description', 'ROVER 75 CLUB SE'], ['RegistrationYear', '2004'], ['CarMake', [['CurrentTextValue', 'ROVER']]], ['CarModel', '75 CLUB SE'],
        ['BodyStyle', [['CurrentTextValue', 'Motorbike']]], ['EngineSize', [['CurrentTextValue', '1796']]], ['FuelType', [['CurrentTextValue', 'PETROL']]],
      ]],
    ],
  },
  {
    operation: 'CheckUKMinimal', service: 'bespoke', resultType: 'Vehicle', params: [['regNumber', 'LV04XYZ']],
    content: [
      ['vehicleJson', UK_MINIMAL_VEHICLE_JSON],
      ['vehicleData', [['Description', 'ROVER 75 CLUB SE'], ['RegistrationYear', '2004'], ['CarMake', [['CurrentTextValue', 'ROVER']]], ['CarModel', '75 CLUB SE']]],
    ],
  },
  {
    operation: 'CheckAustralia', service: 'reg', resultType: 'Vehicle', params: [['RegistrationNumber', 'ZZT481'], ['State', 'NSW']],
    content: [
      ['vehicleJson', AU_VEHICLE_JSON],
      ['vehicleData', [
        ['Description', 'HOLDEN Barina 3D Hatchback Café'], ['RegistrationYear', '2009'], ['CarMake', [['CurrentTextValue', 'HOLDEN']]],
        ['CarModel', 'Barina 3D Hatchback'], ['BodyStyle', [['CurrentTextValue', 'Tk 4-Speed Auto & <more>']]],
      ]],
    ],
  },
  {
    operation: 'CheckIOM', service: 'bespoke', resultType: 'Vehicle', params: [['regNumber', 'MAN123']],
    content: [
      ['vehicleJson', IOM_VEHICLE_JSON],
      ['vehicleData', [
        ['Description', 'FORD FOCUS'], ['RegistrationYear', '2012'], ['CarMake', [['CurrentTextValue', 'FORD']]],
        ['NumberOfSeats', [['CurrentValue', '5'], ['CurrentTextValue', '5']]], ['DriverSide', [['CurrentValue', null], ['CurrentTextValue', 'RHD']]],
      ]],
    ],
  },
  {
    operation: 'UKMOT', service: 'reg', resultType: 'UKMOTData', params: [['RegistrationNumber', 'LV04XYZ'], ['Model', '']],
    content: [
      ['Tests', [
        ['UKTest', [['TestDate', '2025.06.02 10:11:12'], ['ExpiryDate', '2026.06.01'], ['Result', 'Pass'], ['Odometer', '98231'], ['TestNumber', '500100200300'], ['FailureReasons', []], ['Advisories', [['string', 'Tyre worn close to limit']]]]],
        ['UKTest', [['TestDate', '2025.06.01 09:00:00'], ['Result', 'Fail'], ['Odometer', '98230'], ['TestNumber', '500100200299'], ['FailureReasons', [['string', 'Headlamp aim too high']]], ['Advisories', []]]],
      ]],
      ['taxDate', '01 Apr 2026'],
      // Json.NET writes the failed test's missing ExpiryDate as null, which the UKTest elements
      // leave out: only the text kept as it came gives these bytes back.
      ['Json', JSON.stringify([
        { TestDate: '2025.06.02 10:11:12', ExpiryDate: '2026.06.01', Result: 'Pass', Odometer: '98231', TestNumber: '500100200300', FailureReasons: [], Advisories: ['Tyre worn close to limit'] },
        { TestDate: '2025.06.01 09:00:00', ExpiryDate: null, Result: 'Fail', Odometer: '98230', TestNumber: '500100200299', FailureReasons: ['Headlamp aim too high'], Advisories: [] },
      ])],
      ['ExtendedInformation', [['ArrayOfString', [['string', 'Make'], ['string', 'ROVER']]], ['ArrayOfString', [['string', 'Colour'], ['string', 'GREEN']]]]],
      ['ExtendedInformationJson', '{ "Make": "ROVER", "Colour": "GREEN" }'],
    ],
  },
  {
    operation: 'CheckEuroNCap', service: 'bespoke', resultType: 'ArrayOfPreAssessmentSearchResult', params: [['Make', 'Skoda'], ['Model', 'Octavia']],
    content: [['PreAssessmentSearchResult', [
      ['AdultOccupantStars', '5'], ['AdultOccupantStrikeThrough', 'false'], ['ChildOccupantStars', '4'], ['ChildOccupantStrikeThrough', 'false'],
      ['PedestrianStars', '3'], ['PedestrianStrikeThrough', 'true'], ['Id', '70001'], ['Title', 'Skoda Octavia 2013'], ['Name', 'Skoda Octavia'],
      ['Make', 'Skoda'], ['Model', 'Octavia'], ['Content', '<p>Made-up rating</p>'], ['Url', 'https://ncap.example/70001'], ['Year', '2013'],
      ['ClassEN', 'Small Family Car'], ['ClassId', '3'], ['ProtocolId', '7'], ['MakeId', '44'], ['ModelId', '901'], ['IsPublished', 'true'],
      ['CreateDate', '2013-05-01T00:00:00'], ['ReleaseDate', '2013-06-01T00:00:00'], ['IsPreProtocol', 'false'], ['IsFleet', 'false'],
      ['SortOrder', '1'], ['LifecycleStatus', '1'], ['FirstPublished', '2013-06-01T08:30:00'],
    ]]],
  },
  { operation: 'CheckPrice', service: 'bespoke', resultType: 'Valuation', params: [['RegistrationNumber', 'LV04XYZ'], ['mileage', '98231']], content: [['Description', 'ROVER 75 CLUB SE'], ['Price', '1450.5']] },
  { operation: 'IsInsured', service: 'bespoke', resultType: 'InsuredStatus', params: [['regNumber', 'LV04XYZ']], content: [['Insured', 'true'], ['VehicleDetails', 'ROVER 75, GREEN']] },
  {
    operation: 'CheckInsuranceStatusItaly', service: 'bespoke', resultType: 'InsuranceDetails', params: [['regNumber', 'AB123CD']],
    content: [['Make', 'FIAT'], ['Model', 'PANDA'], ['Company', 'Assicurazioni Esempio'], ['Expiry', '2026-10-31T00:00:00'], ['IsInsured', 'true']],
  },
  {
    operation: 'CheckInsuranceStatusPortugal', service: 'bespoke', resultType: 'Insurance', params: [['regNumber', 'AA00BB']],
    content: [['Company', 'Seguros Exemplo'], ['StartDate', '2025-01-01T00:00:00'], ['EndDate', '2025-12-31T00:00:00'], ['Policy', 'PT-000123']],
  },
  { operation: 'CheckStolen', service: 'bespoke', resultType: 'ArrayOfNameValue', params: [['vinNumber', 'WVWZZZ1JZXW000001']], content: [['NameValue', [['Name', 'Reported'], ['Value', '2024-02-03']]], ['NameValue', [['Name', 'Force'], ['Value', 'Example Police']]]] },
  { operation: 'CheckRecalledVIN', service: 'bespoke', resultType: 'string', params: [['vin', '1HGCM82633A004352']], content: [] },
  {
    operation: 'CheckAlternativeVersionsFrance', service: 'bespoke', resultType: 'FrenchCar2', params: [['RegNumber', 'AB123CD']],
    content: [['versions', [['FRVersion', [['anneeSortie', '2019'], ['libVersion', 'TCe 100'], ['marque', 'RENAULT'], ['modele', 'CLIO'], ['genre', 'VP']]]]]],
  },
  { operation: 'CheckIrishTaxi', service: 'bespoke', resultType: 'IrishTaxi', params: [['regNumber', '191D12345']], content: [['LicenceNumber', 'SPSV-0001'], ['Expiry', '2026-03-01'], ['LicenceHolder', 'A. Driver']] },
  { operation: 'CheckLondonTaxi', service: 'bespoke', resultType: 'LondonTaxi', params: [['regNumber', 'LT12ABC']], content: [['Make', 'LEVC'], ['Model', 'TX'], ['License', '12345'], ['Expiry', '2026-08-31']] },
  {
    operation: 'CarSpecifications', service: 'reg', resultType: 'DataGrid', params: [['make', 'Honda'], ['model', 'Civic'], ['year', '2018']],
    content: [
      ['json', '[{"Specification":"Length","Value":"4518 mm"}]'],
      ['columnNames', [['string', 'Specification'], ['string', 'Value']]],
      ['data', [['ArrayOfString', [['string', 'Length'], ['string', '4518 mm']]]]],
    ],
  },
];

/** The plain-string answers (the `string` result type's content is text, not elements). */
const STRING_ANSWERS: Readonly<Record<string, string>> = { CheckRecalledVIN: '1 recall: 18V-000 (airbag inflator) & more' };

/** .NET's text escapes (& < > and CR as a character reference). */
const escape = (text: string): string => text.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));

function writeNode(node: XmlNode, depth: number, out: string[]): void {
  const [name, value] = node;
  const pad = `\r\n${'  '.repeat(depth)}`;
  if (value === null) out.push(`${pad}<${name} xsi:nil="true" />`);
  else if (typeof value === 'string') out.push(value === '' ? `${pad}<${name} />` : `${pad}<${name}>${escape(value)}</${name}>`);
  else if (value.length === 0) out.push(`${pad}<${name} />`);
  else {
    out.push(`${pad}<${name}>`);
    for (const c of value) writeNode(c, depth + 1, out);
    out.push(`${pad}</${name}>`);
  }
}

/** The whole GET answer of a fixture, as the original sends it. */
export function answerText(fixture: RegcheckFixture): string {
  const ns = fixture.service === 'reg' ? REG_NS : BESPOKE_NS;
  const open = `<${fixture.resultType} xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="${ns}"`;
  const head = '<?xml version="1.0" encoding="utf-8"?>\r\n';
  const text = STRING_ANSWERS[fixture.operation];
  if (text !== undefined) return `${head}${open}>${escape(text)}</${fixture.resultType}>`;
  const out: string[] = [];
  for (const node of fixture.content) writeNode(node, 1, out);
  return out.length === 0 ? `${head}${open} />` : `${head}${open}>${out.join('')}\r\n</${fixture.resultType}>`;
}

/** The fixture of an operation (the first one, where there are several). */
export function fixtureOf(operation: string): RegcheckFixture {
  // Makes, models and plates are compared ignoring letter case (callers send them in any case).
    const fixture = REGCHECK_FIXTURES.find((f) => f.operation === operation);
  if (!fixture) throw new Error(`no regcheck fixture for ${operation}`);
  return fixture;
}

/** "UK Lookup failed" names the country as the original does; the fake knows a few labels. */
const LABELS: Readonly<Record<string, string>> = { Check: 'UK', CheckUKMinimal: 'UK', CheckAustralia: 'Australia', CheckIOM: 'Isle of Man', UKMOT: 'UK MOT', CheckUSA: 'USA' };

const MAINTENANCE_PAGE =
  '<!DOCTYPE html>\r\n<html><head><title>Down for maintenance</title></head><body><h1>We are upgrading our servers</h1><p>Please try again in a few minutes.</p></body></html>';

export interface FakeRegcheckOptions {
  /** The account the fake knows. */
  readonly username?: string;
  /** Its credits; every found answer costs one. */
  readonly credits?: number;
  /** How long `SLOW1` takes (ms). */
  readonly slowMs?: number;
}

const plain = (status: number, text: string): FakeResponse => ({ status, text, headers: { 'content-type': 'text/plain; charset=utf-8' } });

export class FakeRegcheck {
  /** The account's credits at the fake original; tests may set it. */
  credits: number;
  readonly username: string;

  private constructor(
    readonly server: FakeHttpServer,
    private readonly options: FakeRegcheckOptions,
  ) {
    this.credits = options.credits ?? 1000;
    this.username = options.username ?? 'gateway-operator';
  }

  static async start(options: FakeRegcheckOptions = {}): Promise<FakeRegcheck> {
    const holder: { fake?: FakeRegcheck } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeRegcheck(server, options);
    return holder.fake;
  }

  /** REGCHECK_BASE_URL for the service. */
  get baseUrl(): string {
    return this.server.url;
  }

  /** Lookup calls received (getcredits not counted), of one operation or all. */
  calls(operation?: string): number {
    return this.server.requests.filter((r) => r.path.startsWith('/api/') && (operation === undefined || r.path.endsWith(`/${operation}`))).length;
  }

  /** getcredits calls received. */
  get creditChecks(): number {
    return this.server.count('/ajax/getcredits.aspx');
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    const url = new URL(req.url, 'http://fake');
    if (req.method !== 'GET') return plain(500, 'Request format is invalid.\r\n');
    if (url.pathname.toLowerCase() === '/ajax/getcredits.aspx') {
      return plain(200, url.searchParams.get('username') === this.username ? String(this.credits) : '0');
    }
    const match = /^\/api\/(reg|bespokeapi)\.asmx\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) return { status: 404, text: '<html><body>404 Not Found</body></html>', headers: { 'content-type': 'text/html' } };
    const [, serviceName, operation = ''] = match;
    const service = serviceName === 'reg' ? 'reg' : 'bespoke';
    const first = [...url.searchParams.values()][0] ?? '';
    if (first === 'MAINT200') return { status: 200, text: MAINTENANCE_PAGE, headers: { 'content-type': 'text/html' } };
    if (first === 'MAINT503') return { status: 503, text: MAINTENANCE_PAGE, headers: { 'content-type': 'text/html' } };
    if (first === 'ERR503') return plain(503, 'Service Unavailable');
    if (first === 'ERR500') return plain(500, 'System.NullReferenceException: Object reference not set to an instance of an object.\r\n   at CarReg.Lookup(String registrationNumber)\r\n');
    // Makes, models and plates are compared ignoring letter case (callers send them in any case).
    const fixture = REGCHECK_FIXTURES.find(
      (f) => f.operation === operation && f.service === service && f.params.every(([name, value]) => (url.searchParams.get(name) ?? '').toLowerCase() === value.toLowerCase()),
    );
    const takesUsername = url.searchParams.has('username');
    if (takesUsername && url.searchParams.get('username') !== this.username) return plain(500, 'Your username is incorrect\r\n');
    if (takesUsername && this.credits <= 0) return plain(500, 'Out of credit\r\n');
    const delayMs = first === 'SLOW1' ? (this.options.slowMs ?? 2000) : 0;
    const found = first === 'SLOW1' ? fixtureOf('Check') : fixture;
    if (!found) return { ...plain(500, `${LABELS[operation] ?? operation} Lookup failed\r\n`), delayMs };
    if (takesUsername) this.credits -= 1;
    return { status: 200, text: answerText(found), headers: { 'content-type': 'text/xml; charset=utf-8' }, delayMs };
  }
}
