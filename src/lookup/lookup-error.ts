/**
 * Domain errors of a lookup. Codes are stable and carry no HTTP or SOAP meaning; each protocol
 * adapter maps them to its wire form (DESIGN.md "Protocol adapters are thin").
 */
export type LookupErrorCode =
  | 'UNAUTHORIZED'
  | 'ACCOUNT_DISABLED'
  | 'UNKNOWN_OPERATION'
  | 'INVALID_INPUT'
  | 'NOT_FOUND'
  | 'INSUFFICIENT_CREDITS'
  | 'UPSTREAM_UNAVAILABLE'
  /** The account's per-second or per-day rate limit is reached (issue 5); `retryAfterSeconds` says until when. */
  | 'RATE_LIMITED'
  | 'INTERNAL';

const CLIENT_CODES: ReadonlySet<LookupErrorCode> = new Set(['INVALID_INPUT', 'UNKNOWN_OPERATION', 'UNAUTHORIZED', 'ACCOUNT_DISABLED', 'RATE_LIMITED']);

export class LookupError extends Error {
  override readonly name = 'LookupError';

  /** For RATE_LIMITED: whole seconds until the request may succeed (the Retry-After value). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: LookupErrorCode,
    message: string,
    options: { readonly retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /**
   * True for bad input, authentication problems and rate limits (the caller must change what it
   * does): SOAP Client/Sender faults. Everything else
   * (not found, out of credit, upstream down) is a Server/Receiver fault, as issue 3 specifies and
   * as ASMX reports exceptions thrown by an operation.
   */
  get isClientError(): boolean {
    return CLIENT_CODES.has(this.code);
  }
}

/** Messages clients are known to test for (compat-notes "Errors"): keep the phrases intact. */
export const MESSAGES = {
  usernameIncorrect: 'Your username is incorrect',
  outOfCredit: (cost: number, balance: number) =>
    `Out of credit: this lookup costs ${cost} credit${cost === 1 ? '' : 's'} and the account has ${balance}`,
  /** Worded exactly as the live service words it: some clients compare the text (compat-notes "Wire differences" 5). */
  lookupFailed: (label: string) => `${label} Lookup failed`,
  /** Not in the original (which had no rate limits); worded like the rest, with the wait in seconds. */
  rateLimited: (username: string, limit: number, window: 'second' | 'day', retryAfterSeconds: number) =>
    `Rate limit exceeded: account ${username} may make ${limit} request${limit === 1 ? '' : 's'} per ${window === 'second' ? 'second' : 'day (UTC)'}; retry after ${retryAfterSeconds} s`,
} as const;
