import type { CarsxeConfig } from '../../config/paid-upstream-config.js';
import { asObject, parseJson, stringField, type JsonObject } from '../upstream/json-reader.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { recordedFetch, type AnswerSink } from '../upstream/answer-recording.js';
import { htmlPageError, requireObject, statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/** The two CarsXE endpoints we ask: the v2 plate decoder and the VIN specifications. */
export type CarsxeEndpoint = 'plate' | 'specs';

/**
 * What the `carsxe` source keeps of an answer with data: the endpoint and CarsXE's body without
 * its request echo (`input`), which repeats our API key (§1.4) and must not be kept or logged.
 */
export interface CarsxePayload {
  readonly endpoint: CarsxeEndpoint;
  readonly body: JsonObject;
}

/** A plate answer with none of these is empty: CarsXE sends "" for what it does not know (§1.2). */
const PLATE_DATA = ['description', 'make', 'model', 'vin'] as const;

/**
 * The meaning of one CarsXE answer (§1.6, §5). 404 is not found (deterministic, §1.3: "no data
 * for this plate", a disabled country, a bad state); 400 is our bad input, not billed, not cached;
 * 401 and 403 are refused credentials (a blocked key, an inactive account, a plan without the
 * API); 402 is no credit left; 429 is the period's quota used up (its body carries `usage`, and
 * no Retry-After); 5xx and an HTML page are unavailable. CarsXE sends no per-call price or
 * balance, so a found answer carries neither.
 */
export function classifyCarsxe(status: number, text: string, endpoint: CarsxeEndpoint): FetchOutcome {
  const page = htmlPageError(status, text);
  if (page) throw page;
  switch (status) {
    case 200:
      break;
    case 400:
      return { status: 'not-found', cache: false };
    case 402:
      throw new UpstreamError('out-of-funds', 'CarsXE: no credit left (HTTP 402)', 402);
    case 404:
      return { status: 'not-found' };
    case 429:
      throw new UpstreamError('quota', 'CarsXE usage limit for the period reached (HTTP 429)', 429);
    default:
      // 401 and 403: a blocked key, an inactive account, a plan without the API.
      throw statusError(status, { refused: `CarsXE refused the API key (HTTP ${status})` });
  }
  const body = requireObject({ status, object: asObject(parseJson(text)) });
  if (body.success !== true) throw new UpstreamError('bad-response', 'HTTP 200 without success: true', 200);
  const kept: JsonObject = Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'input'));
  if (endpoint === 'specs') {
    const attributes = asObject(body.attributes);
    if (!attributes || (stringField(attributes, 'make') === undefined && stringField(attributes, 'model') === undefined)) return { status: 'not-found' };
  } else if (!PLATE_DATA.some((k) => stringField(body, k) !== undefined)) {
    return { status: 'not-found' };
  }
  return { status: 'found', payload: { endpoint, body: kept } satisfies CarsxePayload };
}

/**
 * CarsXE (commercial-upstreams.md §1): `GET {base}/v2/platedecoder?key=&plate=&country=[&state=|&district=]`
 * and `GET {base}/specs?key=&vin=`. The key goes in the query string as CarsXE documents; the
 * redactor keeps it out of every message, and the request echo that repeats it is dropped. One
 * attempt per lookup (each request is a billed unit; the router is the only retry loop); a 429 is
 * read, not waited on: it is the month's quota, not a pause.
 */
export class CarsxeClient extends UpstreamClient {
  constructor(
    context: UpstreamContext,
    private readonly config: CarsxeConfig,
    /** Where each answer fetched is recorded (CARSXE_RECORD_FILE). */
    private readonly record?: AnswerSink,
  ) {
    super(context, config.settings, [config.apiKey, encodeURIComponent(config.apiKey)]);
  }

  /** A plate in a country (ISO alpha-2), with its state or district where the country takes one. */
  plate(plate: string, country: string, region: { readonly state?: string; readonly district?: string }, operation: string): Promise<UpstreamAnswer> {
    const params = new URLSearchParams({ key: this.config.apiKey, plate, country });
    if (region.state !== undefined) params.set('state', region.state);
    if (region.district !== undefined) params.set('district', region.district);
    const key = ['plate', country, region.state ?? region.district ?? '', plate].map((p) => encodeURIComponent(p)).join('|');
    return this.source.lookup(key, recordedFetch(() => this.fetch('plate', `/v2/platedecoder?${params.toString()}`), this.record, key, operation), { operation });
  }

  /** The specifications of a VIN. */
  specs(vin: string, operation: string): Promise<UpstreamAnswer> {
    const params = new URLSearchParams({ key: this.config.apiKey, vin });
    const key = `specs|${vin}`;
    return this.source.lookup(key, recordedFetch(() => this.fetch('specs', `/specs?${params.toString()}`), this.record, key, operation), { operation });
  }

  private async fetch(endpoint: CarsxeEndpoint, pathAndQuery: string): Promise<FetchOutcome> {
    const response = await this.request({ path: pathAndQuery, billed: true });
    return classifyCarsxe(response.status, response.text, endpoint);
  }
}
