import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake data.gov.il CKAN DataStore (upstream-sources.md §10.1): `GET
 * /api/3/action/datastore_search?resource_id=&filters=&limit=`. Every answer carries `help` and
 * `success`; found and unknown plates alike are HTTP 200 (`records: []` for none). Without `limit`
 * it pages 32,000 rows, as CKAN does. Registers whose every column is text (the cancellation
 * archives) hold zero-padded plates, and a number in their filter is a 409 Validation Error; the
 * model catalogue answers with upper-case field names (§10.1: "seen as both `CO2_WLTP` and
 * `co2_wltp`"). An unknown resource is 404 Not Found Error. Trigger plates: 9990001 answers an
 * HTML page with HTTP 200 (the WAF or maintenance), 9990002 HTTP 500, 9990003 never answers,
 * 9990004 a 403 WAF page, 9990005 CKAN's `success: false` with HTTP 200. Values are illustrative.
 */

export const CKAN_PATH = '/api/3/action/datastore_search';

export const RESOURCES = {
  main: '053cea08-09bc-40ec-8f7a-156f0677aff3',
  motorcycles: 'bf9df4e2-d90d-4c0a-a400-19e15af8e95f',
  heavy: 'cd3acc5c-03c3-4c89-9c54-d40f93c0d790',
  publicService: 'cf29862d-ca25-4691-84f6-1be60dcb4a1e',
  personalImport: '03adc637-b6fe-402b-9937-7c3d3afc9140',
  inactive: 'f6efe89a-fb3d-43a4-bb61-9bf12a9b9099',
  cancelled: '851ecab1-0622-4dbe-a6c7-f950cf82abf9',
  archive2010: '4e6b9724-4c1e-43f0-909a-154d4cc4e046',
  archive2000: 'ec8cbc34-72e1-4b69-9c48-22821ba0bd6c',
  inactiveNoModel: '6f6acd03-f351-4a8f-8ecf-df792f4f573a',
  models: '142afde2-6228-49f9-8a29-9b6c3a0cbe40',
} as const;

interface Resource {
  /** Every column text (the archives): filters must be strings. */
  readonly allText: boolean;
  readonly records: ReadonlyArray<Record<string, unknown>>;
}

/** The captured Sandero of §10.1 (VIN with `*` separators). */
const SANDERO = {
  _id: 2372814, mispar_rechev: 3254433, tozeret_cd: 351, sug_degem: 'P', tozeret_nm: 'דאציה רומניה', degem_cd: 12, degem_nm: '5SDA1C',
  ramat_gimur: 'LAUREATE', ramat_eivzur_betihuty: null, kvutzat_zihum: 13, shnat_yitzur: 2015, degem_manoa: 'H4B',
  mivchan_acharon_dt: '2024-11-14', tokef_dt: '2025-11-28', baalut: 'פרטי', misgeret: 'UU1*5SDA1C*F0078185', tzeva_cd: 11,
  tzeva_rechev: 'שחור מטלי', zmig_kidmi: '205/55R16', zmig_ahori: '205/55R16', sug_delek_nm: 'בנזין', horaat_rishum: 150548,
  moed_aliya_lakvish: '2015-11', kinuy_mishari: 'SANDERO',
};

/** A plug-in hybrid in the main register whose make the English table lacks. */
const UNKNOWN_MAKE = {
  _id: 91, mispar_rechev: 12345678, tozeret_cd: 999, sug_degem: 'P', tozeret_nm: 'מותג חדש סין', degem_cd: 4, degem_nm: 'X1',
  shnat_yitzur: 2024, sug_delek_nm: 'חשמל/בנזין', moed_aliya_lakvish: '2024-3', misgeret: 'LNNXX1234R0000001',
};

function resources(): Record<string, Resource> {
  return {
    [RESOURCES.main]: { allText: false, records: [SANDERO, UNKNOWN_MAKE, { _id: 92, mispar_rechev: 7000001, tozeret_cd: 1, degem_cd: 1, shnat_yitzur: 2020 }] },
    [RESOURCES.motorcycles]: {
      allText: false,
      records: [{ _id: 5, mispar_rechev: 5512345, tozeret_nm: 'ימאהה יפן', degem_nm: 'MT-07', shnat_yitzur: 2019, nefach_manoa: 689, hespek: 55, sug_delek_nm: 'בנזין' }],
    },
    [RESOURCES.heavy]: { allText: false, records: [] },
    [RESOURCES.publicService]: { allText: false, records: [] },
    [RESOURCES.personalImport]: { allText: false, records: [] },
    [RESOURCES.inactive]: { allText: false, records: [] },
    [RESOURCES.cancelled]: { allText: false, records: [] },
    [RESOURCES.archive2010]: {
      allText: true,
      records: [{ _id: '7', mispar_rechev: '04252235', tozeret_nm: 'פיאט איטליה', degem_nm: 'PUNTO', shnat_yitzur: '2004', misgeret: 'ZFA18800000123456', bitul_dt: '2013-02-01', moed_aliya_lakvish: '2004' }],
    },
    [RESOURCES.archive2000]: { allText: true, records: [] },
    [RESOURCES.inactiveNoModel]: { allText: false, records: [] },
    // The catalogue row of the Sandero, in upper case as one client saw it.
    [RESOURCES.models]: {
      allText: false,
      records: [{ _id: 1, TOZERET_CD: 351, DEGEM_CD: 12, SHNAT_YITZUR: 2015, SUG_DEGEM: 'P', NEFAH_MANOA: 898, KOAH_SUS: 90, MISPAR_DLATOT: 5, MISPAR_MOSHAVIM: 5, CO2_WLTP: 128 }],
    },
  };
}

const HELP = 'https://data.gov.il/api/3/action/help_show?name=datastore_search';
const ckanError = (status: number, type: string, message: string): FakeResponse => ({ status, json: { help: HELP, success: false, error: { __type: type, message } } });

/** A record's value of a filter field, matching the column's case-insensitively, as the fake's upper-case catalogue needs. */
function valueOf(record: Record<string, unknown>, field: string): unknown {
  const name = Object.keys(record).find((k) => k.toLowerCase() === field.toLowerCase());
  return name === undefined ? undefined : record[name];
}

export class FakeIsrael {
  /** The resource ids searched, in order. */
  readonly searched: string[] = [];

  private constructor(readonly server: FakeHttpServer) {}

  static async start(): Promise<FakeIsrael> {
    const holder: { fake?: FakeIsrael } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeIsrael(server);
    return holder.fake;
  }

  /** ISRAEL_BASE_URL for the service. */
  get baseUrl(): string {
    return this.server.url;
  }

  get calls(): number {
    return this.server.count(CKAN_PATH);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    if (req.path !== CKAN_PATH) return { status: 404, text: '<html><body>Not found</body></html>', headers: { 'content-type': 'text/html' } };
    const params = new URL(req.url, 'http://fake').searchParams;
    const id = params.get('resource_id') ?? '';
    this.searched.push(id);
    let filters: Record<string, unknown>;
    try {
      filters = JSON.parse(params.get('filters') ?? '{}') as Record<string, unknown>;
    } catch {
      return ckanError(409, 'Validation Error', 'filters: Cannot parse JSON');
    }
    const plate = JSON.stringify(filters.mispar_rechev ?? '').replace(/"/g, '');
    switch (plate) {
      case '9990001':
        return { status: 200, text: '<!DOCTYPE html><html><body>האתר בתחזוקה</body></html>', headers: { 'content-type': 'text/html' } };
      case '9990002':
        return { status: 500, text: 'Internal Server Error' };
      case '9990003':
        return { hang: true };
      case '9990004':
        return { status: 403, text: '<html><body>Request blocked</body></html>', headers: { 'content-type': 'text/html' } };
      case '9990005':
        return { status: 200, json: { help: HELP, success: false, error: { __type: 'Search Error', message: 'busy' } } };
    }
    const resource = resources()[id];
    if (!resource) return ckanError(404, 'Not Found Error', 'Resource "…" was not found.');
    if (resource.allText && Object.values(filters).some((v) => typeof v === 'number')) {
      return ckanError(409, 'Validation Error', 'invalid input syntax for type text');
    }
    const limitText = params.get('limit');
    const limit = limitText === null ? 32_000 : Number(limitText);
    const matches = resource.records.filter((record) =>
      Object.entries(filters).every(([field, wanted]) => {
        const have = valueOf(record, field);
        // A numeric column matches a number or a digits-only string (§10.1).
        return resource.allText ? have === wanted : have !== undefined && JSON.stringify(have).replace(/"/g, '') === JSON.stringify(wanted).replace(/"/g, '');
      }),
    );
    const records = matches.slice(0, limit);
    return {
      status: 200,
      json: {
        help: HELP,
        success: true,
        result: {
          include_total: true, limit, records_format: 'objects', resource_id: id, records, total: matches.length, total_was_estimated: false,
          fields: [{ id: '_id', type: 'int' }], _links: { start: `${CKAN_PATH}?resource_id=${id}` },
        },
      },
    };
  }
}
