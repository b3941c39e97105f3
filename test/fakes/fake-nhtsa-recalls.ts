import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake NHTSA Recalls API (upstream-sources.md §10.4): `GET /recalls/recallsByVehicle?make=&model=
 * &modelYear=`, no key, answering `{Count, Message, results}` with the lower-case `results`. What
 * it reproduces of the documented behaviour:
 * - the path is case-sensitive: any other case answers 403;
 * - a vehicle with no recalls on file answers 400 with an empty `results` (every vehicle not in
 *   the table below), or 200 with an empty list (`NO RECALLS` vehicles listed with `[]`);
 * - `model` without `make` and `modelYear` is a 400 with an error message and no `results`;
 * - make and model match case-insensitively.
 * Errors and slow answers come from `server.script(...)`; `failWith` makes every answer that
 * status. Campaign texts are illustrative, written from the documented fields.
 */

const recall = (campaign: string, received: string, component: string, summary: string, make: string, model: string, year: string): Record<string, unknown> => ({
  Manufacturer: make === 'HONDA' ? 'Honda (American Honda Motor Co.)' : 'Tesla, Inc.',
  NHTSACampaignNumber: campaign,
  parkIt: false,
  parkOutSide: false,
  overTheAirUpdate: false,
  ReportReceivedDate: received,
  Component: component,
  Summary: summary,
  Consequence: 'This increases the risk of injury.',
  Remedy: 'Dealers will fix the vehicles free of charge.',
  Notes: null,
  ModelYear: year,
  Make: make,
  Model: model,
});

/** Recalls by `MAKE|MODEL|YEAR`, upper case. */
export function nhtsaRecalls(): Record<string, Array<Record<string, unknown>>> {
  return {
    'HONDA|ACCORD|2003': [
      recall('15V320000', '27/05/2015', 'AIR BAGS:FRONTAL:PASSENGER SIDE:INFLATOR MODULE', 'The passenger frontal air bag inflator may rupture\ndue to propellant degradation.', 'HONDA', 'ACCORD', '2003'),
      recall('19V182000', '07/03/2019', 'AIR BAGS:FRONTAL:DRIVER SIDE:INFLATOR MODULE', 'The driver air bag inflator may explode on deployment.', 'HONDA', 'ACCORD', '2003'),
      // NHTSA lists a campaign once per affected make/model/year; the same one twice happens in merged answers.
      recall('15V320000', '27/05/2015', 'AIR BAGS:FRONTAL:PASSENGER SIDE:INFLATOR MODULE', 'The passenger frontal air bag inflator may rupture due to propellant degradation.', 'HONDA', 'ACCORD', '2003'),
    ],
    'TESLA|MODEL 3|2018': [],
  };
}

export class FakeNhtsaRecalls {
  /** Status every answer has while set (500, 503...). */
  failWith: number | undefined;

  private constructor(readonly server: FakeHttpServer) {}

  static async start(): Promise<FakeNhtsaRecalls> {
    const holder: { fake?: FakeNhtsaRecalls } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeNhtsaRecalls(server);
    return holder.fake;
  }

  /** NHTSA_RECALLS_BASE_URL for the service (as https://api.nhtsa.gov). */
  get baseUrl(): string {
    return this.server.url;
  }

  get calls(): number {
    return this.server.count('/recalls/recallsByVehicle');
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    if (this.failWith !== undefined) return { status: this.failWith, text: 'Service Unavailable' };
    if (req.path.toLowerCase() === '/recalls/recallsbyvehicle' && req.path !== '/recalls/recallsByVehicle') {
      return { status: 403, json: { message: 'Forbidden' } };
    }
    if (req.method !== 'GET' || req.path !== '/recalls/recallsByVehicle') return { status: 404, text: 'Not Found' };
    const query = new URL(req.url, 'http://fake').searchParams;
    const make = query.get('make')?.trim() ?? '';
    const model = query.get('model')?.trim() ?? '';
    const year = query.get('modelYear')?.trim() ?? '';
    if (make === '' || year === '') {
      return { status: 400, json: { Count: 0, Message: 'Your request was not successful. Make and modelYear are required.', errors: ['Invalid parameters'] } };
    }
    const results = nhtsaRecalls()[`${make}|${model}|${year}`.toUpperCase()];
    // Not on file: NHTSA's "no records" answer, a 400 with no rows (§10.4 "Errors").
    if (results === undefined) return { status: 400, json: { Count: 0, Message: 'No results found for this request', results: [] } };
    return { status: 200, json: { Count: results.length, Message: 'Results returned successfully', results } };
  }
}
