import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake RDW Open Data (Socrata, upstream-sources.md §3): `GET /resource/m9d7-ebf2.json?kenteken=`
 * and `GET /resource/8ys7-d773.json?kenteken=`, every value a string, `[]` for an unknown plate.
 * Optional `X-App-Token`; with `throttleWithoutToken` a caller without one gets 429 (§9.3).
 * Trigger plates reuse DVLA's magic ones (§9.4): ER19ERR 500, ER19MNT 503, ER19THR 429, ER19BAD
 * 400 (Socrata's JSON error body), ER19HNG never answers. Bodies are illustrative.
 */

/** Register rows (m9d7-ebf2), trimmed to the fields the mapping reads plus a few it ignores. */
export function rdwVehicles(): Record<string, Record<string, string>> {
  return {
    AB123C: {
      kenteken: 'AB123C', voertuigsoort: 'Personenauto', merk: 'VOLKSWAGEN', handelsbenaming: 'GOLF',
      datum_eerste_toelating: '20180315', datum_eerste_toelating_dt: '2018-03-15T00:00:00.000',
      vervaldatum_apk: '20260930', vervaldatum_apk_dt: '2026-09-30T00:00:00.000', inrichting: 'hatchback',
      eerste_kleur: 'GRIJS', tweede_kleur: 'Niet geregistreerd', aantal_cilinders: '4', cilinderinhoud: '1395',
      aantal_deuren: '5', aantal_zitplaatsen: '5', massa_ledig_voertuig: '1165', catalogusprijs: '28450',
      europese_voertuigcategorie: 'M1', wam_verzekerd: 'Ja', taxi_indicator: 'Nee', export_indicator: 'Nee',
      api_gekentekende_voertuigen_brandstof: 'https://opendata.rdw.nl/resource/8ys7-d773.json',
    },
    // The trade name repeats the make; a plug-in hybrid with two fuel rows, listed secondary first.
    NN001X: {
      kenteken: 'NN001X', voertuigsoort: 'Personenauto', merk: 'NISSAN', handelsbenaming: 'NISSAN NOTE',
      datum_eerste_toelating: '20140306', inrichting: 'MPV', eerste_kleur: 'WIT', cilinderinhoud: '1198', aantal_zitplaatsen: '5',
    },
    // An electric car: no cylinder capacity, no APK yet.
    EV777Z: { kenteken: 'EV777Z', voertuigsoort: 'Personenauto', merk: 'TESLA', handelsbenaming: 'MODEL 3', datum_eerste_toelating: '20230102', aantal_deuren: '4' },
  };
}

/** Fuel rows (8ys7-d773) by plate. */
export function rdwFuels(): Record<string, Array<Record<string, string>>> {
  return {
    AB123C: [{ kenteken: 'AB123C', brandstof_volgnummer: '1', brandstof_omschrijving: 'Benzine', nettomaximumvermogen: '92.00', uitlaatemissieniveau: 'EURO 6' }],
    NN001X: [
      { kenteken: 'NN001X', brandstof_volgnummer: '2', brandstof_omschrijving: 'Elektriciteit' },
      { kenteken: 'NN001X', brandstof_volgnummer: '1', brandstof_omschrijving: 'Benzine', nettomaximumvermogen: '58.00' },
    ],
    EV777Z: [{ kenteken: 'EV777Z', brandstof_volgnummer: '1', brandstof_omschrijving: 'Elektriciteit', netto_max_vermogen_elektrisch: '208.00' }],
  };
}

export const RDW_VEHICLE_PATH = '/resource/m9d7-ebf2.json';
export const RDW_FUEL_PATH = '/resource/8ys7-d773.json';

const socrataError = (status: number, code: string, message: string): FakeResponse => ({ status, json: { code, error: true, message } });

export interface FakeRdwOptions {
  /** The app token the fake accepts; a different one is refused with 403. */
  readonly appToken?: string;
  /** Answer 429 to callers without an app token (Socrata's shared pool, §3). */
  readonly throttleWithoutToken?: boolean;
}

export class FakeRdw {
  private constructor(
    readonly server: FakeHttpServer,
    readonly options: FakeRdwOptions,
  ) {}

  static async start(options: FakeRdwOptions = {}): Promise<FakeRdw> {
    const holder: { fake?: FakeRdw } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeRdw(server, options);
    return holder.fake;
  }

  /** RDW_BASE_URL for the service. */
  get baseUrl(): string {
    return this.server.url;
  }

  /** Register requests received. */
  get vehicleCalls(): number {
    return this.server.count(RDW_VEHICLE_PATH);
  }

  /** Fuel requests received. */
  get fuelCalls(): number {
    return this.server.count(RDW_FUEL_PATH);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    if (req.method !== 'GET') return socrataError(400, 'query.execution.queryTooComplex', 'GET only');
    const token = req.headers['x-app-token'];
    if (token !== undefined && this.options.appToken !== undefined && token !== this.options.appToken) {
      return socrataError(403, 'authentication_required', 'Invalid app_token specified');
    }
    if (token === undefined && this.options.throttleWithoutToken === true) return socrataError(429, 'throttled', 'Too many requests');
    const plate = new URL(req.url, 'http://fake').searchParams.get('kenteken') ?? '';
    if (plate === 'ER19HNG') return { hang: true };
    if (plate === 'ER19ERR') return socrataError(500, 'internal_error', 'Internal error');
    if (plate === 'ER19MNT') return { status: 503, text: 'Service Unavailable' };
    if (plate === 'ER19THR') return socrataError(429, 'throttled', 'Too many requests');
    if (plate === 'ER19BAD') return socrataError(400, 'query.soql.no-such-column', 'No such column: kenteken');
    if (req.path === RDW_VEHICLE_PATH) {
      if (plate === 'ER19JNK') return { status: 200, text: '<html>maintenance</html>' };
      const row = rdwVehicles()[plate];
      return { status: 200, json: row ? [row] : [] };
    }
    if (req.path === RDW_FUEL_PATH) return { status: 200, json: rdwFuels()[plate] ?? [] };
    return socrataError(404, 'not_found', 'Dataset not found');
  }
}
