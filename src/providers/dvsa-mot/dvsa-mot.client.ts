import { asObject, parseJson, stringField } from '../upstream/json-reader.js';
import { statusError, UpstreamClient, type ClientResponse } from '../upstream/upstream-client.js';
import { ClientCredentialsTokenSource } from '../upstream/oauth-client-credentials.js';
import type { DvsaMotConfig } from '../../config/provider-config.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

const ERROR_CODE = /^MOTH-[A-Z]{2}-\d{2}$/;

/**
 * The MOTH-xx-nn code of an error answer. The documentation does not confirm the JSON key names
 * (upstream-sources.md §2b "Errors"), so the usual candidates are tried; map by HTTP status first.
 */
export function mothErrorCode(text: string): string | undefined {
  const body = asObject(parseJson(text));
  if (!body) return undefined;
  const errors = Array.isArray(body.errors) ? (body.errors as unknown[]) : [];
  const first = asObject(errors[0]);
  for (const candidate of [stringField(body, 'errorCode'), stringField(body, 'code'), first ? stringField(first, 'errorCode') ?? stringField(first, 'code') : undefined]) {
    if (candidate !== undefined && ERROR_CODE.test(candidate)) return candidate;
  }
  return undefined;
}

/** Answers that mean "this token will not do": 401 (MOTH-UA-01), or 403 token expired / missing. */
function tokenRejected(response: ClientResponse): boolean {
  if (response.status === 401) return true;
  if (response.status !== 403) return false;
  const code = mothErrorCode(response.text);
  return code === 'MOTH-FB-02' || code === 'MOTH-FB-04';
}

/**
 * DVSA MOT history API, the new one (upstream-sources.md §2b): `GET {base}/vehicles/registration/{vrm}`
 * with `Authorization: Bearer <OAuth2 client-credentials token>` and `X-API-Key`. The token is
 * cached and refreshed before it expires; a refused token is replaced once per lookup. Found
 * answers carry the vehicle JSON as given (VehicleWithMotResponse or NewRegVehicleResponse).
 */
export class DvsaMotClient extends UpstreamClient {
  private readonly tokens: ClientCredentialsTokenSource;
  private readonly apiKey: string;

  constructor(context: UpstreamContext, config: DvsaMotConfig) {
    super(context, config.settings, [config.apiKey, config.clientSecret]);
    this.apiKey = config.apiKey;
    this.tokens = new ClientCredentialsTokenSource({
      tokenUrl: config.tokenUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      scope: config.scope,
      http: this.source.http,
      clock: context.clock,
      monitor: context.monitor,
      redactor: this.source.redactor,
    });
  }

  /** The MOT history of a registration (upper case, no spaces). */
  history(vrm: string): Promise<UpstreamAnswer> {
    return this.source.lookup(vrm, () => this.fetch(vrm));
  }

  private async fetch(vrm: string): Promise<FetchOutcome> {
    // One budget for the token, the call and the call again after a refused token.
    const deadline = this.deadline();
    let token = await this.tokens.token(deadline);
    let response = await this.get(vrm, token, deadline);
    if (tokenRejected(response)) {
      this.tokens.invalidate(token);
      token = await this.tokens.token(deadline);
      response = await this.get(vrm, token, deadline);
    }
    return this.interpret(response);
  }

  private get(vrm: string, token: string, deadline: number): Promise<ClientResponse> {
    return this.request({
      path: `/vehicles/registration/${encodeURIComponent(vrm)}`,
      headers: { authorization: `Bearer ${token}`, 'x-api-key': this.apiKey },
      deadline,
    });
  }

  private interpret(response: ClientResponse): FetchOutcome {
    const code = response.status === 200 ? undefined : mothErrorCode(response.text);
    const shown = code !== undefined ? `, ${code}` : '';
    switch (response.status) {
      case 200: {
        const parsed = response.json;
        // The legacy API answered an array of vehicles; a proxy may still.
        const vehicle = asObject(Array.isArray(parsed) ? (parsed as unknown[])[0] : parsed);
        if (!vehicle) throw new UpstreamError('bad-response', 'HTTP 200 without a JSON vehicle object', 200);
        return { status: 'found', payload: vehicle };
      }
      case 404:
        // MOTH-NF-02 "URL not found" means our base URL is wrong, not that the vehicle is unknown.
        if (code === 'MOTH-NF-02') throw new UpstreamError('unexpected-status', `HTTP 404${shown}: check DVSA_BASE_URL`, 404);
        return { status: 'not-found' };
      case 400:
        // MOTH-IV-03 / MOTH-NP-02 and friends: a registration the API cannot look up. Not cached.
        return { status: 'not-found', cache: false };
      default:
        throw statusError(response.status, { refused: `DVSA refused our credentials (HTTP ${response.status}${shown})`, detail: shown });
    }
  }
}
