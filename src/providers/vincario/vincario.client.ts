import { createHash } from 'node:crypto';
import type { VincarioConfig } from '../../config/paid-upstream-config.js';
import { asObject, numberField, objectArrayField, parseJson, stringField, type JsonObject } from '../upstream/json-reader.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { recordedFetch, type AnswerSink } from '../upstream/answer-recording.js';
import { htmlPageError, requireObject, statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/** The two Vincario actions we ask (commercial-upstreams.md §3.1): the path and the operation id in the control sum. */
export type VincarioService = 'decode' | 'stolen-check';

/** Each action's counter in Vincario's `balance` object (§3.2, §3.3): lookups left, not money. */
const BALANCE_NAME: Readonly<Record<VincarioService, string>> = { decode: 'API Decode', 'stolen-check': 'API Stolen Check' };

/** What the `vincario` source keeps of an answer: the decode list, or the stolen-check registers. */
export type VincarioPayload =
  | { readonly service: 'decode'; readonly decode: readonly JsonObject[] }
  | { readonly service: 'stolen-check'; readonly stolen: readonly JsonObject[] };

/**
 * The control sum of a call (VN-OAS, §3.1): the first 10 hex characters of
 * sha1("{VIN}|{operation id}|{API key}|{secret}"). The VIN is sent upper case, so it is summed
 * upper case: a casing difference is one cause of "Invalid Control sum".
 */
export function controlSum(vin: string, service: VincarioService, apiKey: string, secret: string): string {
  return createHash('sha1').update(`${vin.toUpperCase()}|${service}|${apiKey}|${secret}`).digest('hex').slice(0, 10);
}

const RATE_LIMIT = /reached limit of \d+ requests per/i;

/**
 * The meaning of one Vincario answer (§3.4, §5). Errors are documented as `{error: true,
 * message}` bodies under HTTP 200; they are read whatever the status, in case a deployment sends
 * them with a 4xx. "Not recognized" is not found; an invalid VIN too, but not cached (our
 * validation let it through); "Not Enough Lookups" is out of funds; an unknown key or a control
 * sum refused is bad credentials; the per-minute limit is a rate limit.
 */
export function classifyVincario(status: number, text: string, service: VincarioService): FetchOutcome {
  const page = htmlPageError(status, text);
  if (page) throw page;
  if (status >= 500) throw statusError(status);
  const parsed = asObject(parseJson(text));
  if (parsed && parsed.error === true) {
    const message = stringField(parsed, 'message') ?? '';
    if (/^unknown api key/i.test(message)) throw new UpstreamError('auth', 'Vincario does not know the API key (VINCARIO_API_KEY)', status);
    if (/^invalid control sum/i.test(message)) throw new UpstreamError('auth', 'Vincario refused the control sum (check VINCARIO_SECRET)', status);
    if (/^not enough lookups/i.test(message)) throw new UpstreamError('out-of-funds', `Vincario has no ${BALANCE_NAME[service]} lookups left`, status);
    if (RATE_LIMIT.test(message)) throw new UpstreamError('rate-limited', 'Vincario per-minute request limit reached', status);
    if (/^not recognized/i.test(message)) return { status: 'not-found' };
    if (/^invalid/i.test(message)) return { status: 'not-found', cache: false };
    throw new UpstreamError('bad-response', `Vincario answered an undocumented error (HTTP ${status})`, status);
  }
  if (status === 429) throw new UpstreamError('rate-limited', 'Vincario rate limit (HTTP 429)', 429);
  if (status !== 200) throw statusError(status);
  const body = requireObject({ status, object: parsed });

  const price = numberField(body, 'price');
  const balances = asObject(body.balance);
  const balance = balances ? numberField(balances, BALANCE_NAME[service]) : undefined;
  // A prepaid call says price 0 (it used one of the lookups `balance` counts): the configured
  // VINCARIO_PRICE is then the better figure, so only a charge is reported as the call's cost.
  // The charge is in `price_currency` (VN-OAS: CZK, USD...); the router uses it only in UPSTREAM_CURRENCY.
  const currency = stringField(body, 'price_currency')?.toUpperCase();
  const signals = {
    ...(price !== undefined && price > 0 ? { cost: price, ...(currency !== undefined ? { costCurrency: currency } : {}) } : {}),
    ...(balance !== undefined ? { balance } : {}),
  };

  if (service === 'decode') {
    if (!Array.isArray(body.decode)) throw new UpstreamError('bad-response', 'the decode answer has no decode list', 200);
    const decode = objectArrayField(body, 'decode');
    if (decode.length === 0) return { status: 'not-found' };
    return { status: 'found', payload: { service, decode } satisfies VincarioPayload, ...signals };
  }
  if (!Array.isArray(body.stolen)) throw new UpstreamError('bad-response', 'the stolen-check answer has no stolen list', 200);
  const stolen = objectArrayField(body, 'stolen');
  const statuses = stolen.map((r) => stringField(r, 'status'));
  // "could-not-verify": the police register did not answer (VN-OAS: retry later). Without a
  // "stolen" elsewhere the answer cannot say "not stolen", and an unavailable register must never
  // read as not stolen (array-of-name-value.codec.ts), so it is no answer at all.
  if (!statuses.includes('stolen') && statuses.includes('could-not-verify')) {
    throw new UpstreamError('server-error', 'a stolen-vehicle register Vincario asks could not be verified', 200);
  }
  return { status: 'found', payload: { service, stolen } satisfies VincarioPayload, ...signals };
}

/**
 * Vincario's API 3.2 (commercial-upstreams.md §3): `GET {base}/{key}/{control sum}/{action}/{VIN}.json`.
 * The API key is in the path because that is the API; the secret only feeds the control sum and
 * is never sent, logged or put in a message (the redactor holds both). One attempt per lookup: each call is
 * billed, and the router is the only retry loop.
 */
export class VincarioClient extends UpstreamClient {
  constructor(
    context: UpstreamContext,
    private readonly config: VincarioConfig,
    /** Where each answer fetched is recorded (VINCARIO_RECORD_FILE). */
    private readonly record?: AnswerSink,
  ) {
    super(context, config.settings, [config.apiKey, encodeURIComponent(config.apiKey), config.secret, encodeURIComponent(config.secret)]);
  }

  /** The URL of one call (tests check the control sum against it). */
  url(service: VincarioService, vin: string): string {
    return this.urlOf(this.path(service, vin));
  }

  private path(service: VincarioService, vin: string): string {
    const { apiKey, secret } = this.config;
    const upper = vin.toUpperCase();
    return `/${encodeURIComponent(apiKey)}/${controlSum(upper, service, apiKey, secret)}/${service}/${encodeURIComponent(upper)}.json`;
  }

  lookup(service: VincarioService, vin: string, operation: string): Promise<UpstreamAnswer> {
    const key = `${service}|${vin.toUpperCase()}`;
    return this.source.lookup(key, recordedFetch(() => this.fetch(service, vin), this.record, key, operation), { operation });
  }

  private async fetch(service: VincarioService, vin: string): Promise<FetchOutcome> {
    const response = await this.request({ path: this.path(service, vin), billed: true });
    return classifyVincario(response.status, response.text, service);
  }
}
