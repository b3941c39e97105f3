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
  | 'INTERNAL';

const CLIENT_CODES: ReadonlySet<LookupErrorCode> = new Set(['INVALID_INPUT', 'UNKNOWN_OPERATION', 'UNAUTHORIZED', 'ACCOUNT_DISABLED']);

export class LookupError extends Error {
  override readonly name = 'LookupError';

  constructor(
    readonly code: LookupErrorCode,
    message: string,
  ) {
    super(message);
  }

  /**
   * True for bad input and authentication problems: SOAP Client/Sender faults. Everything else
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
  lookupFailed: (label: string, what: string) => `${label} Lookup failed: ${what}`,
} as const;
