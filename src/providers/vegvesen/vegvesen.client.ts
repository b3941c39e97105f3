import type { VegvesenConfig } from '../../config/provider-config.js';
import { asObject, objectArrayField, parseJson } from '../upstream/json-reader.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { UpstreamSource, type FetchOutcome, type UpstreamAnswer, type UpstreamContext } from '../upstream/upstream-source.js';

/** The single-lookup path under the base URL (upstream-sources.md §5). */
export const VEGVESEN_LOOKUP_PATH = '/enkeltoppslag/kjoretoydata';

/**
 * Statens vegvesen "kjøretøyopplysninger", single lookup (upstream-sources.md §5):
 * `GET {base}/enkeltoppslag/kjoretoydata?kjennemerke=` with `SVV-Authorization: Apikey <key>`.
 * Found answers carry the first record of `kjoretoydataListe` as given; 204 and 404 mean no
 * vehicle, 403 a bad or expired key. Answers are cached by plate.
 */
export class VegvesenClient {
  constructor(
    private readonly source: UpstreamSource,
    private readonly apiKey: string,
  ) {}

  static create(context: UpstreamContext, config: VegvesenConfig): VegvesenClient {
    return new VegvesenClient(new UpstreamSource(config.settings, context, [config.apiKey]), config.apiKey);
  }

  get name(): string {
    return this.source.name;
  }

  /** The vehicle record of a plate (upper case, no spaces). */
  vehicle(kjennemerke: string): Promise<UpstreamAnswer> {
    return this.source.lookup(kjennemerke, () => this.fetch(kjennemerke));
  }

  private async fetch(kjennemerke: string): Promise<FetchOutcome> {
    const response = await this.source.http.request({
      method: 'GET',
      url: `${this.source.settings.baseUrl}${VEGVESEN_LOOKUP_PATH}?kjennemerke=${encodeURIComponent(kjennemerke)}`,
      headers: { 'SVV-Authorization': `Apikey ${this.apiKey}`, accept: 'application/json' },
    });
    switch (response.status) {
      case 200: {
        const body = asObject(parseJson(response.text));
        if (!body) throw new UpstreamError('bad-response', 'HTTP 200 without a JSON object', 200);
        const record = objectArrayField(body, 'kjoretoydataListe')[0];
        return record ? { status: 'found', payload: record } : { status: 'not-found' };
      }
      case 204:
      case 404:
        // No vehicle with this plate (§5 "Status codes", from client handling).
        return { status: 'not-found' };
      case 400:
        // A plate the register refuses to look up: no such vehicle, not cached in case we erred.
        return { status: 'not-found', cache: false };
      case 401:
      case 403:
        throw new UpstreamError('auth', `Statens vegvesen refused the API key (HTTP ${response.status})`, response.status);
      default:
        throw new UpstreamError('unexpected-status', `unexpected HTTP ${response.status}`, response.status);
    }
  }
}
