import type { NhtsaConfig } from '../../config/provider-config.js';
import { asObject, objectArrayField, parseJson, stringField } from '../upstream/json-reader.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { UpstreamSource, type FetchOutcome, type UpstreamAnswer, type UpstreamContext } from '../upstream/upstream-source.js';

/**
 * NHTSA vPIC REST (upstream-sources.md §4a): `GET {base}/DecodeVinValues/{vin}?format=json`, one
 * flat object of strings in `Results[0]`. A bad VIN is still HTTP 200; an empty `Results` or an
 * empty `Make` means vPIC knows nothing (§9.2). Found answers carry `Results[0]`, cached by VIN.
 */
export class NhtsaClient {
  constructor(private readonly source: UpstreamSource) {}

  static create(context: UpstreamContext, config: NhtsaConfig): NhtsaClient {
    return new NhtsaClient(new UpstreamSource(config.settings, context));
  }

  get name(): string {
    return this.source.name;
  }

  /** The DecodeVinValues result of a 17-character VIN. */
  vinValues(vin: string): Promise<UpstreamAnswer> {
    return this.source.lookup(vin, () => this.fetch(vin));
  }

  private async fetch(vin: string): Promise<FetchOutcome> {
    const response = await this.source.http.request({
      method: 'GET',
      url: `${this.source.settings.baseUrl}/DecodeVinValues/${encodeURIComponent(vin)}?format=json`,
      headers: { accept: 'application/json' },
    });
    if (response.status !== 200) throw new UpstreamError('unexpected-status', `unexpected HTTP ${response.status}`, response.status);
    const body = asObject(parseJson(response.text));
    if (!body) throw new UpstreamError('bad-response', 'HTTP 200 without a JSON object', 200);
    const result = objectArrayField(body, 'Results')[0];
    if (!result || stringField(result, 'Make') === undefined) return { status: 'not-found' };
    return { status: 'found', payload: result };
  }
}
