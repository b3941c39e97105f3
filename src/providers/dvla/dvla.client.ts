import type { DvlaConfig } from '../../config/provider-config.js';
import { requireObject, statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/**
 * DVLA Vehicle Enquiry Service (upstream-sources.md §1): `POST {base}/v1/vehicles` with the plate
 * in the JSON body (never in the URL: DVLA and the ICO treat it as personal data) and the key in
 * `x-api-key`. Answers are cached by plate; found answers carry the VES `Vehicle` JSON as given.
 */
export class DvlaClient extends UpstreamClient {
  constructor(
    context: UpstreamContext,
    private readonly config: DvlaConfig,
  ) {
    super(context, config.settings, [config.apiKey]);
  }

  /** The VES answer for a registration (upper case, no spaces). */
  vehicle(vrm: string): Promise<UpstreamAnswer> {
    return this.source.lookup(vrm, () => this.fetch(vrm));
  }

  private async fetch(vrm: string): Promise<FetchOutcome> {
    const response = await this.request({
      method: 'POST',
      path: '/v1/vehicles',
      headers: { 'x-api-key': this.config.apiKey },
      json: { registrationNumber: vrm },
      // A read: POST only keeps the plate out of the URL, so a retry is harmless.
      idempotent: true,
    });
    switch (response.status) {
      case 200:
        return { status: 'found', payload: requireObject(response, 'a JSON Vehicle object') };
      case 404:
        // "Vehicle Not Found" (ER19NFD in the test environment).
        return { status: 'not-found' };
      case 400:
        // "Invalid format for field - vehicle registration number": no such vehicle. Not cached, in
        // case the request was at fault.
        return { status: 'not-found', cache: false };
      default:
        throw statusError(response.status, { refused: `DVLA refused the API key (HTTP ${response.status})` });
    }
  }
}
