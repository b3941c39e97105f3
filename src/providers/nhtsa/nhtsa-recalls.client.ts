import type { NhtsaRecallsConfig } from '../../config/provider-config.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/** The vehicle a recalls search asks about, as the Recalls API takes it. */
export interface RecallVehicle {
  readonly make: string;
  readonly model: string;
  readonly modelYear: number;
}

/**
 * NHTSA Recalls API (upstream-sources.md §10.4): `GET {base}/recalls/recallsByVehicle?make=&model=
 * &modelYear=`, no key. The path is case-sensitive (a wrong case answers 403). The answer is
 * `{Count, Message, results: [...]}` with a lower-case `results`.
 *
 * Found answers carry the `results` array (possibly empty: a vehicle with no recalls), cached by
 * make, model and year. NHTSA answers some vehicles without recalls with a 400 and an empty
 * `results` instead of a 200 (§10.4 "Errors"); that is reported as `not-found`, which the
 * provider reads as "no recalls", so it is kept only for the shorter not-found TTL: a 400 may
 * also be our request's fault. A 400 without that body, and any other status, is a failure.
 */
export class NhtsaRecallsClient extends UpstreamClient {
  constructor(context: UpstreamContext, config: NhtsaRecallsConfig) {
    super(context, config.settings);
  }

  /** The recall campaigns of a make, model and model year. */
  recalls(vehicle: RecallVehicle): Promise<UpstreamAnswer> {
    const key = `${vehicle.make}|${vehicle.model}|${vehicle.modelYear}`.toUpperCase();
    return this.source.lookup(key, () => this.fetch(vehicle));
  }

  private async fetch(vehicle: RecallVehicle): Promise<FetchOutcome> {
    const query = new URLSearchParams({ make: vehicle.make, model: vehicle.model, modelYear: String(vehicle.modelYear) });
    const response = await this.request({ path: `/recalls/recallsByVehicle?${query.toString()}` });
    if (response.status !== 200 && response.status !== 400) throw statusError(response.status);
    const results = response.object?.results;
    if (response.status === 400) {
      if (Array.isArray(results) && results.length === 0) return { status: 'not-found', cache: true };
      throw new UpstreamError('unexpected-status', 'HTTP 400 without the empty results of a vehicle with no recalls', 400);
    }
    if (!Array.isArray(results)) throw new UpstreamError('bad-response', 'HTTP 200 without a results array', 200);
    return { status: 'found', payload: results };
  }
}
