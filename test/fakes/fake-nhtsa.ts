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

  private answer(req: FakeRequest): FakeResponse {
    if (this.failWith !== undefined) return { status: this.failWith, text: 'Service Unavailable' };
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
