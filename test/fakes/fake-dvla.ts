import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake DVLA Vehicle Enquiry Service (upstream-sources.md §1): `POST {base}/v1/vehicles` with
 * `x-api-key` and `{"registrationNumber": ...}`, answering the test environment's magic plates
 * ("mock page"). Bodies are illustrative, written from the documented fields.
 */

/** Base path, as in https://driver-vehicle-licensing.api.gov.uk/vehicle-enquiry. */
export const DVLA_BASE_PATH = '/vehicle-enquiry';

/** "<1 YEAR FROM NOW>" on the mock page; the real test environment returns a date one year from today. */
export function oneYearFromNow(now = new Date()): string {
  const d = new Date(Date.UTC(now.getUTCFullYear() + 1, now.getUTCMonth(), now.getUTCDate()));
  return d.toISOString().slice(0, 10);
}

/**
 * The 200 plates of the mock page, plus MC19BKE: a motorbike (L3e, two wheels), which is ours (the
 * mock page has none), for CheckMotorBikeUK.
 */
export function dvlaVehicles(): Record<string, Record<string, unknown>> {
  return {
    MC19BKE: {
      registrationNumber: 'MC19BKE', taxStatus: 'Taxed', taxDueDate: '2026-07-01', motStatus: 'Valid', motExpiryDate: '2026-04-30',
      make: 'TRIUMPH', monthOfFirstRegistration: '2019-05', yearOfManufacture: 2019, engineCapacity: 765, co2Emissions: 117,
      fuelType: 'PETROL', markedForExport: false, colour: 'BLACK', typeApproval: 'L3e', wheelplan: '2 WHEELS', euroStatus: 'EURO 4',
      dateOfLastV5CIssued: '2022-03-18',
    },
    AA19AAA: {
      registrationNumber: 'AA19AAA', taxStatus: 'Taxed', taxDueDate: oneYearFromNow(), motStatus: 'Valid', motExpiryDate: '2026-05-14',
      make: 'FORD', monthOfFirstRegistration: '2019-03', monthOfFirstDvlaRegistration: '2019-03', yearOfManufacture: 2019, engineCapacity: 1596,
      co2Emissions: 139, fuelType: 'PETROL', markedForExport: false, colour: 'BLUE', typeApproval: 'M1', wheelplan: '2 AXLE RIGID BODY',
      revenueWeight: 0, realDrivingEmissions: '1', dateOfLastV5CIssued: '2021-07-09', euroStatus: 'EURO 6', automatedVehicle: false,
    },
    AA19EEE: {
      registrationNumber: 'AA19EEE', taxStatus: 'Taxed', taxDueDate: '2026-06-01', motStatus: 'Valid', motExpiryDate: '2026-06-30',
      make: 'TESLA', monthOfFirstRegistration: '2019-06', yearOfManufacture: 2019, co2Emissions: 0, fuelType: 'ELECTRICITY',
      markedForExport: false, colour: 'WHITE', typeApproval: 'M1', wheelplan: '2 AXLE RIGID BODY', dateOfLastV5CIssued: '2019-06-20',
    },
    AA19PPP: {
      registrationNumber: 'AA19PPP', taxStatus: 'Taxed', taxDueDate: '2026-02-01', make: 'SCANIA', monthOfFirstRegistration: '2019-01',
      yearOfManufacture: 2018, engineCapacity: 12740, fuelType: 'DIESEL', markedForExport: false, colour: 'WHITE', typeApproval: 'N3',
      wheelplan: '3 AXLE RIGID BODY', revenueWeight: 26000, euroStatus: 'EURO 6', dateOfLastV5CIssued: '2022-01-05',
    },
    L2WPS: {
      registrationNumber: 'L2WPS', taxStatus: 'Untaxed', taxDueDate: '2017-11-01', motStatus: 'Not valid', motExpiryDate: '2018-10-31',
      make: 'ROVER', monthOfFirstRegistration: '1994-01', yearOfManufacture: 1993, engineCapacity: 1396, fuelType: 'PETROL',
      markedForExport: false, colour: 'RED', wheelplan: '2 AXLE RIGID BODY', dateOfLastV5CIssued: '2016-04-12',
    },
    AA19SRN: {
      registrationNumber: 'AA19SRN', taxStatus: 'SORN', motStatus: 'No details held by DVLA', make: 'VAUXHALL', monthOfFirstRegistration: '2019-09',
      yearOfManufacture: 2019, engineCapacity: 1398, co2Emissions: 128, fuelType: 'PETROL', markedForExport: false, colour: 'SILVER',
      typeApproval: 'M1', wheelplan: '2 AXLE RIGID BODY', dateOfLastV5CIssued: '2023-02-02',
    },
    AA19DSL: {
      registrationNumber: 'AA19DSL', taxStatus: 'Taxed', taxDueDate: '2026-09-01', motStatus: 'Valid', motExpiryDate: '2026-09-20',
      make: 'VOLKSWAGEN', monthOfFirstRegistration: '2019-09', yearOfManufacture: 2019, engineCapacity: 1968, co2Emissions: 118,
      fuelType: 'DIESEL', markedForExport: false, colour: 'GREY', typeApproval: 'M1', wheelplan: '2 AXLE RIGID BODY', euroStatus: 'EURO6',
      realDrivingEmissions: '2', dateOfLastV5CIssued: '2020-10-10',
    },
    AA19MOT: {
      registrationNumber: 'AA19MOT', taxStatus: 'Taxed', taxDueDate: '2026-04-01', motStatus: 'Valid', motExpiryDate: '2026-04-14',
      make: 'PEUGEOT', monthOfFirstRegistration: '2015-04', yearOfManufacture: 2015, engineCapacity: 1397, co2Emissions: 95,
      fuelType: 'DIESEL', markedForExport: false, colour: 'BLACK', typeApproval: 'M1', wheelplan: '2 AXLE RIGID BODY', euroStatus: 'Euro 5',
    },
    AA19AMP: {
      registrationNumber: 'AA19AMP', taxStatus: 'Taxed', taxDueDate: '2026-08-01', artEndDate: '2025-08-31', motStatus: 'Valid',
      motExpiryDate: '2026-08-15', make: 'BMW', monthOfFirstRegistration: '2019-08', yearOfManufacture: 2019, engineCapacity: 2998,
      co2Emissions: 171, fuelType: 'PETROL', markedForExport: false, colour: 'BLACK', typeApproval: 'M1', wheelplan: '2 AXLE RIGID BODY',
    },
  };
}

const error = (status: number, title: string, detail: string): FakeResponse => ({
  status,
  json: { errors: [{ status: String(status), code: String(status), ...(title !== '' ? { title } : {}), ...(detail !== '' ? { detail } : {}) }] },
});

/** Error plates of the test environment, with the title/detail each returns (§1 table). */
export const DVLA_ERROR_PLATES: Readonly<Record<string, FakeResponse>> = {
  ER19BAD: error(400, 'Bad Request', 'Invalid format for field - vehicle registration number'),
  ER19NFD: error(404, 'Vehicle Not Found', 'Record for vehicle not found'),
  ER19THR: error(429, 'Too Many Requests', ''),
  ER19ERR: error(500, 'Internal Server Error', 'System Error occurred'),
  ER19MNT: error(503, '', 'System currently down for maintenance'),
};

export interface FakeDvlaOptions {
  readonly apiKey: string;
  /** Retry-After header sent with ER19THR's 429 (the documentation shows none). */
  readonly retryAfter?: string;
  /** How long ER19SLW takes to answer (our trigger plate, not DVLA's). */
  readonly slowMs?: number;
}

/** The fake: DVLA's plates, plus ER19SLW (slow 200) and ER19HNG (never answers), which are ours. */
export class FakeDvla {
  private constructor(
    readonly server: FakeHttpServer,
    readonly options: FakeDvlaOptions,
  ) {}

  static async start(options: FakeDvlaOptions): Promise<FakeDvla> {
    const holder: { fake?: FakeDvla } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeDvla(server, options);
    return holder.fake;
  }

  /** DVLA_BASE_URL for the service. */
  get baseUrl(): string {
    return `${this.server.url}${DVLA_BASE_PATH}`;
  }

  /** Vehicle requests received. */
  get calls(): number {
    return this.server.count(`${DVLA_BASE_PATH}/v1/vehicles`);
  }

  /** Vehicle requests received for one plate. */
  callsFor(vrm: string): number {
    return this.server.requests.filter((r) => r.path === `${DVLA_BASE_PATH}/v1/vehicles` && r.body.includes(`"${vrm}"`)).length;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    if (req.method !== 'POST' || req.path !== `${DVLA_BASE_PATH}/v1/vehicles`) return { status: 404, json: { message: 'Not Found' } };
    // Wrong or missing key: 403, as AWS API Gateway answers ([inferred] in §1).
    if (req.headers['x-api-key'] !== this.options.apiKey) return { status: 403, json: { message: 'Forbidden' } };
    let vrm: unknown;
    try {
      vrm = (JSON.parse(req.body) as { registrationNumber?: unknown }).registrationNumber;
    } catch {
      return error(400, 'Bad Request', 'Invalid request body');
    }
    if (typeof vrm !== 'string') return error(400, 'Bad Request', 'Invalid format for field - vehicle registration number');
    if (vrm === 'ER19THR') {
      const base = DVLA_ERROR_PLATES.ER19THR ?? { status: 429 };
      return this.options.retryAfter !== undefined && 'status' in base ? { ...base, headers: { 'retry-after': this.options.retryAfter } } : base;
    }
    if (vrm === 'ER19SLW') return { status: 200, json: { ...dvlaVehicles().AA19AAA, registrationNumber: 'ER19SLW' }, delayMs: this.options.slowMs ?? 1500 };
    if (vrm === 'ER19HNG') return { hang: true };
    const failure = DVLA_ERROR_PLATES[vrm];
    if (failure) return failure;
    const vehicle = dvlaVehicles()[vrm];
    return vehicle ? { status: 200, json: vehicle } : error(404, 'Vehicle Not Found', 'Record for vehicle not found');
  }
}
