import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake of CarsXE (commercial-upstreams.md §1, from the vendor's openapi.json as mirrored):
 * `GET /v2/platedecoder?key=&plate=&country=[&state=|&district=]` and `GET /specs?key=&vin=`.
 * Its envelope is CarsXE's: `{success: true, input: {echo, the key included}, ...payload}` and
 * `{success: false, message}` with the documented statuses (400 bad input, 401 key, 402 credit,
 * 403 blocked, 404 no data or a bad state, 429 quota with `usage`, 5xx). Absent fields are ""
 * as real answers have them; unknown parameters (the SDKs' `source=`) are ignored.
 */

export const CARSXE_PLATES = {
  /** The CX-OAS example: California 7XER187, a 2017 Kia Forte LX. */
  us: { plate: '7XER187', country: 'US', state: 'CA' },
  au: { plate: 'ABC123', country: 'AU', state: 'NSW' },
  ca: { plate: 'CKRT482', country: 'CA', state: 'ON' },
  gb: { plate: 'KX19YRD', country: 'GB' },
  /** The AE skeleton: five keys, make_description and model_description among them. */
  ae: { plate: '12345', country: 'AE' },
  /** A plate CarsXE knows little about: "" everywhere but make and model. */
  partial: { plate: 'PART1AL', country: 'US', state: 'TX' },
} as const;

/** Plates (any country) scripting the failures of §1.6. */
export const CARSXE_TRIGGERS = {
  notFound: 'NOTFND1',
  quota: 'QUOTA01',
  noCredit: 'NOCRED1',
  blocked: 'BLOCKD1',
  down: 'DOWN503',
  error: 'ERR0500',
  html: 'HTML502',
  htmlOk: 'HTML200',
  slow: 'SLOWPL1',
} as const;

export const CARSXE_VINS = { bmw: 'WBAFR7C57CC811956', unknown: 'WBA00000000000404', slow: 'WBA0000000000SLW1' } as const;

/** State and province codes the fake accepts per country (anything else: 404 "Invalid state or country code."). */
const REGIONS: Readonly<Record<string, readonly string[]>> = {
  US: ['AL', 'AK', 'AZ', 'AR', 'CA', 'CO', 'CT', 'DE', 'DC', 'FL', 'GA', 'HI', 'ID', 'IL', 'IN', 'IA', 'KS', 'KY', 'LA', 'ME', 'MD', 'MA', 'MI', 'MN', 'MS', 'MO', 'MT', 'NE', 'NV', 'NH', 'NJ', 'NM', 'NY', 'NC', 'ND', 'OH', 'OK', 'OR', 'PA', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VT', 'VA', 'WA', 'WV', 'WI', 'WY'],
  AU: ['NSW', 'VIC', 'QLD', 'SA', 'WA', 'TAS', 'ACT', 'NT'],
  CA: ['AB', 'BC', 'MB', 'NB', 'NL', 'NS', 'NT', 'NU', 'ON', 'PE', 'QC', 'SK', 'YT'],
};

const COMMON_KEYS = ['description', 'make', 'model', 'trim', 'vin', 'year', 'style', 'body_style', 'color', 'engine', 'engine_size', 'fuel_type', 'drive_type', 'transmission', 'assembly', 'registration_year'] as const;

/** The documented common keys, "" where the vehicle has no value. */
function plateBody(values: Partial<Record<(typeof COMMON_KEYS)[number], string>>): Record<string, string> {
  return Object.fromEntries(COMMON_KEYS.map((k) => [k, values[k] ?? '']));
}

const VEHICLES: Readonly<Record<string, Record<string, string>>> = {
  'US|CA|7XER187': plateBody({ description: 'Kia Forte LX', make: 'Kia', model: 'Forte', trim: 'LX', vin: '3KPFK4A78HE103497', style: 'Sedan 4D', year: '2017', assembly: 'Mexico', fuel_type: 'Gasoline', color: 'White', body_style: 'Sedan', engine_size: '2.0L I4 MPI', drive_type: 'FWD', transmission: 'Automatic' }),
  'AU|NSW|ABC123': plateBody({ description: 'TOYOTA COROLLA', make: 'TOYOTA', model: 'COROLLA', vin: 'JTNKB3BE403048217', registration_year: '2019', body_style: 'HATCHBACK', engine_size: '2.0L', fuel_type: 'PETROL', transmission: 'CVT', color: 'WHITE' }),
  'CA|ON|CKRT482': plateBody({ description: 'Honda Civic LX', make: 'Honda', model: 'Civic', trim: 'LX', vin: '2HGFC2F56JH548213', year: '2018', style: 'Sedan 4D', engine_size: '2.0L L4 DOHC 16V', assembly: 'Alliston, Ontario' }),
  'GB||KX19YRD': plateBody({ description: 'FORD FIESTA ZETEC', make: 'FORD', model: 'FIESTA ZETEC', registration_year: '2019', engine_size: '998', fuel_type: 'PETROL', body_style: 'Hatchback', transmission: 'Manual', color: 'BLUE', vin: 'WF0JXXGAHJKE41827' }),
  'US|TX|PART1AL': plateBody({ make: 'Ford', model: 'F-150' }),
};
/** AE answers only its own five keys (the country matrix, §1.3). */
const AE_VEHICLE = { description: 'NISSAN PATROL', make: 'NISSAN', model: 'PATROL', make_description: 'Nissan', model_description: 'Patrol LE Platinum' };

function specsBody(): Record<string, unknown> {
  return {
    attributes: {
      year: '2012', make: 'BMW', model: '5-Series', trim: '535i', style: 'SEDAN 4-DR', type: 'Sedan/Saloon', made_in: 'GERMANY', doors: '4', fuel_type: 'Gasoline',
      engine: '3.0L L6 DOHC 24V', engine_cylinders: '6', transmission: '6-Speed Manual | 8-Speed Automatic', drivetrain: 'RWD', city_mileage: '20 miles/gallon',
      highway_mileage: '30 miles/gallon', curb_weight: '3880', manufacturer_suggested_retail_price: '$51,400 USD', exterior_color: ['Alpine White'], interior_trim: ['Black Dakota Leather'],
    },
    colors: [{ category: 'Exterior', name: 'Alpine White' }],
    equipment: { abs_brakes: 'Std.' },
    warranties: [{ type: 'Basic', miles: '50,000 mile', months: '48 month' }],
    timestamp: '2025-10-01T22:40:36.374Z',
  };
}

const fail = (status: number, message: string, extra: Record<string, unknown> = {}): FakeResponse => ({ status, json: { success: false, message, ...extra } });

export interface FakeCarsxeOptions {
  readonly apiKey: string;
  readonly slowMs?: number;
}

export class FakeCarsxe {
  private constructor(
    readonly server: FakeHttpServer,
    readonly options: FakeCarsxeOptions,
  ) {}

  static async start(options: FakeCarsxeOptions): Promise<FakeCarsxe> {
    const holder: { fake?: FakeCarsxe } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeCarsxe(server, options);
    return holder.fake;
  }

  /** CARSXE_BASE_URL for the service. */
  get baseUrl(): string {
    return this.server.url;
  }

  /** Requests to one path, with one parameter value when given. */
  calls(path: '/v2/platedecoder' | '/specs', param?: readonly [string, string]): number {
    return this.server.requests.filter((r) => r.path === path && (param === undefined || new URLSearchParams(r.url.split('?')[1] ?? '').get(param[0]) === param[1])).length;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    const query = new URLSearchParams(req.url.split('?')[1] ?? '');
    const input = Object.fromEntries(query);
    if (req.method !== 'GET' || (req.path !== '/v2/platedecoder' && req.path !== '/specs')) return fail(404, 'Not Found');
    const key = query.get('key');
    if (key === null || key === '') return fail(401, 'Missing API key');
    if (key !== this.options.apiKey) return fail(401, 'User with this API key was not found or the API key is disabled');
    return req.path === '/specs' ? this.specs(query, input) : this.plate(query, input);
  }

  private plate(query: URLSearchParams, input: Record<string, string>): FakeResponse {
    const plate = (query.get('plate') ?? '').toUpperCase();
    if (plate === '') return fail(400, 'Missing vehicle registration number or license plate number');
    const country = (query.get('country') ?? 'US').toUpperCase();
    const state = (query.get('state') ?? '').toUpperCase();
    const T = CARSXE_TRIGGERS;
    switch (plate) {
      case T.quota:
        return fail(429, 'API limit exceeded for plate_decoder (11/2026). Subscription tier: starter. Current usage: 5000, Limit: 5000.', { usage: { current: 5000, limit: 5000, remaining: 0 } });
      case T.noCredit:
        return fail(402, 'Insufficient credits. Please top up your account.');
      case T.blocked:
        return fail(403, 'This API key has been blocked, please contact support if you believe this is an error.');
      case T.down:
        return fail(503, 'Cannot access the internet at this time');
      case T.error:
        return fail(500, 'Internal server error');
      case T.html:
        return { status: 502, text: '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>', headers: { 'content-type': 'text/html' } };
      case T.htmlOk:
        return { status: 200, text: '<html><body>Please enable cookies.</body></html>', headers: { 'content-type': 'text/html' } };
      default:
        break;
    }
    const regions = REGIONS[country];
    if (regions !== undefined && !regions.includes(state)) return fail(404, 'Invalid state or country code.');
    if (plate === T.slow) return { status: 200, json: { success: true, input, ...plateBody({ description: 'Ford F-150', make: 'Ford', model: 'F-150', year: '2020' }) }, delayMs: this.options.slowMs ?? 150 };
    if (country === 'AE' && plate === CARSXE_PLATES.ae.plate) return { status: 200, json: { success: true, input, ...AE_VEHICLE } };
    const vehicle = VEHICLES[`${country}|${regions !== undefined ? state : ''}|${plate}`];
    if (!vehicle) return fail(404, 'Plate searches for this country have been disabled, or No data found for this plate');
    return { status: 200, json: { success: true, input, ...vehicle } };
  }

  private specs(query: URLSearchParams, input: Record<string, string>): FakeResponse {
    const vin = (query.get('vin') ?? '').toUpperCase();
    if (vin === '') return fail(400, 'Missing vin (vehicle identification number)');
    if (vin.length !== 17) return fail(400, 'Wrong VIN length, must be 17 characters');
    if (vin === CARSXE_VINS.bmw) return { status: 200, json: { success: true, input, ...specsBody() } };
    if (vin === CARSXE_VINS.slow) return { status: 200, json: { success: true, input, ...specsBody() }, delayMs: this.options.slowMs ?? 150 };
    return fail(404, 'No data found for this VIN. Try a deep search by setting deepdata=1 in your request');
  }
}
