import type { NhtsaConfig } from '../../config/provider-config.js';
import { objectArrayField, stringField } from '../upstream/json-reader.js';
import { requireObject, statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/**
 * NHTSA vPIC REST (upstream-sources.md §4a): `GET {base}/DecodeVinValues/{vin}?format=json`, one
 * flat object of strings in `Results[0]`. A bad VIN is still HTTP 200; an empty `Results` or an
 * empty `Make` means vPIC knows nothing (§9.2). Found answers carry `Results[0]`, cached by VIN.
 */
export class NhtsaClient extends UpstreamClient {
  constructor(context: UpstreamContext, config: NhtsaConfig) {
    super(context, config.settings);
  }

  /** The DecodeVinValues result of a 17-character VIN. */
  vinValues(vin: string): Promise<UpstreamAnswer> {
    return this.source.lookup(vin, () => this.fetch(vin));
  }

  private async fetch(vin: string): Promise<FetchOutcome> {
    const response = await this.request({ path: `/DecodeVinValues/${encodeURIComponent(vin)}?format=json` });
    if (response.status !== 200) throw statusError(response.status);
    const result = objectArrayField(requireObject(response), 'Results')[0];
    if (!result || stringField(result, 'Make') === undefined) return { status: 'not-found' };
    return { status: 'found', payload: result };
  }
}
