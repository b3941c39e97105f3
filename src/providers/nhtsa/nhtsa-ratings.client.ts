import { numberField, objectArrayField, type JsonObject } from '../upstream/json-reader.js';
import { statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { NhtsaRatingsConfig } from '../../config/provider-config.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/** The vehicle a ratings search asks about. */
export interface RatedVehicle {
  readonly make: string;
  readonly model: string;
  readonly modelYear: number;
}

/** Variants of one model year, make and model asked for at most (body styles, FWD/AWD). */
export const MAX_RATED_VARIANTS = 6;

/**
 * NHTSA 5-Star Safety Ratings API (upstream-sources.md §10.5), no key:
 * `GET {base}/SafetyRatings/modelyear/{y}/make/{make}/model/{model}` lists the variants
 * (`{VehicleDescription, VehicleId}`), then `GET {base}/SafetyRatings/VehicleId/{id}` gives each
 * one's ratings. The path's `SafetyRatings` is case-sensitive (403 otherwise). The envelope is
 * `{Count, Message, Results}` (upper-case `Results`). A vehicle NHTSA has not rated answers
 * `Count: 0` (or 404 for a make or model it does not know): not found. Found answers carry the
 * rating objects of every variant (at most MAX_RATED_VARIANTS), cached by make, model and year.
 */
export class NhtsaRatingsClient extends UpstreamClient {
  constructor(context: UpstreamContext, config: NhtsaRatingsConfig) {
    super(context, config.settings);
  }

  ratings(vehicle: RatedVehicle): Promise<UpstreamAnswer> {
    const key = `${vehicle.modelYear}|${vehicle.make}|${vehicle.model}`.toUpperCase();
    return this.source.lookup(key, () => this.fetch(vehicle));
  }

  private async fetch(vehicle: RatedVehicle): Promise<FetchOutcome> {
    const deadline = this.deadline();
    const path = `/SafetyRatings/modelyear/${vehicle.modelYear}/make/${encodeURIComponent(vehicle.make)}/model/${encodeURIComponent(vehicle.model)}`;
    const variants = await this.results(path, deadline, 'variants');
    if (variants === undefined) return { status: 'not-found' };
    const ids = variants.map((v) => numberField(v, 'VehicleId')).filter((id): id is number => id !== undefined && id > 0);
    const rated: JsonObject[] = [];
    for (const id of ids.slice(0, MAX_RATED_VARIANTS)) {
      const rating = (await this.results(`/SafetyRatings/VehicleId/${id}`, deadline, 'vehicle'))?.[0];
      if (rating) rated.push(rating);
    }
    return rated.length === 0 ? { status: 'not-found' } : { status: 'found', payload: rated };
  }

  /** `Results` of one request, or undefined for a 404 or an empty list. */
  private async results(path: string, deadline: number, endpoint: string): Promise<JsonObject[] | undefined> {
    const response = await this.request({ path, deadline, endpoint });
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw statusError(response.status, { detail: ` from ${endpoint}` });
    const body = response.object;
    if (!body || !Array.isArray(body.Results)) throw new UpstreamError('bad-response', `HTTP 200 from ${endpoint} without a Results array`, 200);
    const results = objectArrayField(body, 'Results');
    return results.length === 0 ? undefined : results;
  }
}
