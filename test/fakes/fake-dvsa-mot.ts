import { randomBytes } from 'node:crypto';
import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake DVSA MOT history API, the new one (upstream-sources.md §2b), with a fake Entra ID token
 * endpoint on the same server:
 * - `POST /{tenant}/oauth2/v2.0/token` (form: grant_type=client_credentials, client_id,
 *   client_secret, scope) -> `{token_type, expires_in, ext_expires_in, access_token}`;
 * - `GET /v1/trade/vehicles/registration/{vrm}` needing `Authorization: Bearer <issued token>`
 *   and `X-API-Key`. Errors answer `{errorCode, errorMessage, requestId}` (the shape §2b suggests
 *   for fakes) with the documented MOTH codes.
 * Plates: the DVLA magic plates reused as triggers (§9.4), and fixtures written from the
 * documented fields.
 */

export const DVSA_TENANT = 'a455b827-244f-4c97-b5b4-ce5d13b4d00c';
export const DVSA_TOKEN_PATH = `/${DVSA_TENANT}/oauth2/v2.0/token`;
export const DVSA_API_PATH = '/v1/trade/vehicles/registration/';

const test = (
  completedDate: string,
  testResult: 'PASSED' | 'FAILED',
  odometerValue: string | null,
  motTestNumber: string,
  defects: Array<{ text: string; type: string; dangerous: boolean }> | undefined,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  completedDate,
  testResult,
  expiryDate: null,
  odometerValue,
  odometerUnit: odometerValue === null ? null : 'MI',
  odometerResultType: odometerValue === null ? 'UNREADABLE' : 'READ',
  motTestNumber,
  dataSource: 'DVSA',
  ...(defects ? { defects } : {}),
  ...extra,
});

/** Vehicle answers by plate. Tests are deliberately not in date order: the adapter sorts. */
export function motVehicles(): Record<string, Record<string, unknown>> {
  return {
    AA19AAA: {
      registration: 'AA19AAA', make: 'FORD', model: 'FOCUS', firstUsedDate: '2019-03-01', fuelType: 'Petrol', primaryColour: 'Blue',
      registrationDate: '2019-03-01', manufactureDate: '2019-02-20', engineSize: '1596', hasOutstandingRecall: 'No',
      motTests: [
        test('2024-05-10T09:00:00.000Z', 'PASSED', '61200', '111111111111', [], { expiryDate: '2025-05-14' }),
        test('2025-05-10T10:12:00.000Z', 'PASSED', '84512', '123456789012', [
          { text: 'Nearside front tyre worn close to legal limit (5.2.3 (e))', type: 'ADVISORY', dangerous: false },
          { text: 'Windscreen chipped (3.2 (a))', type: 'MINOR', dangerous: false },
          { text: 'Offside headlamp aim too high (4.1.2 (a))', type: 'PRS', dangerous: false },
        ], { expiryDate: '2026-05-14' }),
        test('2025-05-09T15:40:00.000Z', 'FAILED', '84510', '123456789011', [
          { text: 'Brake pipe excessively corroded (1.1.11 (c))', type: 'DANGEROUS', dangerous: true },
          { text: 'Offside headlamp aim too high (4.1.2 (a))', type: 'MAJOR', dangerous: false },
          { text: 'Tester note: customer informed', type: 'USER ENTERED', dangerous: false },
        ]),
      ],
    },
    AA19DSL: {
      registration: 'AA19DSL', make: 'VOLKSWAGEN', model: 'GOLF', firstUsedDate: '2019-09-01', fuelType: 'Diesel', primaryColour: 'Grey',
      registrationDate: '2019-09-01', manufactureDate: '2019-08-01', engineSize: '1968', hasOutstandingRecall: 'Unknown',
      // A DVA (Northern Ireland) test: no defects, kilometres.
      motTests: [{ ...test('2025-01-15T12:00:00.000Z', 'PASSED', '120500', '999888777666', undefined, { expiryDate: '2026-01-14' }), odometerUnit: 'KM', dataSource: 'DVA NI' }],
    },
    // A vehicle with no test yet: NewRegVehicleResponse.
    AA19EEE: {
      registration: 'AA19EEE', make: 'TESLA', model: 'MODEL 3', manufactureYear: 2019, fuelType: 'Electric', primaryColour: 'White',
      registrationDate: '2019-06-20', manufactureDate: '2019-05-30', motTestDueDate: '2022-06-19', hasOutstandingRecall: 'No',
    },
    // Ours, as in the DVLA fake: a motorbike, for CheckMotorBikeUK.
    MC19BKE: {
      registration: 'MC19BKE', make: 'TRIUMPH', model: 'STREET TRIPLE RS', firstUsedDate: '2019-05-02', fuelType: 'Petrol', primaryColour: 'Black',
      registrationDate: '2019-05-02', manufactureDate: '2019-04-11', engineSize: '765', hasOutstandingRecall: 'No',
      motTests: [test('2025-04-28T10:00:00.000Z', 'PASSED', '14210', '731846205519', [], { expiryDate: '2026-04-30' })],
    },
    L2WPS: {
      registration: 'L2WPS', make: 'ROVER', model: '214', firstUsedDate: '1994-01-10', fuelType: 'Petrol', primaryColour: 'Red',
      registrationDate: '1994-01-10', manufactureDate: '1993-12-01', engineSize: '1396', hasOutstandingRecall: 'Unavailable',
      motTests: [test('2017-10-31T08:05:09.000Z', 'FAILED', null, '555444333222', [{ text: 'Corrosion (6.1.1)', type: 'FAIL', dangerous: false }])],
    },
  };
}

const mothError = (status: number, errorCode: string, errorMessage: string): FakeResponse => ({
  status,
  json: { errorCode, errorMessage, requestId: randomBytes(8).toString('hex') },
});

/** DVLA's magic error plates, answered with the MOT API's codes (§2b "Errors"). */
export const MOT_ERROR_PLATES: Readonly<Record<string, FakeResponse>> = {
  ER19BAD: mothError(400, 'MOTH-IV-03', 'Invalid VRM'),
  ER19NFD: mothError(404, 'MOTH-NF-01', 'Vehicle not found'),
  ER19THR: mothError(429, 'MOTH-RL-02', 'Too many requests in a short time'),
  ER19ERR: mothError(500, 'MOTH-UN-01', 'Unknown error'),
  ER19MNT: { status: 503, text: 'Service Unavailable' },
};

export interface FakeDvsaOptions {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly apiKey: string;
  readonly scope: string;
  /** expires_in of issued tokens (default 3599). */
  readonly expiresIn?: number;
  /** How an expired or revoked token is refused: 401 MOTH-UA-01 (default) or 403 MOTH-FB-02. */
  readonly expiredTokenStatus?: 401 | 403;
  readonly slowMs?: number;
}

export class FakeDvsaMot {
  /** Tokens the fake accepts; `revokeTokens()` empties it, as if they had expired. */
  private readonly valid = new Set<string>();
  private issued = 0;

  private constructor(
    readonly server: FakeHttpServer,
    readonly options: FakeDvsaOptions,
  ) {}

  static async start(options: FakeDvsaOptions): Promise<FakeDvsaMot> {
    const holder: { fake?: FakeDvsaMot } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeDvsaMot(server, options);
    return holder.fake;
  }

  get tokenUrl(): string {
    return `${this.server.url}${DVSA_TOKEN_PATH}`;
  }

  get baseUrl(): string {
    return `${this.server.url}/v1/trade`;
  }

  /** Token requests received. */
  get tokenCalls(): number {
    return this.server.count(DVSA_TOKEN_PATH);
  }

  /** API requests received. */
  get calls(): number {
    return this.server.count(DVSA_API_PATH);
  }

  /** Every token issued so far, so tests can look for them in logs. */
  readonly tokens: string[] = [];

  /** Makes every issued token invalid, as when they expire at the issuer. */
  revokeTokens(): void {
    this.valid.clear();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    if (req.path === DVSA_TOKEN_PATH) return this.token(req);
    if (req.method === 'GET' && req.path.startsWith(DVSA_API_PATH)) return this.vehicle(req, decodeURIComponent(req.path.slice(DVSA_API_PATH.length)));
    return mothError(404, 'MOTH-NF-02', 'URL not found');
  }

  private token(req: FakeRequest): FakeResponse {
    if (req.method !== 'POST' || !(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return { status: 400, json: { error: 'invalid_request', error_description: 'AADSTS900144: The request body must contain the following parameter: grant_type.' } };
    }
    const form = new URLSearchParams(req.body);
    if (form.get('grant_type') !== 'client_credentials') return { status: 400, json: { error: 'unsupported_grant_type', error_description: 'AADSTS70003: unsupported grant type' } };
    if (form.get('client_id') !== this.options.clientId || form.get('client_secret') !== this.options.clientSecret) {
      // Entra ID repeats the client id in its description; adapters must not repeat either.
      return { status: 401, json: { error: 'invalid_client', error_description: `AADSTS7000215: Invalid client secret provided for app '${form.get('client_id') ?? ''}'.` } };
    }
    if (form.get('scope') !== this.options.scope) return { status: 400, json: { error: 'invalid_scope', error_description: 'AADSTS70011: The provided value for the input parameter scope is not valid.' } };
    this.issued += 1;
    const token = `eyJfake.${this.issued}.${randomBytes(24).toString('base64url')}`;
    this.valid.add(token);
    this.tokens.push(token);
    const expiresIn = this.options.expiresIn ?? 3599;
    return { status: 200, json: { token_type: 'Bearer', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: token } };
  }

  private vehicle(req: FakeRequest, vrm: string): FakeResponse {
    if (req.headers['x-api-key'] !== this.options.apiKey) return mothError(403, 'MOTH-FB-03', 'API key not recognised');
    const auth = req.headers.authorization;
    if (auth === undefined || !auth.startsWith('Bearer ')) return mothError(403, 'MOTH-FB-04', 'Access token missing');
    if (!this.valid.has(auth.slice('Bearer '.length))) {
      return this.options.expiredTokenStatus === 403 ? mothError(403, 'MOTH-FB-02', 'Access token expired') : mothError(401, 'MOTH-UA-01', 'Your authorisation failed');
    }
    if (vrm === 'ER19SLW') return { status: 200, json: { ...motVehicles().AA19AAA, registration: 'ER19SLW' }, delayMs: this.options.slowMs ?? 1500 };
    if (vrm === 'ER19HNG') return { hang: true };
    const failure = MOT_ERROR_PLATES[vrm];
    if (failure) return failure;
    const vehicle = motVehicles()[vrm];
    return vehicle ? { status: 200, json: vehicle } : mothError(404, 'MOTH-NF-01', 'Vehicle not found');
  }
}
