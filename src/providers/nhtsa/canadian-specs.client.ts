import type { CanadaSpecsConfig } from '../../config/provider-config.js';
import { numberField, objectArrayField } from '../upstream/json-reader.js';
import { requireObject, statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

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
export class CanadianSpecsClient extends UpstreamClient {
  constructor(context: UpstreamContext, config: CanadaSpecsConfig) {
    super(context, config.settings);
  }

  /** The specifications of every variant of a make and model in a year (metric units). */
  specifications(search: SpecsSearch): Promise<UpstreamAnswer> {
    const key = `${search.year}|${search.make}|${search.model}`.toUpperCase();
    return this.source.lookup(key, () => this.fetch(search));
  }

  private async fetch(search: SpecsSearch): Promise<FetchOutcome> {
    const query = new URLSearchParams({ Year: String(search.year), Make: search.make, Model: search.model, units: 'Metric', format: 'json' });
    const response = await this.request({ path: `/GetCanadianVehicleSpecifications/?${query.toString()}` });
    if (response.status !== 200) throw statusError(response.status);
    const body = requireObject(response);
    const results = objectArrayField(body, 'Results');
    if (numberField(body, 'Count') === 0 || results.length === 0) return { status: 'not-found' };
    return { status: 'found', payload: results };
  }
}
