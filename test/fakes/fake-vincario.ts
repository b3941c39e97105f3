import { createHash } from 'node:crypto';
import { FakeHttpServer, type FakeRequest, type FakeResponse } from './fake-http-server.js';

/**
 * A fake of Vincario's API 3.2 (commercial-upstreams.md §3, from the vendor's OpenAPI document):
 * `GET /3.2/{key}/{control sum}/{action}/{VIN}.json` (also under /3.1 and api.vindecoder.eu's
 * paths, which answer alike), where the control sum is the first 10 hex characters of
 * sha1("{VIN}|{operation id}|{key}|{secret}"). It checks the key and the sum as Vincario does,
 * keeps a prepaid balance per service (an answer takes one lookup; none left is "Not Enough
 * Lookups"), and answers every documented error as `{"error": true, "message"}` under HTTP 200.
 */

/** The VINs of each outcome (European VINs: our VIN rule checks no check digit for them). */
export const VINCARIO_VINS = {
  /** The VN-OAS decode example (a 2005 Ford Focus); its stolen check says not stolen everywhere. */
  focus: 'WF05XXGC055870807',
  /** A decode with most labels left out (Vincario omits what it does not know). */
  partial: 'TMBJJ7NE8F0123456',
  /** Reported stolen in Slovakia. */
  stolen: 'WVWZZZ1JZXW000001',
  /** One register could not be verified, none reports it stolen. */
  unverified: 'VF1RFB00X00000001',
  notRecognized: 'WDB0000000Z000001',
  /** Fails Vincario's own checks ("invalid", reasons). */
  invalid: 'SAL1234567890ZZZZ',
  rateLimited: 'ZFA00000000000060',
  down: 'VSS00000000000500',
  slow: 'TRU00000000000SLW',
  html: 'WBA00000000000HTM',
} as const;

/** Each service's counter in `balance` (VN-OAS). */
const SERVICE_BALANCE: Readonly<Record<string, string>> = { decode: 'API Decode', 'stolen-check': 'API Stolen Check', 'vehicle-market-value': 'API Vehicle Market Value', oem: 'API OEM VIN Lookup' };

export interface FakeVincarioOptions {
  readonly apiKey: string;
  readonly secret: string;
  /** Lookups left per service; default 20 each. */
  readonly balance?: Partial<Record<'decode' | 'stolen-check', number>>;
  /** `price` of each call (0: prepaid, as VN-OAS's examples); default 0. */
  readonly price?: number;
  readonly slowMs?: number;
}

const error = (message: string, extra: Record<string, unknown> = {}): FakeResponse => ({ status: 200, json: { error: true, message, ...extra } });

function sum(vin: string, op: string, key: string, secret: string): string {
  return createHash('sha1').update(`${vin}|${op}|${key}|${secret}`).digest('hex').slice(0, 10);
}

/** The VN-OAS decode example, abridged as commercial-upstreams.md §3.2 gives it, plus the labels our mapping reads. */
function focusDecode(vin: string): Array<Record<string, unknown>> {
  return [
    { label: 'VIN', value: vin },
    { label: 'Vehicle ID', value: 1619 },
    { label: 'Make', value: 'Ford', id: 30 },
    { label: 'Manufacturer', value: 'Ford Germany' },
    { label: 'Plant Country', value: 'Germany' },
    { label: 'Plant City', value: 'Saarlouis' },
    { label: 'Model', value: 'Focus', id: 17779 },
    { label: 'Model Year', value: 2005 },
    { label: 'Product Type', value: 'Car', id: 4 },
    { label: 'Body', value: 'Hatchback/Liftback/Notchback', id: 5 },
    { label: 'Series', value: 'Mk2 (2004-2011)' },
    { label: 'Drive', value: 'Front-wheel drive', id: 1 },
    { label: 'Engine Displacement (ccm)', value: 1596 },
    { label: 'Engine Power (kW)', value: 74 },
    { label: 'Fuel Type - Primary', value: 'Gasoline', id: 1 },
    { label: 'Transmission', value: 'Manual/Standard', id: 6 },
    { label: 'Number of Gears', value: 5 },
    { label: 'Emission Standard', value: 'Euro 4' },
    { label: 'Number of Doors', value: 4 },
    { label: 'Number of Seats', value: '5' },
    { label: 'Wheel Size Array', value: ['195/65R15*205/50R17*205/55R16'] },
    { label: 'ABS', value: 1 },
    { label: 'Make Logo', value: 'https://vindecoder.eu/img/make/ford.svg' },
  ];
}

export class FakeVincario {
  readonly balance: Record<string, number>;

  private constructor(
    readonly server: FakeHttpServer,
    readonly options: FakeVincarioOptions,
  ) {
    this.balance = { 'API Decode': options.balance?.decode ?? 20, 'API Stolen Check': options.balance?.['stolen-check'] ?? 20, 'API Vehicle Market Value': 4, 'API OEM VIN Lookup': 0, 'API OEM Service History': 0 };
  }

  static async start(options: FakeVincarioOptions): Promise<FakeVincario> {
    const holder: { fake?: FakeVincario } = {};
    const server = await FakeHttpServer.start((req) => (holder.fake ? holder.fake.answer(req) : { status: 500 }));
    holder.fake = new FakeVincario(server, options);
    return holder.fake;
  }

  /** VINCARIO_BASE_URL for the service. */
  get baseUrl(): string {
    return `${this.server.url}/3.2`;
  }

  /** Calls of one action, for one VIN when given. */
  calls(action: 'decode' | 'stolen-check', vin?: string): number {
    return this.server.requests.filter((r) => {
      const m = /^\/3\.[12]\/[^/]+\/[^/]+\/(.+)\/([^/]+)\.json$/.exec(r.path);
      return m?.[1] === action && (vin === undefined || decodeURIComponent(m[2] ?? '') === vin);
    }).length;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: FakeRequest): FakeResponse {
    if (req.method !== 'GET') return { status: 404, text: 'Not Found' };
    const m = /^\/3\.[12]\/([^/]+)\/([^/]+)\/(decode\/info|decode|stolen-check|balance)(?:\/([^/]+?))?\.json$/.exec(req.path);
    if (!m) return { status: 404, text: 'Not Found' };
    const key = decodeURIComponent(m[1] ?? '');
    const given = m[2] ?? '';
    const action = m[3] ?? '';
    const vin = decodeURIComponent(m[4] ?? '');
    if (key !== this.options.apiKey) return error('Unknown API Key');
    const op = action === 'decode/info' ? 'info' : action;
    // balance: VN-OAS writes {$vin} in its sum with no VIN in the path; both readings are accepted.
    const expected = action === 'balance' ? [sum('', op, key, this.options.secret), sum(key, op, key, this.options.secret)] : [sum(vin, op, key, this.options.secret)];
    if (!expected.includes(given)) return error('Invalid Control sum');
    if (action === 'balance') return { status: 200, json: { ...this.balance } };

    const V = VINCARIO_VINS;
    if (vin === V.down) return { status: 500, json: { error: true, message: 'Internal Server Error' } };
    if (vin === V.html) return { status: 502, text: '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>', headers: { 'content-type': 'text/html' } };
    if (vin === V.rateLimited) return error("You've reached limit of 60 requests per minute. Contact us at info@vincario.com for a customized limit.");
    // Invalid VINs are not charged (§3 table).
    if (vin.length !== 17 || /[IOQ]/.test(vin) || vin === V.invalid) return error('invalid', { reasons: vin.length !== 17 ? ['length'] : ['char', 'invalid'] });
    if (action === 'decode/info') return { status: 200, json: { price: 0, price_currency: 'EUR', decode: ['VIN', 'Make', 'Model', 'Model Year'] } };

    const counter = SERVICE_BALANCE[action] ?? '';
    if ((this.balance[counter] ?? 0) <= 0) return error('Not Enough Lookups');
    if (vin === V.notRecognized && action === 'decode') return error('Not recognized');
    this.balance[counter] = (this.balance[counter] ?? 0) - 1;
    const head = { price: this.options.price ?? 0, price_currency: 'EUR', balance: { ...this.balance } };
    const slow = vin === V.slow ? { delayMs: this.options.slowMs ?? 150 } : {};
    if (action === 'decode') {
      const decode = vin === V.partial ? [{ label: 'VIN', value: vin }, { label: 'Make', value: 'Skoda', id: 86 }, { label: 'Model', value: 'Octavia', id: 2004 }] : focusDecode(vin);
      return { status: 200, json: { ...head, decode }, ...slow };
    }
    const registers = ['cz', 'hu', 'ro', 'si', 'sk', 'it', 'vincario'];
    const statusOf = (code: string): string => (vin === V.stolen && code === 'sk' ? 'stolen' : vin === V.unverified && code === 'ro' ? 'could-not-verify' : 'not-stolen');
    return { status: 200, json: { vin, ...head, stolen: registers.map((code) => ({ code, status: statusOf(code) })), make_logo: null }, ...slow };
  }
}
