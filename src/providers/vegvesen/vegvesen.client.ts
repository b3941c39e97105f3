import type { VegvesenConfig } from '../../config/provider-config.js';
import { objectArrayField } from '../upstream/json-reader.js';
import { requireObject, statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/** The single-lookup path under the base URL (upstream-sources.md §5). */
export const VEGVESEN_LOOKUP_PATH = '/enkeltoppslag/kjoretoydata';

/**
 * Statens vegvesen "kjøretøyopplysninger", single lookup (upstream-sources.md §5):
 * `GET {base}/enkeltoppslag/kjoretoydata?kjennemerke=` with `SVV-Authorization: Apikey <key>`.
 * Found answers carry the first record of `kjoretoydataListe` as given; 204 and 404 mean no
 * vehicle, 403 a bad or expired key. Answers are cached by plate.
 */
export class VegvesenClient extends UpstreamClient {
  constructor(
    context: UpstreamContext,
    private readonly config: VegvesenConfig,
  ) {
    super(context, config.settings, [config.apiKey]);
  }

  /** The vehicle record of a plate (upper case, no spaces). */
  vehicle(kjennemerke: string): Promise<UpstreamAnswer> {
    return this.source.lookup(kjennemerke, () => this.fetch(kjennemerke));
  }

  private async fetch(kjennemerke: string): Promise<FetchOutcome> {
    const response = await this.request({
      path: `${VEGVESEN_LOOKUP_PATH}?kjennemerke=${encodeURIComponent(kjennemerke)}`,
      headers: { 'SVV-Authorization': `Apikey ${this.config.apiKey}` },
    });
    switch (response.status) {
      case 200: {
        const record = objectArrayField(requireObject(response), 'kjoretoydataListe')[0];
        return record ? { status: 'found', payload: record } : { status: 'not-found' };
      }
      case 204:
      case 404:
        // No vehicle with this plate (§5 "Status codes", from client handling).
        return { status: 'not-found' };
      case 400:
        // A plate the register refuses to look up: no such vehicle, not cached in case we erred.
        return { status: 'not-found', cache: false };
      default:
        throw statusError(response.status, { refused: `Statens vegvesen refused the API key (HTTP ${response.status})` });
    }
  }
}
