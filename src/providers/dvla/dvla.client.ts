import type { DvlaConfig } from '../../config/provider-config.js';
import { asObject, parseJson } from '../upstream/json-reader.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { UpstreamSource, type FetchOutcome, type UpstreamAnswer, type UpstreamContext } from '../upstream/upstream-source.js';

/**
 * DVLA Vehicle Enquiry Service (upstream-sources.md §1): `POST {base}/v1/vehicles` with the plate
 * in the JSON body (never in the URL: DVLA and the ICO treat it as personal data) and the key in
 * `x-api-key`. Answers are cached by plate; found answers carry the VES `Vehicle` JSON as given.
 */
export class DvlaClient {
  constructor(
    private readonly source: UpstreamSource,
    private readonly apiKey: string,
  ) {}

  static create(context: UpstreamContext, config: DvlaConfig): DvlaClient {
    return new DvlaClient(new UpstreamSource(config.settings, context, [config.apiKey]), config.apiKey);
  }

  get name(): string {
    return this.source.name;
  }

  /** The VES answer for a registration (upper case, no spaces). */
  vehicle(vrm: string): Promise<UpstreamAnswer> {
    return this.source.lookup(vrm, () => this.fetch(vrm));
  }

  private async fetch(vrm: string): Promise<FetchOutcome> {
    const response = await this.source.http.request({
      method: 'POST',
      url: `${this.source.settings.baseUrl}/v1/vehicles`,
      headers: { 'x-api-key': this.apiKey, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ registrationNumber: vrm }),
      // A read: POST only keeps the plate out of the URL, so a retry is harmless.
      idempotent: true,
    });
    switch (response.status) {
      case 200: {
        const vehicle = asObject(parseJson(response.text));
        if (!vehicle) throw new UpstreamError('bad-response', 'HTTP 200 without a JSON Vehicle object', 200);
        return { status: 'found', payload: vehicle };
      }
      case 404:
        // "Vehicle Not Found" (ER19NFD in the test environment).
        return { status: 'not-found' };
      case 400:
        // "Invalid format for field - vehicle registration number": no such vehicle. Not cached, in
        // case the request was at fault.
        return { status: 'not-found', cache: false };
      case 401:
      case 403:
        throw new UpstreamError('auth', `DVLA refused the API key (HTTP ${response.status})`, response.status);
      default:
        throw new UpstreamError('unexpected-status', `unexpected HTTP ${response.status}`, response.status);
    }
  }
}
