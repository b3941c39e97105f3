/**
 * Every `error` code the admin and account APIs answer (`{"error": code, "message", "field"?}`),
 * each with its one status and its one meaning. The Error schema of the OpenAPI document lists
 * them (api-responses.ts), and ApiError takes only these codes, so a new code does not compile
 * until it is here and documented.
 */
export const API_ERROR_CODES = {
  'invalid-request': { status: 400, meaning: 'a field, parameter or value is not valid (its schema or a rule of the service); `field` names it when there is one' },
  'bad-request': { status: 400, meaning: 'the request cannot be read: malformed JSON, an empty JSON body, or a Host header that is not a host name (when BASE_URL is unset)' },
  'empty-file': { status: 400, meaning: 'an upload without a byte' },
  'upload-interrupted': { status: 400, meaning: 'the upload ended before its declared length' },
  unauthorized: { status: 401, meaning: 'not logged in, an unknown or revoked token, or (login) a wrong name or password' },
  forbidden: { status: 403, meaning: 'the role or token scope does not allow this' },
  csrf: { status: 403, meaning: 'a write with the session cookie without its X-CSRF-Token' },
  'password-change-required': { status: 403, meaning: 'the one-time password must be changed first (POST .../me/password)' },
  'not-found': { status: 404, meaning: 'no such account, key, user, token, import, webhook endpoint or route' },
  'already-exists': { status: 409, meaning: 'the name is taken' },
  'in-use': { status: 409, meaning: 'something still refers to it (the store refused the change for a reference it holds)' },
  'insufficient-credits': { status: 409, meaning: 'the account has fewer credits than the removal asks for' },
  'too-large': { status: 413, meaning: 'the body is larger than the limit' },
  'unsupported-media-type': { status: 415, meaning: 'the body is not in one of the media types the route reads' },
  'rate-limited': { status: 429, meaning: 'too many requests, failed logins or sign-ups; Retry-After says when to try again' },
  internal: { status: 500, meaning: 'an unexpected failure; the message quotes the request id' },
  unavailable: { status: 503, meaning: 'the service cannot take the job now: an import while another instance owns the queue, or the database cannot be reached (a restart or failover; Retry-After says when to try again)' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ApiErrorCode = keyof typeof API_ERROR_CODES;

/** The codes, in the table's order. */
export const ERROR_CODE_NAMES = Object.keys(API_ERROR_CODES) as ApiErrorCode[];

/** The codes answered with a status, for the document's description of that status. */
export function codesOfStatus(status: number): ApiErrorCode[] {
  return ERROR_CODE_NAMES.filter((code) => API_ERROR_CODES[code].status === status);
}

/**
 * The code of an error Fastify raised itself before a handler ran (its body parser, its URL
 * parsing) or of an error with only a status (InvalidHostError): by status, so a 413 is `too-large`
 * and a 415 `unsupported-media-type` as when a route refuses them itself.
 */
export function codeOfClientStatus(status: number): ApiErrorCode {
  if (status === 404) return 'not-found';
  if (status === 413) return 'too-large';
  if (status === 415) return 'unsupported-media-type';
  if (status === 429) return 'rate-limited';
  return 'bad-request';
}
