import type { Clock } from '../../shared/clock.js';
import type { UpstreamHttpClient } from './http-client.js';
import { asObject, numberField, parseJson, stringField } from './json-reader.js';
import type { SecretRedactor } from './secret-redactor.js';
import { UpstreamError } from './upstream-error.js';
import type { UpstreamMonitor } from './upstream-monitor.js';

export interface ClientCredentialsOptions {
  /** The token endpoint (Entra ID: `https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token`). */
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string;
  /** The provider's HTTP client: token requests share its timeout, budget and metrics. */
  readonly http: UpstreamHttpClient;
  readonly clock: Clock;
  readonly monitor: UpstreamMonitor;
  /** Issued tokens are added to it, so they are hidden wherever the provider's text is redacted. */
  readonly redactor: SecretRedactor;
  /** Fetch a new token this long before the current one expires (default 60 s, at most half its lifetime). */
  readonly refreshMarginMs?: number;
}

/** Entra ID error codes are short snake_case words; anything else is not repeated. */
const OAUTH_ERROR = /^[a-z_]{1,40}$/;

/**
 * OAuth 2.0 client-credentials tokens (RFC 6749 §4.4), as the DVSA MOT history API requires
 * (upstream-sources.md §2b "Auth": "Cache the token"). The token is kept in memory and reused
 * until `refreshMarginMs` before it expires; concurrent callers share one token request. When the
 * API answers 401 the adapter calls `invalidate(token)` and asks again, which fetches a new one.
 * Token requests are retried like idempotent requests (they change nothing at the issuer).
 */
export class ClientCredentialsTokenSource {
  private current: { readonly token: string; readonly refreshAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly margin: number;

  constructor(private readonly options: ClientCredentialsOptions) {
    this.margin = options.refreshMarginMs ?? 60_000;
  }

  /**
   * A valid access token: the cached one, or a new one when it is about to expire. `deadline`
   * (see UpstreamRequest.deadline) bounds the token request.
   */
  token(deadline?: number): Promise<string> {
    if (this.current && this.options.clock.now().getTime() < this.current.refreshAt) return Promise.resolve(this.current.token);
    this.pending ??= this.fetchToken(deadline).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Forgets `token` (the API refused it); the next `token()` fetches a new one. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async fetchToken(deadline: number | undefined): Promise<string> {
    const { http, clock, monitor } = this.options;
    const requestedAt = clock.now().getTime();
    try {
      const response = await http.request({
        method: 'POST',
        url: this.options.tokenUrl,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: this.options.clientId,
          client_secret: this.options.clientSecret,
          scope: this.options.scope,
        }).toString(),
        idempotent: true,
        endpoint: 'token',
        ...(deadline !== undefined ? { deadline } : {}),
      });
      const body = asObject(parseJson(response.text));
      if (response.status !== 200) {
        const code = body ? stringField(body, 'error') : undefined;
        const shown = code !== undefined && OAUTH_ERROR.test(code) ? `, ${code}` : '';
        const kind = response.status === 400 || response.status === 401 || response.status === 403 ? 'auth' : 'unexpected-status';
        throw new UpstreamError(kind, `token endpoint refused the request (HTTP ${response.status}${shown})`, response.status);
      }
      const token = body ? stringField(body, 'access_token') : undefined;
      const expiresIn = body ? numberField(body, 'expires_in') : undefined;
      if (token === undefined || expiresIn === undefined || expiresIn <= 0) {
        throw new UpstreamError('bad-response', 'token endpoint answered without access_token and expires_in');
      }
      this.options.redactor.add(token);
      const lifetime = expiresIn * 1000;
      this.current = { token, refreshAt: requestedAt + lifetime - Math.min(this.margin, lifetime / 2) };
      monitor.emit({ type: 'token', provider: http.provider, outcome: 'issued', expiresInS: expiresIn });
      return token;
    } catch (error) {
      const failure = error instanceof UpstreamError ? error : new UpstreamError('internal', 'token request failed unexpectedly');
      const message = failure.message.startsWith('token endpoint') ? failure.message : `token endpoint: ${failure.message}`;
      monitor.emit({ type: 'token', provider: http.provider, outcome: 'failed', message });
      throw new UpstreamError(failure.kind, message, failure.status);
    }
  }
}
