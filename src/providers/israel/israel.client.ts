import { asObject, numberField, objectArrayField, stringField, type JsonObject } from '../upstream/json-reader.js';
import { statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { IsraelConfig } from '../../config/provider-config.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';
import { foldFieldNames, ISRAEL_MODEL_CATALOGUE, ISRAEL_REGISTERS, plateFilterValue, type IsraelRegister } from './israel-registers.js';

/** CKAN's action path (the older `/api/action/` works too; this is the documented one). */
export const CKAN_SEARCH_PATH = '/api/3/action/datastore_search';

/**
 * data.gov.il's WAF refuses default library user agents with 403 (upstream-sources.md §10.1):
 * say who we are, in the form browsers and well-behaved clients use.
 */
const USER_AGENT = 'Mozilla/5.0 (compatible; vehicle-lookup; +https://data.gov.il/terms-of-use)';

/** What a found Israeli lookup carries (and the cache keeps), field names folded (israel-registers.ts). */
export interface IsraelPayload {
  /** `IsraelRegister.key` of the register the plate was found in. */
  readonly register: string;
  readonly record: JsonObject;
  /** The model catalogue's row for the vehicle's make, model and year, when it has one. */
  readonly model?: JsonObject;
}

/**
 * The Ministry of Transport registers on data.gov.il (upstream-sources.md §10.1), through CKAN's
 * `GET /api/3/action/datastore_search?resource_id=&filters=&limit=`: an exact filter on the
 * plate, always with a limit (without one CKAN pages 32,000 rows). The registers are asked in
 * the order of ISRAEL_REGISTERS until one has the plate; then the model catalogue for the engine
 * and seats. Every request of a lookup shares one budget. An unknown plate is HTTP 200 with no
 * records in every register; a body that is not CKAN's JSON with `success: true` (the WAF's or a
 * maintenance HTML page, which comes with HTTP 200) is a failure, never a not-found.
 */
export class IsraelClient extends UpstreamClient {
  constructor(context: UpstreamContext, config: IsraelConfig) {
    super(context, config.settings);
  }

  /** The vehicle of a plate of digits (as typed: leading zeros are the registers' business). */
  vehicle(plate: string): Promise<UpstreamAnswer> {
    return this.source.lookup(plate, () => this.fetch(plate));
  }

  private async fetch(plate: string): Promise<FetchOutcome> {
    const deadline = this.deadline();
    for (const register of ISRAEL_REGISTERS) {
      const records = await this.search(register.resourceId, { [register.plateField]: plateFilterValue(register, plate) }, 1, deadline, register.key);
      const found = records[0];
      if (found === undefined) continue;
      const record = foldFieldNames(found);
      const model = await this.model(record, deadline);
      const payload: IsraelPayload = { register: register.key, record, ...(model ? { model } : {}) };
      return { status: 'found', payload };
    }
    return { status: 'not-found' };
  }

  /** The catalogue row of the record's make code, model code and year (+ model type), if any. */
  private async model(record: JsonObject, deadline: number): Promise<JsonObject | undefined> {
    const make = numberField(record, 'tozeret_cd');
    const model = numberField(record, 'degem_cd');
    const year = numberField(record, 'shnat_yitzur');
    if (make === undefined || model === undefined || year === undefined) return undefined;
    const type = stringField(record, 'sug_degem');
    const filters = { tozeret_cd: make, degem_cd: model, shnat_yitzur: year, ...(type !== undefined ? { sug_degem: type } : {}) };
    const rows = await this.search(ISRAEL_MODEL_CATALOGUE, filters, 1, deadline, 'model-catalogue');
    return rows[0] ? foldFieldNames(rows[0]) : undefined;
  }

  /** The records of one `datastore_search`; throws UpstreamError for anything but CKAN's success envelope. */
  private async search(resourceId: string, filters: Record<string, number | string>, limit: number, deadline: number, endpoint: string): Promise<JsonObject[]> {
    const query = new URLSearchParams({ resource_id: resourceId, filters: JSON.stringify(filters), limit: String(limit) });
    const response = await this.request({ path: `${CKAN_SEARCH_PATH}?${query.toString()}`, headers: { 'user-agent': USER_AGENT }, deadline, endpoint });
    const body = response.object;
    if (response.status === 200) {
      // A WAF block or a maintenance page comes back as HTML with HTTP 200 (§10.1 "Errors").
      if (!body || body.success !== true) throw new UpstreamError('bad-response', `HTTP 200 from ${endpoint} without a CKAN success answer`, 200);
      const result = asObject(body.result);
      if (!result || !Array.isArray(result.records)) throw new UpstreamError('bad-response', `CKAN answer from ${endpoint} without result.records`, 200);
      return objectArrayField(result, 'records');
    }
    throw failure(endpoint, response.status, body);
  }
}

/** CKAN's error answers (`success: false`, `error.__type`) and the WAF's refusals. */
function failure(endpoint: string, status: number, body: JsonObject | undefined): UpstreamError {
  const type = asObject(body?.error)?.__type;
  const kind = typeof type === 'string' && /^[A-Za-z ]{1,40}$/.test(type) ? ` (${type})` : '';
  switch (status) {
    case 403:
      return new UpstreamError('auth', `data.gov.il refused the request (HTTP 403 from ${endpoint}${kind}; a WAF block?)`, status);
    case 409:
      // A validation error: our filter does not fit the register (a number for a text column).
      return new UpstreamError('bad-response', `CKAN refused the query to ${endpoint}${kind}`, status);
    default:
      // data.gov.il takes no key: a 401 is no refused credential, so it stays an unexpected status.
      return statusError(status, { detail: ` from ${endpoint}${kind}` });
  }
}

/** The register a payload came from. */
export function registerOf(payload: IsraelPayload): IsraelRegister | undefined {
  return ISRAEL_REGISTERS.find((r) => r.key === payload.register);
}
