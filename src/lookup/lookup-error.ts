/**
 * Domain errors of a lookup. Codes are stable and carry no HTTP or SOAP meaning; each protocol
 * adapter maps them to its wire form through a table with a row per code (DESIGN.md "Protocol
 * adapters are thin"), so adding a code means deciding its answer on every interface.
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
  /** The Idempotency-Key was used by the account for another query (issue 17 item 3); nothing was charged. */
  | 'IDEMPOTENCY_CONFLICT'
  /**
   * The client's connection closed before its answer was paid for (issue 31): nothing was debited,
   * and nothing written would reach it. Counted, never seen by a client.
   */
  | 'CLIENT_GONE'
  /** The API key's own rules do not allow this call: its operations or its client addresses (issue 33); nothing was charged. */
  | 'KEY_NOT_ALLOWED'
  /** The API key's credit cap for its period is spent (issue 33); `retryAfterSeconds` says when the period turns (none for a total cap). */
  | 'KEY_CAP_REACHED'
  | 'INTERNAL';

export class LookupError extends Error {
  override readonly name = 'LookupError';

  /** For RATE_LIMITED: whole seconds until the request may succeed (the Retry-After value). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: LookupErrorCode,
    message: string,
    options: { readonly retryAfterSeconds?: number; readonly cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Messages clients are known to test for (compat-notes "Errors"): keep the phrases intact. */
export const MESSAGES = {
  clientGone: 'The client closed the connection before the answer; nothing was charged',
  usernameIncorrect: 'Your username is incorrect',
  outOfCredit: (cost: number, balance: number) =>
    `Out of credit: this lookup costs ${cost} credit${cost === 1 ? '' : 's'} and the account has ${balance}`,
  /** Worded exactly as the live service words it: some clients compare the text (compat-notes "Wire differences" 5). */
  lookupFailed: (label: string) => `${label} Lookup failed`,
  /**
   * An upstream that could not answer, or the store unreachable (a database restart): nothing was
   * charged, and the same request may succeed later.
   */
  temporarilyUnavailable: (label: string) => `${label} lookup is temporarily unavailable, please try again later`,
  /** Not in the original (which had no rate limits); worded like the rest, with the wait in seconds. */
  rateLimited: (username: string, limit: number, window: 'second' | 'day', retryAfterSeconds: number) =>
    `Rate limit exceeded: account ${username} may make ${limit} request${limit === 1 ? '' : 's'} per ${window === 'second' ? 'second' : 'day (UTC)'}; retry after ${retryAfterSeconds} s`,
  /** An anonymous caller (ANONYMOUS_OPERATIONS) over the per-address limit. */
  anonymousRateLimited: (limit: number, window: 'second' | 'day', retryAfterSeconds: number) =>
    `Rate limit exceeded: anonymous callers may make ${limit} request${limit === 1 ? '' : 's'} per ${window === 'second' ? 'second' : 'day (UTC)'} from one address; send your credentials (HTTP Basic) or retry after ${retryAfterSeconds} s`,
  /** Issue 33: a key's own rules, named in the refusal (the key's name and rule, nothing of another account). */
  keyOperationRefused: (key: string, operation: string, allowed: readonly string[]) =>
    `API key ${key} may not call ${operation}: it is limited to ${allowed.join(', ')}`,
  keyAddressRefused: (key: string, address: string) => `API key ${key} may not be used from ${address}: the address is not in its allowed addresses`,
  keyCapReached: (key: string, cap: number, period: 'day' | 'month' | 'total', retryAfterSeconds: number | undefined) =>
    `API key ${key} has reached its cap of ${cap} credit${cap === 1 ? '' : 's'} ${period === 'total' ? 'in total' : `per ${period === 'day' ? 'day (UTC)' : 'month (UTC)'}`}${retryAfterSeconds === undefined ? '' : `; retry after ${retryAfterSeconds} s`}`,
  keyRateLimited: (key: string, limit: number, window: 'second' | 'day', retryAfterSeconds: number) =>
    `Rate limit exceeded: API key ${key} may make ${limit} request${limit === 1 ? '' : 's'} per ${window === 'second' ? 'second' : 'day (UTC)'}; retry after ${retryAfterSeconds} s`,
} as const;
