/**
 * Why an upstream could not answer. Every kind makes the lookup `unavailable` (the pipeline's
 * UPSTREAM_UNAVAILABLE, which costs nothing) and counts as a failure for the circuit breaker.
 */
export type UpstreamFailureKind =
  /** No answer within the per-attempt timeout or the request budget. */
  | 'timeout'
  /** Connection refused or reset, DNS failure, TLS failure. */
  | 'network'
  /** HTTP 5xx (after the retry, where one was allowed). */
  | 'server-error'
  /** HTTP 429 whose Retry-After was missing, too long for the budget, or came twice. */
  | 'rate-limited'
  /** Our credentials were refused (401/403, or the OAuth token endpoint said no): never retried. */
  | 'auth'
  /**
   * Our account at a paid provider has no funds left (CarsXE 402, UKVD InsufficientFunds, Vincario
   * "Not Enough Lookups", the original out of credit): the source stays out until its balance says
   * otherwise (commercial-upstreams.md §5).
   */
  | 'out-of-funds'
  /** A paid provider's quota for its period is used up (CarsXE's quota 429, UKVD's daily limit codes). */
  | 'quota'
  /** A 2xx body that is not what the upstream documents (not JSON, wrong shape, too large). */
  | 'bad-response'
  /** A status the adapter has no meaning for (an undocumented 4xx). */
  | 'unexpected-status'
  /** The circuit breaker is open: the upstream was not asked. */
  | 'circuit-open'
  /** A bug on our side (an exception that is not an UpstreamError). */
  | 'internal';

/**
 * A failed upstream call. The message is written by our code from status codes and error kinds
 * only: it never contains a URL, a header, a response body, a key or a token, so it may be logged
 * and shown in /readyz as it is.
 */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';

  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    /** The HTTP status that caused it, when there was one. */
    readonly status?: number,
  ) {
    super(message);
  }
}
