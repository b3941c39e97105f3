import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake NHTSA vPIC (upstream-sources.md §4a): `GET /api/vehicles/DecodeVinValues/{vin}?format=json`,
 * the documented envelope with one flat object of strings, `""` for unknown values. An unknown VIN
 * is HTTP 200 with an empty `Make` and a non-zero `ErrorCode` (§9.2). `failWith` makes every
 * answer that status instead. Values are illustrative.
 */

export const NHTSA_BASE_PATH = '/api/vehicles';

/** A full result row with every field empty, as vPIC sends for what it does not know. */
function empty(vin: string): Record<string, string> {
  const fields = ['Make', 'Manufacturer', 'Model', 'ModelYear', 'Series', 'Trim', 'BodyClass', 'Doors', 'DisplacementL', 'EngineCylinders', 'FuelTypePrimary', 'TransmissionStyle', 'DriveType', 'ErrorCode', 'ErrorText'];
  return { ...Object.fromEntries(fields.map((f) => [f, ''])), VIN: vin };
}

export function nhtsaResults(): Record<string, Record<string, string>> {
  return {
    WVWZZZ1KZ6W000001: {
      ...empty('WVWZZZ1KZ6W000001'), Make: 'VOLKSWAGEN', Manufacturer: 'VOLKSWAGEN AG', Model: 'GOLF', ModelYear: '2006', BodyClass: 'Hatchback/Liftback/Notchback',
      Doors: '5', DisplacementL: '1.6', EngineCylinders: '4', FuelTypePrimary: 'Gasoline', ErrorCode: '0', ErrorText: '0 - VIN decoded clean. Check Digit (9th position) is correct',
    },
  };
}

/** The 18 spec names of a Canadian specifications result, in vPIC's order (upstream-sources.md §10.6). */
export const CANADIAN_SPEC_NAMES = ['Make', 'Model', 'MYR', 'OL', 'OW', 'OH', 'WB', 'TWF', 'TWR', 'CW', 'WD', 'A', 'B', 'C', 'D', 'E', 'F', 'G'] as const;

const specs = (values: readonly string[]): { Specs: Array<{ Name: string; Value: string }> } => ({
  Specs: CANADIAN_SPEC_NAMES.map((Name, i) => ({ Name, Value: values[i] ?? '' })),
});

/**
 * Canadian specifications by `YEAR|MAKE`, upper case: two variants with every name, and one with
 * an empty Model as vPIC has (§10.6). Values are illustrative (metric: cm, kg, %).
 */
export function canadianSpecifications(): Record<string, Array<ReturnType<typeof specs>>> {
  return {
    '2011|HONDA': [
      specs(['HONDA', 'ACCORD 4DR SEDAN', '11', '494', '185', '148', '280', '158', '158', '1475', '60/40', '212', '123', '45', '52', '141', '95', '119']),
      specs(['HONDA', '', '11', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '']),
      specs(['HONDA', 'ACCORD 2DR COUPE', '11', '485', '185', '143', '274', '158', '158', '1454', '61/39', '205', '', '44', '51', '139', '95', '116']),
    ],
  };
}

export class FakeNhtsa {
  /** Status every answer has while set (500, 503...). */
  failWith: number | undefined;

  private constructor(readonly server: FakeHttpServer) {}

  static async start(): Promise<FakeNhtsa> {
    const holder: { fake?: FakeNhtsa } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeNhtsa(server);
    return holder.fake;
  }

  /** NHTSA_BASE_URL for the service. */
  get baseUrl(): string {
    return `${this.server.url}${NHTSA_BASE_PATH}`;
  }

  get calls(): number {
    return this.server.count(`${NHTSA_BASE_PATH}/DecodeVinValues/`);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** Canadian specifications requests received. */
  get specsCalls(): number {
    return this.server.count(`${NHTSA_BASE_PATH}/GetCanadianVehicleSpecifications/`);
  }

  private answer(req: FakeRequest): FakeResponse {
    if (this.failWith !== undefined) return { status: this.failWith, text: 'Service Unavailable' };
    if (req.path === `${NHTSA_BASE_PATH}/GetCanadianVehicleSpecifications/`) return canadianAnswer(req);
    const prefix = `${NHTSA_BASE_PATH}/DecodeVinValues/`;
    if (req.method !== 'GET' || !req.path.startsWith(prefix)) return { status: 404, text: 'Not Found' };
    const vin = decodeURIComponent(req.path.slice(prefix.length));
    const known = nhtsaResults()[vin];
    const result = known ?? { ...empty(vin), ErrorCode: '7', ErrorText: '7 - Manufacturer is not registered with NHTSA for sale or importation in the U.S. for use on U.S roads' };
    return {
      status: 200,
      json: {
        Count: 1,
        Message: 'Results returned successfully. NOTE: Any missing decoded values should be interpreted as NHTSA does not have data on the specific variable.',
        SearchCriteria: `VIN(s): ${vin}`,
        Results: [result],
      },
    };
  }
}

/**
 * GetCanadianVehicleSpecifications: query names match case-insensitively, and all four (Year,
 * Make, Model, units) must be present, empty if unused, or vPIC answers its 404 HTML page (§10.6).
 * Nothing on file is a 200 with `Count: 0`.
 */
function canadianAnswer(req: FakeRequest): FakeResponse {
  const query = new Map([...new URL(req.url, 'http://fake').searchParams].map(([k, v]) => [k.toLowerCase(), v.trim()]));
  if (!['year', 'make', 'model', 'units'].every((k) => query.has(k))) {
    return { status: 404, text: '<!DOCTYPE html><html><head><title>404 - File or directory not found.</title></head><body></body></html>', headers: { 'content-type': 'text/html' } };
  }
  // Model values carry body and trim words ("ACCORD 4DR SEDAN"): the model asked for starts them. Rows
  // with an empty Model come along, as vPIC sends them.
  const model = (query.get('model') ?? '').toUpperCase();
  const rows = canadianSpecifications()[`${query.get('year') ?? ''}|${query.get('make') ?? ''}`.toUpperCase()] ?? [];
  const matching = rows.filter((row) => {
    const name = row.Specs.find((s) => s.Name === 'Model')?.Value ?? '';
    return name === '' || name.startsWith(model);
  });
  const results = matching.some((row) => row.Specs.some((s) => s.Name === 'Model' && s.Value !== '')) ? matching : [];
  return {
    status: 200,
    json: { Count: results.length, Message: 'Results returned successfully', SearchCriteria: `Year: ${query.get('year') ?? ''}`, Results: results },
  };
}
