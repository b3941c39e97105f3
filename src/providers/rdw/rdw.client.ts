import type { RdwConfig } from '../../config/provider-config.js';
import { asObject, type JsonObject } from '../upstream/json-reader.js';
import { statusError, UpstreamClient } from '../upstream/upstream-client.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/** "Gekentekende voertuigen" and its fuel dataset (upstream-sources.md §3). */
export const RDW_VEHICLE_DATASET = 'm9d7-ebf2';
export const RDW_FUEL_DATASET = '8ys7-d773';

/** What a found RDW lookup carries: the register row and the plate's fuel rows, as RDW sent them. */
export interface RdwPayload {
  readonly vehicle: JsonObject;
  readonly fuels: readonly JsonObject[];
}

/**
 * RDW Open Data (Socrata, upstream-sources.md §3): `GET {base}/resource/m9d7-ebf2.json?kenteken=`
 * and, when the plate exists, the same on the fuel dataset `8ys7-d773`. No key is needed; an app
 * token (`X-App-Token`) only raises the throttle ceiling. An unknown plate is HTTP 200 with `[]`.
 * Both answers are cached together by plate.
 */
export class RdwClient extends UpstreamClient {
  constructor(
    context: UpstreamContext,
    private readonly config: RdwConfig,
  ) {
    super(context, config.settings, [config.appToken]);
  }

  /** The register row and fuel rows of a plate (upper case, no hyphens). */
  vehicle(kenteken: string): Promise<UpstreamAnswer> {
    return this.source.lookup(kenteken, () => this.fetch(kenteken));
  }

  private async fetch(kenteken: string): Promise<FetchOutcome> {
    // One budget for both requests, as for any lookup that makes several (http-client.ts).
    const deadline = this.deadline();
    const vehicles = await this.rows(RDW_VEHICLE_DATASET, kenteken, deadline);
    const vehicle = vehicles[0];
    if (vehicle === undefined) return { status: 'not-found' };
    const fuels = await this.rows(RDW_FUEL_DATASET, kenteken, deadline);
    const payload: RdwPayload = { vehicle, fuels };
    return { status: 'found', payload };
  }

  /** The rows of one dataset for a plate; throws UpstreamError for anything but a 200 JSON array. */
  private async rows(dataset: string, kenteken: string, deadline: number): Promise<JsonObject[]> {
    const path = `/resource/${dataset}.json?kenteken=${encodeURIComponent(kenteken)}`;
    const headers = this.config.appToken !== undefined ? { 'x-app-token': this.config.appToken } : {};
    const response = await this.request({ path, headers, deadline, endpoint: dataset });
    if (response.status === 200) {
      const body = response.json;
      if (!Array.isArray(body)) throw new UpstreamError('bad-response', `HTTP 200 from ${dataset} without a JSON array`, 200);
      return (body as unknown[]).map(asObject).filter((row): row is JsonObject => row !== undefined);
    }
    throw failure(dataset, response.status);
  }
}

/** Socrata's documented codes (§3 "response-codes"): none of them is an answer about the plate. */
function failure(dataset: string, status: number): UpstreamError {
  // "Processing, retry": the answer is not ready; the caller may ask again.
  if (status === 202) return new UpstreamError('unexpected-status', `RDW is still processing the query (HTTP 202 from ${dataset})`, status);
  return statusError(status, { refused: `RDW refused the app token (HTTP ${status} from ${dataset})`, detail: ` from ${dataset}` });
}
