import type { UkvdConfig } from '../../config/paid-upstream-config.js';
import { asObject, numberField, parseJson, type JsonObject } from '../upstream/json-reader.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { recordedFetch, type AnswerSink } from '../upstream/answer-recording.js';
import { htmlPageError, statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/** The package UKMOT asks (commercial-upstreams.md §2.2 "MotHistoryDetails package"). */
export const UKVD_MOT_PACKAGE = 'MotHistoryDetails';

/**
 * What the `ukvd` source keeps of an answer with data: the package asked and r2's `Results`
 * object as sent (VehicleDetails, ModelDetails, MotHistoryDetails... blocks, each with its own
 * StatusCode). The mappers read it; the cache holds it.
 */
export interface UkvdPayload {
  readonly package: string;
  readonly results: JsonObject;
}

/**
 * r2's StatusCode enum (UKVD-OAS, commercial-upstreams.md §2.2), grouped by what each means for
 * the router. Codes not listed here are not in the enum: a bad response.
 */
const FOUND = new Set([0, 1, 24]);
const NOT_FOUND = new Set([2, 25, 26]);
/** 21: the plate is held on a retention certificate; r2 returns the vehicle it was last on, which is not this plate's vehicle now. */
const RETAINED_PLATE = 21;
/** 6: the sandbox refuses search terms it has no data for (only VRMs with an "A"); 13: no such registration mark. */
const BAD_SEARCH_TERM = new Set([6, 13]);
const UNAVAILABLE = new Set([10, 17]);
const RATE = new Set([19, 27]);
const DAILY_LIMIT = new Set([20, 28]);
/** 4, 5: the account's IP or custom filter refuses us; 7: unknown key; 18, 22: the key may not use the package; 23: account not active. */
const CREDENTIALS = new Set([4, 5, 7, 18, 22, 23]);
/** 8: UKVD_PACKAGE is unknown to r2: the operator's configuration, never retried. */
const UNKNOWN_PACKAGE = 8;
/** Our request was malformed (9, 11, 12, 14, 15, 29): a bug on our side, not the vehicle's absence. */
const OUR_BUG = new Set([9, 11, 12, 14, 15, 29]);

/** BillingResult (UKVD-OAS): 1 InsufficientFunds, 2 OverageCapMet, 3 BillingAccountNotFound. */
const INSUFFICIENT_FUNDS = 1;
const OVERAGE_CAP_MET = 2;
const BILLING_ACCOUNT_NOT_FOUND = 3;

/** A block's or the response's StatusCode, when it is a number. */
function statusCodeOf(block: JsonObject | undefined): number | undefined {
  return block ? numberField(block, 'StatusCode') : undefined;
}

/**
 * The meaning of one r2 answer (commercial-upstreams.md §2.2, §5): found (with r2's
 * TransactionCost net of any RefundAmount, and its AccountBalance), not found, or an UpstreamError
 * of the kind the router acts on. `block` is the Results block the operation needs
 * (VehicleDetails or MotHistoryDetails): a package answer whose block failed is no answer.
 */
export function classifyUkvd(status: number, text: string, packageName: string, block: string): FetchOutcome {
  const page = htmlPageError(status, text);
  if (page) throw page;
  const body = asObject(parseJson(text));
  const info = body ? asObject(body.ResponseInformation) : undefined;
  const code = statusCodeOf(info);
  const billing = body ? asObject(body.BillingInformation) : undefined;
  const billingResult = billing ? numberField(billing, 'BillingResult') : undefined;
  const named = code !== undefined ? ` (StatusCode ${code})` : '';

  if (status === 401) throw new UpstreamError('auth', `UK Vehicle Data refused the API key (HTTP 401${code !== undefined ? `, StatusCode ${code}` : ''})`, 401);
  if (status === 429) {
    if (code !== undefined && DAILY_LIMIT.has(code)) throw new UpstreamError('quota', `UK Vehicle Data daily limit reached${named}`, 429);
    throw new UpstreamError('rate-limited', `UK Vehicle Data rate limit (HTTP 429${code !== undefined ? `, StatusCode ${code}` : ''})`, 429);
  }
  if (status >= 500) throw new UpstreamError('server-error', `HTTP ${status}${named}`, status);
  if (status !== 200) throw statusError(status);
  if (!body || code === undefined) throw new UpstreamError('bad-response', 'HTTP 200 without an r2 ResponseInformation.StatusCode', 200);

  // Funds are read before the status: a BillingFailure (3) says why only in BillingInformation.
  if (billingResult === INSUFFICIENT_FUNDS) throw new UpstreamError('out-of-funds', 'UK Vehicle Data account has insufficient funds (BillingResult 1)', 200);
  if (billingResult === OVERAGE_CAP_MET) throw new UpstreamError('quota', 'UK Vehicle Data overage cap met (BillingResult 2)', 200);
  if (billingResult === BILLING_ACCOUNT_NOT_FOUND) throw new UpstreamError('auth', 'UK Vehicle Data has no billing account for the API key (BillingResult 3)', 200);
  if (code === 3) throw new UpstreamError('out-of-funds', 'UK Vehicle Data billing failure (StatusCode 3)', 200);
  if (CREDENTIALS.has(code)) throw new UpstreamError('auth', `UK Vehicle Data refused the API key or package${named}`, 200);
  if (code === UNKNOWN_PACKAGE) throw new UpstreamError('auth', `UK Vehicle Data does not know the package ${packageName}${named}`, 200);
  if (DAILY_LIMIT.has(code)) throw new UpstreamError('quota', `UK Vehicle Data daily limit reached${named}`, 200);
  if (RATE.has(code)) throw new UpstreamError('rate-limited', `UK Vehicle Data concurrency limit${named}`, 200);
  if (UNAVAILABLE.has(code)) throw new UpstreamError('server-error', `UK Vehicle Data's sources are unavailable${named}`, 200);
  if (OUR_BUG.has(code)) throw new UpstreamError('unexpected-status', `UK Vehicle Data refused the request${named}`, 200);
  if (NOT_FOUND.has(code) || code === RETAINED_PLATE) return { status: 'not-found' };
  // Not cached: a plate refused as malformed may be our normalisation's fault.
  if (BAD_SEARCH_TERM.has(code)) return { status: 'not-found', cache: false };
  if (!FOUND.has(code)) throw new UpstreamError('bad-response', `UK Vehicle Data StatusCode ${code} is not in the r2 enum`, 200);

  const results = asObject(body.Results);
  const wanted = results ? asObject(results[block]) : undefined;
  const blockCode = statusCodeOf(wanted);
  if (!results || !wanted) {
    // Code 1 with the block missing: the block failed; an answer without it has nothing to map.
    if (code === 1) return { status: 'not-found', cache: false };
    throw new UpstreamError('bad-response', `the ${packageName} answer has no ${block} block`, 200);
  }
  if (blockCode !== undefined && NOT_FOUND.has(blockCode)) return { status: 'not-found' };
  if (blockCode !== undefined && UNAVAILABLE.has(blockCode)) throw new UpstreamError('server-error', `the ${block} block is unavailable (StatusCode ${blockCode})`, 200);
  if (blockCode !== undefined && !FOUND.has(blockCode)) throw new UpstreamError('bad-response', `the ${block} block failed (StatusCode ${blockCode})`, 200);

  const payload: UkvdPayload = { package: packageName, results };
  const cost = billing ? numberField(billing, 'TransactionCost') : undefined;
  const refund = billing ? numberField(billing, 'RefundAmount') : undefined;
  const balance = billing ? numberField(billing, 'AccountBalance') : undefined;
  return {
    status: 'found',
    payload,
    // A partial answer (code 1) refunds what it could not return: the call cost the difference.
    ...(cost !== undefined ? { cost: Math.max(0, Math.round((cost - (refund ?? 0)) * 1e6) / 1e6) } : {}),
    ...(balance !== undefined ? { balance } : {}),
  };
}

/**
 * UK Vehicle Data's r2 lookup API (commercial-upstreams.md §2.2): `GET {base}/r2/lookup?ApiKey=
 * &PackageName=&Vrm=`. The key travels in the query string because that is r2's documented way;
 * the redactor keeps it out of every message. One attempt per lookup: every call may be billed,
 * and the router is the only retry loop (§10). A 429 and a 5xx are read, not retried: their
 * bodies carry r2's StatusCode, which tells a daily limit from a concurrency limit.
 */
export class UkvdClient extends UpstreamClient {
  constructor(
    context: UpstreamContext,
    private readonly config: UkvdConfig,
    /** Where each answer fetched is recorded (UKVD_RECORD_FILE). */
    private readonly record?: AnswerSink,
  ) {
    super(context, config.settings, [config.apiKey, encodeURIComponent(config.apiKey)]);
  }

  /** The `packageName` answer for a registration (upper case, no spaces), whose `block` the caller maps. */
  lookup(packageName: string, block: string, vrm: string, operation: string): Promise<UpstreamAnswer> {
    const key = `${packageName}|${vrm}`;
    return this.source.lookup(key, recordedFetch(() => this.fetch(packageName, block, vrm), this.record, key, operation), { operation });
  }

  private async fetch(packageName: string, block: string, vrm: string): Promise<FetchOutcome> {
    const params = new URLSearchParams({ ApiKey: this.config.apiKey, PackageName: packageName, Vrm: vrm });
    const response = await this.request({ path: `/r2/lookup?${params.toString()}`, billed: true });
    return classifyUkvd(response.status, response.text, packageName, block);
  }
}
