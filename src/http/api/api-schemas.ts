import { MAX_TOP_UP } from '../../accounts/account.service.js';
import { LEDGER_ROW_TYPES } from '../../accounts/ledger-queries.js';
import { CAP_PERIODS, MAX_CAP_CREDITS, MAX_KEY_RATE } from '../../accounts/key-rules.js';

/**
 * JSON schemas of the admin and account APIs. Objects refuse unknown fields with `propertyNames`
 * rather than `additionalProperties: false`: Fastify's validator is set to remove additional
 * properties silently, and the API must refuse them with a 400 naming the field instead.
 */
export type Schema = Record<string, unknown>;

export function object(properties: Record<string, Schema>, required: readonly string[] = []): Schema {
  return { type: 'object', properties, required: [...required], propertyNames: { enum: Object.keys(properties) } };
}

/**
 * The free-text rule of both APIs and the console (issue 23 finding 3), as schema patterns so that
 * every route applies it before a handler runs, query strings included. Control characters have
 * no business in a stored field (PostgreSQL refuses NUL in text outright, a 500 before; SQLite
 * stored it), and a bidirectional override makes a name read differently from what it is:
 * - LINE_TEXT, every string unless said otherwise: no C0 control (NUL to U+001F, tab and newline
 *   included) and no DEL;
 * - MULTILINE_TEXT, notes and descriptions: tab, LF and CR allowed, no other control;
 * - NAME_TEXT, names people read (keys, tokens): LINE_TEXT and no bidirectional override or
 *   isolate (U+202A to U+202E, U+2066 to U+2069).
 * The patterns are written with \u escapes and no `u` flag, so every JSON Schema validator reads
 * them alike (issue 23: `\p{…}` is not portable).
 */
export const LINE_TEXT = '^[^\\u0000-\\u001f\\u007f]*$';
export const MULTILINE_TEXT = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$';
export const NAME_TEXT = '^[^\\u0000-\\u001f\\u007f\\u202a-\\u202e\\u2066-\\u2069]*$';

/** What a refused string is told, by the pattern it broke (installErrorHandling). */
export const TEXT_RULES: Readonly<Record<string, string>> = {
  [LINE_TEXT]: 'must not contain control characters (tab and newline included)',
  [MULTILINE_TEXT]: 'must not contain control characters other than tab and newline',
  [NAME_TEXT]: 'must not contain control characters or bidirectional overrides',
};

/** A single-line string (LINE_TEXT) of at most `maxLength`; `extra` may set a stricter pattern. */
export const str = (maxLength: number, extra: Schema = {}): Schema => ({ type: 'string', maxLength, pattern: LINE_TEXT, ...extra });
/** A note or description: tab and newline allowed (MULTILINE_TEXT). */
export const text = (maxLength: number): Schema => ({ type: 'string', maxLength, pattern: MULTILINE_TEXT });
export const int = (minimum: number, maximum: number): Schema => ({ type: 'integer', minimum, maximum });
export const bool: Schema = { type: 'boolean' };
export const timestamp: Schema = { type: 'string', format: 'date-time', maxLength: 40 };

export const USERNAME: Schema = str(64, { minLength: 1, pattern: '^[A-Za-z0-9._@-]+$' });
export const NAME: Schema = str(64, { minLength: 1, pattern: NAME_TEXT });
export const PASSWORD: Schema = str(256, { minLength: 1 });
export const NOTE: Schema = text(500);
/** A webhook endpoint's description (the API and the console form). */
export const DESCRIPTION: Schema = text(500);
export const REFERENCE: Schema = str(100);

export const usernameParams = object({ username: USERNAME }, ['username']);
export const keyParams = object({ username: USERNAME, id: int(1, 2 ** 31 - 1) }, ['username', 'id']);
export const idParams = object({ id: int(1, 2 ** 31 - 1) }, ['id']);

export const loginBody = object({ username: USERNAME, password: PASSWORD }, ['username', 'password']);
/** A webhook message id as the outbox makes them (`msg_` and 22 base64url characters), with room to spare. */
export const MESSAGE_ID: Schema = { type: 'string', pattern: '^msg_[A-Za-z0-9_-]{1,64}$' };
export const passwordBody = object({ currentPassword: PASSWORD, newPassword: PASSWORD }, ['currentPassword', 'newPassword']);
export const inviteBody = object({ token: str(100, { minLength: 1 }), password: PASSWORD }, ['token', 'password']);

// The bodies of the writes the API and the console both make: one schema per write. The console's
// form of each is this schema plus its CSRF field (ConsoleContext.formOf), so a bound or a field
// changes for both at once.
export const keyCreateBody = object({ name: NAME }, ['name']);

/**
 * A key's own rules (issue 33), each optional; null clears a rule. The same fields on create (the
 * API's key create) and on change (PATCH).
 */
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as string, 'null'] });
export const KEY_SETTINGS: Record<string, Schema> = {
  cap: nullable({
    ...object({ credits: int(1, MAX_CAP_CREDITS), period: { type: 'string', enum: [...CAP_PERIODS] } }, ['credits', 'period']),
    description: 'At most `credits` credits per UTC day, per UTC calendar month, or in total; the count restarts at the period\'s turn. Null: no cap.',
  }),
  operations: nullable({
    type: 'array',
    items: str(64, { minLength: 1 }),
    minItems: 1,
    maxItems: 100,
    description: 'The only operations the key may call: operation names (CheckUSA), country:NAME (every operation of that country, as the catalogue names it: country:France), vin (the lookups by VIN). Null: every operation.',
  }),
  perSecond: nullable({ ...int(1, MAX_KEY_RATE), description: "Requests per second this key may make, inside the account's own limit. Null: only the account's." }),
  perDay: nullable({ ...int(1, MAX_KEY_RATE), description: "Requests per UTC day this key may make, inside the account's own limit. Null: only the account's." }),
  allowedIps: nullable({ type: 'array', items: str(64, { minLength: 1 }), minItems: 1, maxItems: 100, description: 'CIDR blocks (or addresses) the key may be used from. Null: any address.' }),
  labels: nullable({ type: 'object', additionalProperties: str(200), maxProperties: 20, description: 'Free key/value metadata (names of letters, digits and . _ : / -). Null or {}: none.' }),
};
export const keyCreateApiBody = object({ name: NAME, ...KEY_SETTINGS }, ['name']);
export const keyUpdateBody = object(KEY_SETTINGS);
export const accountCreateBody = object({ username: USERNAME, credits: int(0, MAX_TOP_UP) }, ['username']);
export const creditChangeBody = object({ operation: { type: 'string', enum: ['grant', 'remove'] }, amount: int(1, MAX_TOP_UP), reference: REFERENCE, note: NOTE }, ['operation', 'amount']);
export const userInviteBody = object({ name: USERNAME, role: { type: 'string', enum: ['owner', 'member'] } }, ['name', 'role']);
export const tokenCreateBody = object({ name: NAME, scope: { type: 'string', enum: ['read', 'write'] } }, ['name', 'scope']);
export const keyRollBody = object({ graceSeconds: int(0, 30 * 24 * 3600) });

const PAGE = { limit: int(1, 500), before: int(1, Number.MAX_SAFE_INTEGER) };
export const ledgerQuery = object({
  ...PAGE,
  from: timestamp,
  to: timestamp,
  operation: str(64),
  interface: { type: 'string', enum: ['json', 'soap11', 'soap12', 'http-get', 'http-post', 'console'] },
  type: {
    type: 'string',
    enum: [...LEDGER_ROW_TYPES],
    description: 'charged: charged lookups; free: free lookups (test plates, results with nothing to charge, Idempotency-Key replays); lookups: both; credits: top-ups, grants and removals',
  },
  charged: { ...bool, description: 'The older filter: true is type=charged; false is every row but charged lookups. Not with type.' },
  key: { ...str(64), description: "Only the lookups of the account's API key of this name" },
});
export const usageQuery = object({ from: timestamp, to: timestamp, key: { ...str(64), description: "Only the lookups of the account's API key of this name" } }, ['from', 'to']);
export const keyUsageQuery = object({ from: timestamp, to: timestamp }, ['from', 'to']);

// OpenAPI's operation fields on route schemas (what @fastify/swagger adds when installed); the
// admin OpenAPI document (openapi-document.ts) reads them.
declare module 'fastify' {
  interface FastifySchema {
    tags?: readonly string[];
    summary?: string;
    /** The operation's description in the OpenAPI document (what the summary leaves out). */
    description?: string;
    /**
     * Who may call the route, for its description in the OpenAPI document, when it is not what
     * its method implies (openapi-document.ts, accessOf): reads for every role, writes for admins
     * and owners.
     */
    access?: string;
    /** Media types of a body the route reads as a stream itself (no `body` schema applies). */
    consumes?: readonly string[];
    /**
     * Error statuses the route answers beyond those its shape implies (openapi-document.ts,
     * errorStatuses): 409 for a create that can collide, 401 for a login, 404 for a route whose
     * path names nothing but that can still find nothing.
     */
    errorStatuses?: readonly number[];
  }
  interface FastifyContextConfig {
    /** A route of the admin or account API that answers without a login (login, invite, documents). */
    public?: boolean;
    /**
     * A route on the caller's own session or password (change password, log out, log out
     * everywhere): the only routes a user with a one-time password reaches, and writes any session
     * may make on itself (checkAccess in api-auth.ts).
     */
    ownSession?: boolean;
  }
}
