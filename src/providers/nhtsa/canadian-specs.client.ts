import type { CanadaSpecsConfig } from '../../config/provider-config.js';
import { asObject, numberField, objectArrayField, parseJson } from '../upstream/json-reader.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { UpstreamSource, type FetchOutcome, type UpstreamAnswer, type UpstreamContext } from '../upstream/upstream-source.js';

/** What a Canadian specifications search asks for. */
export interface SpecsSearch {
  readonly make: string;
  readonly model: string;
  readonly year: number;
}

/**
 * vPIC GetCanadianVehicleSpecifications (upstream-sources.md §10.6): `GET {base}/
 * GetCanadianVehicleSpecifications/?Year=&Make=&Model=&units=&format=json`, no key. All four
 * query keys must be present (vPIC answers a 404 HTML page otherwise, the only vPIC action that
 * does), so each is always sent. The answer is `{Count, Message, SearchCriteria, Results:
 * [{Specs: [{Name, Value}]}]}`, one result per model variant; `Count: 0` (or no `Results`) means
 * none. Found answers carry the `Results` array, cached by year, make and model.
 */
export class CanadianSpecsClient {
  constructor(private readonly source: UpstreamSource) {}

  static create(context: UpstreamContext, config: CanadaSpecsConfig): CanadianSpecsClient {
    return new CanadianSpecsClient(new UpstreamSource(config.settings, context));
  }

  get name(): string {
    return this.source.name;
  }

  /** The specifications of every variant of a make and model in a year (metric units). */
  specifications(search: SpecsSearch): Promise<UpstreamAnswer> {
    const key = `${search.year}|${search.make}|${search.model}`.toUpperCase();
    return this.source.lookup(key, () => this.fetch(search));
  }

  private async fetch(search: SpecsSearch): Promise<FetchOutcome> {
    const query = new URLSearchParams({ Year: String(search.year), Make: search.make, Model: search.model, units: 'Metric', format: 'json' });
    const response = await this.source.http.request({
      method: 'GET',
      url: `${this.source.settings.baseUrl}/GetCanadianVehicleSpecifications/?${query.toString()}`,
      headers: { accept: 'application/json' },
    });
    if (response.status !== 200) throw new UpstreamError('unexpected-status', `unexpected HTTP ${response.status}`, response.status);
    const body = asObject(parseJson(response.text));
    if (!body) throw new UpstreamError('bad-response', 'HTTP 200 without a JSON object', 200);
    const results = objectArrayField(body, 'Results');
    if (numberField(body, 'Count') === 0 || results.length === 0) return { status: 'not-found' };
    return { status: 'found', payload: results };
  }
}
