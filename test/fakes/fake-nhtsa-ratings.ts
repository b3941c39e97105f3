import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake NHTSA 5-Star Safety Ratings API (upstream-sources.md §10.5):
 * `GET /SafetyRatings/modelyear/{y}/make/{make}/model/{model}` lists the variants and
 * `GET /SafetyRatings/VehicleId/{id}` gives one's ratings, in the `{Count, Message, Results}`
 * envelope. Make and model match in any case; the `SafetyRatings` segment is case-sensitive (403
 * otherwise, as the real one). A model it does not know answers `Count: 0`; model `BROKEN`
 * answers 500. Ratings are illustrative.
 */

const envelope = (results: unknown[]): FakeResponse => ({ status: 200, json: { Count: results.length, Message: 'Results returned successfully', Results: results } });

const rating = (id: number, description: string, overall: string): Record<string, unknown> => ({
  VehiclePicture: `https://static.nhtsa.gov/images/vehicles/${id}_st0640_046.png`, OverallRating: overall, OverallFrontCrashRating: '4',
  FrontCrashDriversideRating: '4', FrontCrashPassengersideRating: '4', OverallSideCrashRating: '5', SideCrashDriversideRating: '5',
  SideCrashPassengersideRating: '5', RolloverRating: '4', RolloverPossibility: 0.103, 'combinedSideBarrierAndPoleRating-Front': '5',
  NHTSAElectronicStabilityControl: 'Standard', NHTSAForwardCollisionWarning: 'Optional', ComplaintsCount: 12, RecallsCount: 1,
  InvestigationCount: 0, ModelYear: 2003, Make: 'HONDA', Model: 'ACCORD', VehicleDescription: description, VehicleId: id,
});

/** Variants by "YEAR|MAKE|MODEL". */
const VARIANTS: Record<string, Array<{ VehicleDescription: string; VehicleId: number }>> = {
  '2003|HONDA|ACCORD': [
    { VehicleDescription: '2003 Honda Accord 4 DR FWD', VehicleId: 7523 },
    { VehicleDescription: '2003 Honda Accord 2 DR FWD', VehicleId: 7522 },
  ],
  '2015|TOYOTA|CAMRY': [{ VehicleDescription: '2015 Toyota Camry 4 DR FWD', VehicleId: 9403 }],
};
const RATINGS: Record<number, Record<string, unknown>> = {
  7523: rating(7523, '2003 Honda Accord 4 DR FWD', '5'),
  7522: rating(7522, '2003 Honda Accord 2 DR FWD', '4'),
  9403: { ...rating(9403, '2015 Toyota Camry 4 DR FWD', '5'), Make: 'TOYOTA', Model: 'CAMRY', ModelYear: 2015 },
};

export class FakeNhtsaRatings {
  private constructor(readonly server: FakeHttpServer) {}

  static async start(): Promise<FakeNhtsaRatings> {
    const holder: { fake?: FakeNhtsaRatings } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeNhtsaRatings(server);
    return holder.fake;
  }

  /** NHTSA_RATINGS_BASE_URL for the service. */
  get baseUrl(): string {
    return this.server.url;
  }

  get calls(): number {
    return this.server.count('/');
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    const list = /^\/SafetyRatings\/modelyear\/(\d{4})\/make\/([^/]+)\/model\/([^/]+)$/.exec(req.path);
    if (list) {
      const model = decodeURIComponent(list[3] ?? '').toUpperCase();
      if (model === 'BROKEN') return { status: 500, text: 'Internal Server Error' };
      return envelope(VARIANTS[`${list[1]}|${decodeURIComponent(list[2] ?? '').toUpperCase()}|${model}`] ?? []);
    }
    const one = /^\/SafetyRatings\/VehicleId\/(\d+)$/.exec(req.path);
    if (one) {
      const found = RATINGS[Number(one[1])];
      return envelope(found ? [found] : []);
    }
    if (/^\/safetyratings\//i.test(req.path)) return { status: 403, text: '<html>Forbidden</html>' };
    return { status: 404, text: 'Not Found' };
  }
}
