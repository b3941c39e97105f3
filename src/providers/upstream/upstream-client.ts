import type { UpstreamSettings } from '../../config/upstream-settings.js';
import type { UpstreamResponse } from './http-client.js';
import { asObject, parseJson, type JsonObject } from './json-reader.js';
import { PAID_REQUEST_HEADERS } from './paid-request.js';
import { UpstreamError } from './upstream-error.js';
import { UpstreamSource, type UpstreamContext } from './upstream-source.js';

/** One request of an upstream client, relative to the provider's base URL (`<NAME>_BASE_URL`). */
export interface ClientRequest {
  /** Default GET. */
  readonly method?: 'GET' | 'POST';
  /** Path and query after the base URL ("/v1/vehicles", "/resource/x.json?kenteken=AB12"). */
  readonly path: string;
  /** Headers beside `accept: application/json` (which a client may replace: the original answers XML). */
  readonly headers?: Readonly<Record<string, string>>;
  /** A JSON body (sent with `content-type: application/json`). */
  readonly json?: unknown;
  /** See UpstreamRequest.idempotent; ignored for a billed request (never repeated). */
  readonly idempotent?: boolean;
  /** The metrics label of the endpoint (UpstreamRequest.endpoint); default "lookup". */
  readonly endpoint?: string;
  /** The lookup's deadline when it makes several requests (`UpstreamClient.deadline()`). */
  readonly deadline?: number;
  /**
   * A request to a paid upstream that bills each call (UKVD, Vincario, CarsXE, the original): sent
   * once and never repeated, on a connection of its own (PAID_REQUEST_HEADERS), and its 5xx and 429
   * are handed back to be read (their bodies say which limit or fault), not retried.
   */
  readonly billed?: boolean;
}

/** An answer the HTTP client did not treat as a failure, with its body read as JSON. */
export interface ClientResponse extends UpstreamResponse {
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
  /** The body when it is a JSON object (not an array, not null), else undefined. */
  readonly object: JsonObject | undefined;
}

/**
 * The one mapping of an HTTP status that is not an answer about the vehicle, for every upstream
 * client (each handles the statuses its provider documents first, then calls this):
 * - 401 and 403 → `auth` with `refused` (the client's own words, naming what was refused, e.g.
 *   "DVLA refused the API key (HTTP 403)"); without `refused` they are unexpected statuses, for
 *   keyless registers where a refusal says nothing about a key;
 * - 5xx (which reach a client only for billed requests: the HTTP client retries and throws them
 *   otherwise) → `server-error` "HTTP {status}{detail}";
 * - anything else → `unexpected-status` "unexpected HTTP {status}{detail}".
 * `detail` is appended to both (", MOTH-UA-01", " from m9d7-ebf2").
 */
export function statusError(status: number, options: { readonly refused?: string; readonly detail?: string } = {}): UpstreamError {
  const detail = options.detail ?? '';
  if ((status === 401 || status === 403) && options.refused !== undefined) return new UpstreamError('auth', options.refused, status);
  if (status >= 500) return new UpstreamError('server-error', `HTTP ${status}${detail}`, status);
  return new UpstreamError('unexpected-status', `unexpected HTTP ${status}${detail}`, status);
}

/** The first bytes of an HTML page (a maintenance page, a proxy's or a WAF's error page). */
const HTML = /^\s*(<!doctype html|<html)/i;

/**
 * The failure a body that is an HTML page stands for, or undefined when it is not one: a 5xx with
 * a page is the provider down (`server-error`), anything else with a page is no answer in the
 * expected format (`bad-response`).
 */
export function htmlPageError(status: number, text: string, expected: 'JSON' | 'XML' = 'JSON'): UpstreamError | undefined {
  if (!HTML.test(text)) return undefined;
  return status >= 500 ? new UpstreamError('server-error', `HTTP ${status} with an HTML page`, status) : new UpstreamError('bad-response', `HTTP ${status} with an HTML page instead of ${expected}`, status);
}

/** The response's JSON object, or a `bad-response` "HTTP {status} without {what}". */
export function requireObject(response: { readonly status: number; readonly object: JsonObject | undefined }, what = 'a JSON object'): JsonObject {
  if (!response.object) throw new UpstreamError('bad-response', `HTTP ${response.status} without ${what}`, response.status);
  return response.object;
}

/**
 * What every upstream client shares: its UpstreamSource (cache, single flight, breaker, HTTP
 * client, redactor, reports), its name, one budget for a lookup's requests, and requests that
 * ask for JSON and read the answer. A client adds only what its provider's API says: the request
 * of each lookup and what each answer means.
 *
 * ```ts
 * export class ExampleClient extends UpstreamClient {
 *   constructor(context: UpstreamContext, private readonly config: ExampleConfig) {
 *     super(context, config.settings, [config.apiKey]);
 *   }
 *   vehicle(plate: string): Promise<UpstreamAnswer> {
 *     return this.source.lookup(plate, async () => {
 *       const response = await this.request({ path: `/vehicles/${encodeURIComponent(plate)}`, headers: { 'x-api-key': this.config.apiKey } });
 *       if (response.status === 404) return { status: 'not-found' };
 *       if (response.status !== 200) throw statusError(response.status, { refused: `Example refused the API key (HTTP ${response.status})` });
 *       return { status: 'found', payload: requireObject(response) };
 *     });
 *   }
 * }
 * ```
 */
export abstract class UpstreamClient {
  protected readonly source: UpstreamSource;

  /** `secrets`: the provider's keys and secrets, hidden from every message the source produces. */
  protected constructor(context: UpstreamContext, settings: UpstreamSettings, secrets: readonly (string | undefined)[] = []) {
    this.source = new UpstreamSource(settings, context, secrets);
  }

  get name(): string {
    return this.source.name;
  }

  /** The deadline of a lookup that makes several requests: they share one `<NAME>_BUDGET_MS`. */
  protected deadline(): number {
    return this.source.http.deadlineIn(this.source.settings.budgetMs);
  }

  /** The absolute URL of a path under the provider's base URL. */
  protected urlOf(path: string): string {
    return `${this.source.settings.baseUrl}${path}`;
  }

  /** One request, asking for JSON; the answer's body read as JSON (never throws for a body that is not). */
  protected async request(request: ClientRequest): Promise<ClientResponse> {
    const method = request.method ?? 'GET';
    const base = request.billed ? PAID_REQUEST_HEADERS : { accept: 'application/json' };
    const headers = { ...base, ...(request.json !== undefined ? { 'content-type': 'application/json' } : {}), ...request.headers };
    const response = await this.source.http.request({
      method,
      url: this.urlOf(request.path),
      headers,
      ...(request.json !== undefined ? { body: JSON.stringify(request.json) } : {}),
      ...(request.billed ? { idempotent: false, readServerErrors: true, readRateLimits: true } : request.idempotent !== undefined ? { idempotent: request.idempotent } : {}),
      ...(request.endpoint !== undefined ? { endpoint: request.endpoint } : {}),
      ...(request.deadline !== undefined ? { deadline: request.deadline } : {}),
    });
    const json = parseJson(response.text);
    return { status: response.status, headers: response.headers, text: response.text, json, object: asObject(json) };
  }
}
