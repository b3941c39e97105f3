import type { LedgerReason } from '../../accounts/ledger-queries.js';
import type { AccountStatus } from '../../accounts/account.js';
import type { AuditEntry, Actor } from '../../audit/audit-log.js';
import type { ImportState } from '../../datasets/import/import-job.repository.js';
import type { BreakerState } from '../../providers/upstream/circuit-breaker.js';
import type { ProviderStatus } from '../../providers/upstream/upstream-monitor.js';
import type { LedgerKind } from '../../storage/database.js';
import { EVENT_TYPES } from '../../webhooks/webhook.service.js';
import type { WebhookMessage } from '../../webhooks/webhook.repository.js';
import { API_ERROR_CODES, ERROR_CODE_NAMES } from './api-error-codes.js';
import type { Schema } from './api-schemas.js';
import type { Role } from '../../users/user.service.js';

/**
 * The answers of the admin and account APIs as JSON schemas: each route declares its success in
 * Fastify's `response` (which serialises it, and drops what a schema does not list: so every
 * schema here names every member the route answers, and test/admin/openapi-answers.test.ts
 * compares live answers with them), and the OpenAPI document (openapi-document.ts) publishes the
 * same schemas and the examples made from them (exampleOf).
 *
 * Objects are closed (`additionalProperties: false`), so a generated client types exactly what
 * the wire carries.
 */

/** An object answer: every property required unless named in `optional`. */
export function answer(properties: Record<string, Schema>, optional: readonly string[] = []): Schema {
  return { type: 'object', properties, required: Object.keys(properties).filter((name) => !optional.includes(name)), additionalProperties: false };
}

/** A schema that also allows null. */
export function orNull(schema: Schema): Schema {
  const type = schema.type;
  if (typeof type !== 'string') throw new Error('orNull takes a schema with one type');
  return { ...schema, type: [type, 'null'] };
}

/**
 * Every member of a string union, in a tuple the compiler checks both ways: a value the type does
 * not have fails, and so does a type member missing from the list.
 */
function allOf<T extends string>() {
  return <const A extends readonly T[]>(values: A & ([T] extends [A[number]] ? unknown : { missing: Exclude<T, A[number]> })): A => values;
}

const text = (example: string, extra: Schema = {}): Schema => ({ type: 'string', ...extra, examples: [example] });
const integer = (example: number, extra: Schema = {}): Schema => ({ type: 'integer', ...extra, examples: [example] });
const flag = (example: boolean): Schema => ({ type: 'boolean', examples: [example] });
const oneOf = (values: readonly string[]): Schema => ({ type: 'string', enum: [...values] });
const at = (example = '2026-11-27T13:10:00.000Z'): Schema => ({ type: 'string', format: 'date-time', examples: [example] });
const id: Schema = integer(1, { minimum: 1 });
const list = (items: Schema): Schema => ({ type: 'array', items });

const ROLES = allOf<Role>()(['admin', 'viewer', 'owner', 'member']);
const ACCOUNT_STATUSES = allOf<AccountStatus>()(['active', 'disabled', 'closed']);
const LEDGER_KINDS = allOf<LedgerKind>()(['debit', 'free', 'topup', 'removal', 'reversal']);
const LEDGER_REASONS = allOf<LedgerReason>()(['charged', 'free test plate', 'free: no result', 'free: repeated request', 'free', 'top-up', 'initial credits', 'trial credits', 'removal', 'reversed: answer not delivered']);
const ACTOR_KINDS = allOf<Actor['kind']>()(['operator', 'customer', 'token', 'cli', 'system']);
const TARGET_KINDS = allOf<AuditEntry['targetKind']>()(['account', 'api-key', 'user', 'operator-token', 'session', 'test-plate', 'webhook-endpoint', 'import']);
const IMPORT_STATES = allOf<ImportState>()(['queued', 'validating', 'importing', 'done', 'failed']);
const MESSAGE_STATUSES = allOf<WebhookMessage['status']>()(['pending', 'delivered', 'failed']);
const PROVIDER_STATES = allOf<ProviderStatus['status']>()(['up', 'down', 'probing', 'disabled']);
const BREAKER_STATES = allOf<BreakerState>()(['closed', 'open', 'half-open']);

/** The error answer of every status but the successes: one code of API_ERROR_CODES. */
export const errorAnswer: Schema = answer(
  {
    error: {
      type: 'string',
      enum: ERROR_CODE_NAMES,
      description: ERROR_CODE_NAMES.map((code) => `${code} (${API_ERROR_CODES[code].status}): ${API_ERROR_CODES[code].meaning}`).join('; '),
      examples: ['invalid-request'],
    },
    message: text('body: username must NOT have more than 64 characters'),
    field: text('username', { description: 'The field, parameter or header at fault, when there is one' }),
  },
  ['field'],
);

/** A user (operator or customer) as every route shows one. */
export const userAnswer = answer({
  id,
  name: text('alice-owner'),
  role: oneOf(ROLES),
  account: orNull(text('alice', { description: "The customer's account; null for an operator" })),
  active: { ...flag(true), description: 'False until the user has set a password (an open invite)' },
  mustChangePassword: flag(false),
  disabled: flag(false),
  createdAt: at(),
});

const rateLimit = (description: string): Schema => ({ type: ['integer', 'null'], minimum: 0, description, examples: [null] });

export const accountAnswer = answer({
  username: text('alice'),
  credits: integer(50),
  status: oneOf(ACCOUNT_STATUSES),
  requireApiKey: flag(false),
  rateLimits: answer({
    perSecond: rateLimit('Requests per second; null: the server default (RATE_LIMIT_PER_SECOND), 0: no limit'),
    perDay: rateLimit('Requests per UTC day; null: the server default (RATE_LIMIT_PER_DAY), 0: no limit'),
  }),
  createdAt: at(),
  closedAt: orNull(at()),
});

export const keyAnswer = answer({
  id,
  name: text('production'),
  prefix: orNull(text('vl_3f9a', { description: "The key's first characters; null for a key made before keys had names" })),
  createdAt: at(),
  lastUsedAt: orNull(at()),
  revokedAt: orNull(at()),
  expiresAt: orNull(at('2026-11-28T13:10:00.000Z')),
  cap: orNull({ ...answer({ credits: integer(500, { minimum: 1 }), period: oneOf(['day', 'month', 'total']) }), description: 'The key\'s credit cap per period; null: none' }),
  operations: orNull({ ...list(text('CheckUSA')), description: 'The only operations the key may call (names, country:NAME, vin); null: every operation' }),
  perSecond: orNull(integer(5, { description: "The key's own requests per second; null: only the account's limit" })),
  perDay: orNull(integer(10000, { description: "The key's own requests per UTC day; null: only the account's limit" })),
  allowedIps: orNull({ ...list(text('203.0.113.0/24')), description: 'CIDR blocks the key may be used from; null: any address' }),
  labels: { type: 'object', additionalProperties: { type: 'string' }, examples: [{ env: 'staging' }], description: 'Free key/value metadata' },
  spend: {
    ...answer({
      period: oneOf(['day', 'month', 'total']),
      periodKey: text('2026-11', { description: 'The period: 2026-11-28 (day), 2026-11 (month), total' }),
      credits: integer(120, { description: 'Credits the key\'s lookups were charged in the period' }),
    }),
    description: "In the key listing: what the key spent in its cap's period (without a cap: this UTC month)",
  },
}, ['spend']);

/** A key's secret: shown once, by the route that made it. */
const secretKey = text('3f9a1c0d5b7e4a2f9c8d6e1b0a7f5c3e', { description: 'The API key itself, shown this once' });

export const tokenAnswer = answer({
  id,
  name: text('ci'),
  prefix: text('vlop_8c2e'),
  scope: oneOf(['read', 'write']),
  createdBy: text('root'),
  createdAt: at(),
  revokedAt: orNull(at()),
});

export const ledgerRowAnswer = answer({
  id,
  at: at(),
  kind: oneOf(LEDGER_KINDS),
  reason: oneOf(LEDGER_REASONS),
  delta: integer(-1),
  balanceAfter: integer(49),
  operation: orNull(text('CheckFrance')),
  interface: orNull(text('json')),
  query: orNull(text('AB123CD', { description: 'The plate or VIN looked up' })),
  requestId: orNull(text('req-1a2b3c')),
  reference: orNull(text('invoice 2026-117')),
  note: orNull(text('yearly top-up')),
  key: orNull(text('production', { description: 'The name of the API key that made the lookup; null for rows without one (grants, username-only and console lookups, rows before keys were recorded)' })),
  keyId: orNull(integer(3, { description: 'The id of that key (a rolled key has a new id and the same name)' })),
  user: orNull(text('carol', { description: 'The console user of a Try it lookup' })),
  source: orNull(text('regcheck', { description: 'The source that answered a lookup: `store`, a free register (`dvla`...), a paid upstream (`regcheck`...) or `cache`; null on credit rows, replays and rows written before it was recorded' })),
});

export const usageDayAnswer = answer({
  day: text('2026-11-27', { format: 'date' }),
  operation: text('CheckFrance'),
  lookups: integer(12, { description: 'Every lookup that day and operation, charged or free' }),
  freeLookups: integer(2, { description: 'Of those, the free ones (test plates, results with nothing to charge, Idempotency-Key replays)' }),
  credits: integer(10, { description: 'Credits the charged ones cost' }),
});

const range = { from: at('2026-11-01T00:00:00.000Z'), to: at('2026-11-28T00:00:00.000Z') };

export const usageAnswer = answer({ ...range, days: list(usageDayAnswer) });

export const keyUsageDayAnswer = answer({
  day: text('2026-11-27', { format: 'date' }),
  key: orNull(text('staging', { description: 'The API key; null: lookups without one (username alone, the console)' })),
  lookups: integer(12, { description: 'Every lookup of the key that day, charged or free' }),
  freeLookups: integer(2),
  credits: integer(10, { description: 'Credits the charged ones cost' }),
});

export const keyUsageAnswer = answer({ ...range, days: list(keyUsageDayAnswer) });

export const lookupStatsAnswer = answer({
  ...range,
  interfaces: list(
    answer({
      interface: text('json'),
      total: integer(120),
      successes: integer(114),
      errors: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Failed lookups by outcome (the error code in lower case)', examples: [{ not_found: 6 }] },
      successRate: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'successes / total; null without lookups', examples: [0.95] },
    }),
  ),
});

export const auditRowAnswer = answer(
  {
    id,
    at: at(),
    actor: answer({ kind: oneOf(ACTOR_KINDS), name: text('root'), address: text('203.0.113.7') }, ['address']),
    action: text('account.create'),
    targetKind: oneOf(TARGET_KINDS),
    target: text('alice'),
    before: { type: 'object', additionalProperties: true, description: 'The changed fields before the change (never a secret)' },
    after: { type: 'object', additionalProperties: true, description: 'The changed fields after the change (never a secret)', examples: [{ credits: 50 }] },
  },
  ['before', 'after'],
);

/** A page of rows, newest first, and the `before` of the next page (null on the last). */
export const pageAnswer = (rows: Schema): Schema => answer({ rows: list(rows), next: orNull(integer(41, { description: 'Pass as ?before= for the next page; null on the last' })) });

const invalidLine = answer({ line: integer(7), reason: text('CarMake: expected an object with CurrentTextValue') });

const importFields = {
  id,
  state: oneOf(IMPORT_STATES),
  startedBy: answer({ kind: oneOf(ACTOR_KINDS), name: text('root') }),
  fileName: text('vehicles.jsonl'),
  fileSize: integer(52_431),
  source: text('import'),
  skipInvalid: flag(false),
  bytesRead: integer(52_431),
  linesRead: integer(120),
  imported: integer(119),
  invalid: integer(1),
  committed: flag(true),
  byOperation: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Records imported by operation', examples: [{ CheckFrance: 119 }] },
  error: orNull(text('the file could not be read')),
  instance: text('host-1:4242'),
  createdAt: at(),
  startedAt: orNull(at()),
  finishedAt: orNull(at()),
  heartbeatAt: at(),
  percent: integer(100, { minimum: 0, maximum: 100 }),
};

/** One job, with its first invalid lines. */
export const importAnswer = answer({
  ...importFields,
  invalidLines: list(invalidLine),
  invalidLinesOmitted: integer(0, { description: 'Invalid lines beyond those listed' }),
});

/** A job in the list, without the invalid lines. */
export const importSummaryAnswer = answer(importFields);

export const endpointAnswer = answer({
  id,
  accountId: orNull(integer(1, { description: 'null: an operator endpoint, told about every account' })),
  url: text('https://hooks.example.org/credits'),
  description: text('billing alerts'),
  enabled: flag(true),
  events: list(oneOf(EVENT_TYPES)),
  createdBy: oneOf(['account', 'operator']),
  createdAt: at(),
  updatedAt: at(),
  previousSecretUntil: orNull(at()),
});

/** An endpoint and its signing secret, shown this once. */
export const endpointWithSecretAnswer = answer({ endpoint: endpointAnswer, secret: text('whsec_5d1c0e9f3a7b2c4d6e8f0a1b3c5d7e9f', { description: 'The signing secret, shown this once' }) });

export const messageAnswer = answer({
  id: text('msg_01jd3k8v5q'),
  endpointId: id,
  accountId: orNull(integer(1)),
  eventType: text('credits.low'),
  payload: { description: 'The event as delivered (docs/webhooks.md)', examples: [{ type: 'credits.low', data: { account: 'alice', credits: 5 } }] },
  status: oneOf(MESSAGE_STATUSES),
  attempts: integer(1),
  nextAttemptAt: at(),
  createdAt: at(),
});

export const deliveryAnswer = answer({
  id,
  messageId: text('msg_01jd3k8v5q'),
  endpointId: id,
  attempt: integer(1),
  startedAt: at(),
  statusCode: orNull(integer(200)),
  durationMs: integer(84),
  error: orNull(text('connect ECONNREFUSED')),
  succeeded: flag(true),
  responseBody: { ...orNull(text('{"received":true}')), description: "The first 1 KB of the receiver's answer, as UTF-8 text; null when no answer came (a timeout, a refused connection) or for attempts logged before it was kept" },
});

export const thresholdsAnswer = answer({
  thresholds: { ...list(integer(10)), description: 'Highest first' },
  custom: { ...flag(false), description: "True: the account's own; false: the server default (CREDIT_ALERT_THRESHOLDS)" },
  fired: { ...list(integer(10)), description: 'Thresholds that fired and have not re-armed yet' },
});

/** Upstream calls and cache answers over a period (src/providers/upstream/upstream-spend.ts). */
const spendTotalsAnswer = answer({ calls: integer(40), found: integer(31), notFound: integer(7), failed: integer(2), servedFromCache: integer(12), creditsSaved: integer(9, { description: 'Cache answers with data: credits not spent at a paid upstream' }) });

export const providerAnswer = answer(
  {
    enabled: flag(true),
    status: oneOf(PROVIDER_STATES),
    reason: text('DVLA_API_KEY is not set'),
    breaker: oneOf(BREAKER_STATES),
    retryAt: at(),
    consecutiveFailures: integer(0),
    lookups: answer({ upstream: integer(40), cache: integer(12), unavailable: integer(0) }),
    requests: answer({ total: integer(41), failed: integer(1) }),
    lastLatencyMs: { type: 'number', examples: [212] },
    lastSuccessAt: at(),
    lastFailure: answer({ at: at(), kind: text('timeout'), message: text('no answer in 5000 ms') }),
    balance: answer({ credits: orNull(integer(4200, { description: 'Credits left there; null until first read' })), readAt: orNull(at()), lastError: answer({ at: at(), message: text('HTTP 503') }) }, ['lastError']),
    spend: answer({
      today: spendTotalsAnswer,
      last30Days: spendTotalsAnswer,
      byOperation: list(answer({ operation: text('CheckFrance'), ...(spendTotalsAnswer.properties as Record<string, Schema>) })),
    }),
    routing: answer(
      {
        state: oneOf(['ready', 'cooling-down', 'out-of-funds', 'quota', 'over-budget', 'disabled']),
        reason: text('monthly budget of 50 spent'),
        until: at(),
        price: orNull({ type: 'number', examples: [0.1] }),
        priceFrom: oneOf(['provider', 'configured', 'unknown']),
        configuredPrice: orNull({ type: 'number', examples: [0.12] }),
        monthlyBudget: orNull({ type: 'number', examples: [50] }),
        spendToday: answer({ spent: { type: 'number', examples: [1.2] }, calls: integer(12) }),
        spendThisMonth: answer({ spent: { type: 'number', examples: [31.5] }, calls: integer(315) }),
        balance: orNull({ type: 'number', examples: [420.5] }),
        lastError: orNull(answer({ at: at(), kind: text('out-of-funds'), message: text('insufficient funds (HTTP 402)') })),
        currency: text('GBP'),
      },
      ['reason', 'until'],
    ),
  },
  ['reason', 'breaker', 'retryAt', 'consecutiveFailures', 'lookups', 'requests', 'lastLatencyMs', 'lastSuccessAt', 'lastFailure', 'balance', 'spend', 'routing'],
);

export const testPlateAnswer = answer({ operation: text('CheckFrance'), key: text('AB123CD') });

/** The session routes' answers (login, sign-up, me). */
export const sessionAnswers = {
  login: answer({ user: userAnswer, csrfToken: text('c5f0a9e2b7d4', { description: 'Send it as X-CSRF-Token on every write with the session cookie' }), expiresAt: at() }),
  me: answer(
    {
      user: userAnswer,
      via: oneOf(['session', 'token']),
      canWrite: flag(true),
      csrfToken: text('c5f0a9e2b7d4', { description: "The session's CSRF token (absent for an operator token)" }),
    },
    ['csrfToken'],
  ),
  user: answer({ user: userAnswer }),
  loggedOut: answer({ loggedOut: { type: 'boolean', const: true } }),
  sessionsEnded: answer({ sessionsEnded: integer(2) }),
  changed: answer({ changed: { type: 'boolean', const: true } }),
  signup: answer({ user: userAnswer, account: accountAnswer, csrfToken: text('c5f0a9e2b7d4'), expiresAt: at() }),
} as const;

/** Balance, keys, ledger and usage: the same answers on both APIs. */
export const accountRouteAnswers = {
  balance: answer({ credits: integer(50), status: oneOf(ACCOUNT_STATUSES) }),
  keys: answer({ keys: list(keyAnswer) }),
  createdKey: answer({ key: keyAnswer, apiKey: secretKey }),
  key: answer({ key: keyAnswer }),
  rolledKey: answer({ key: keyAnswer, apiKey: secretKey, old: { ...keyAnswer, description: 'The rolled key: valid until its expiresAt' } }),
  ledger: pageAnswer(ledgerRowAnswer),
  usage: usageAnswer,
  keyUsage: keyUsageAnswer,
} as const;

/** The operators' own routes. */
export const adminAnswers = {
  accounts: answer({ accounts: list(accountAnswer), total: integer(1), limit: integer(50), offset: integer(0) }),
  createdAccount: answer({ account: accountAnswer, apiKey: secretKey }),
  deleted: answer({ username: text('alice'), outcome: { type: 'string', enum: ['deleted', 'closed'], description: 'closed: the account has ledger rows, kept' } }),
  credits: answer({ username: text('alice'), credits: integer(60, { description: 'The balance after the change' }) }),
  users: answer({ users: list(userAnswer) }),
  invited: answer({
    user: userAnswer,
    inviteToken: text('inv_0f3e5d7c9b1a', { description: 'Shown this once' }),
    inviteUrl: text('https://lookup.example.org/account/invite#inv_0f3e5d7c9b1a', { format: 'uri' }),
  }),
  tokens: answer({ tokens: list(tokenAnswer) }),
  createdToken: answer({ token: tokenAnswer, secret: text('vlop_8c2e4f6a8b0d2c4e6f8a0b2c', { description: 'Send as Authorization: Bearer; shown this once' }) }),
  token: answer({ token: tokenAnswer }),
  audit: pageAnswer(auditRowAnswer),
  providers: answer({
    providers: { type: 'object', additionalProperties: providerAnswer, description: 'By provider name' },
    order: { ...list({ type: 'string' }), description: 'The paid upstreams in the order the router asks them now: cheapest first, UPSTREAM_ORDER before price (the console shows the same)' },
  }),
  lookupStats: lookupStatsAnswer,
  plates: answer({ plates: list(testPlateAnswer) }),
  plate: testPlateAnswer,
  removedPlate: answer({ ...(testPlateAnswer.properties as Record<string, Schema>), removed: { type: 'boolean', const: true } }),
  imports: answer({ imports: list(importSummaryAnswer) }),
  import: answer({ import: importAnswer }),
} as const;

/** The alert and webhook routes of both APIs. */
export const alertAnswers = {
  thresholds: thresholdsAnswer,
  endpoints: answer({ endpoints: list(endpointAnswer) }),
  endpoint: endpointAnswer,
  endpointWithSecret: endpointWithSecretAnswer,
  testSent: answer({ message: answer({ id: text('msg_01jd3k8v5q'), eventType: text('test'), status: oneOf(MESSAGE_STATUSES), createdAt: at() }) }),
  deliveries: answer({ deliveries: list(deliveryAnswer) }),
  messages: answer({ messages: list(messageAnswer) }),
} as const;

/** The answer of a deletion: 204 without a body. */
export const noContent: Schema = { type: 'null', description: 'No content' };

/** A CSV file (the ledger's): the document's schema of a text/csv answer. */
export const csvAnswer: Schema = { type: 'string', examples: ['id,at,kind,reason,delta,balance_after,operation,interface,query,request_id,reference,note\n'] };

/**
 * An example value made from a schema: each member's first `examples` entry, else its `const`,
 * first `enum` value or a value of its type. The document shows it beside the schema, so an
 * example cannot say what the schema does not.
 */
export function exampleOf(schema: Schema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? (schema.type as unknown[]).find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      if (Object.keys(properties).length === 0 && typeof schema.additionalProperties === 'object') return {};
      return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, exampleOf(property)]));
    }
    case 'array':
      return [exampleOf((schema.items ?? {}) as Schema)];
    case 'string':
      return schema.format === 'date-time' ? '2026-11-27T13:10:00.000Z' : 'text';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return true;
    default:
      return null;
  }
}
