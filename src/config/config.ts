import { resolve } from 'node:path';
import { MAX_TOP_UP } from '../accounts/account.service.js';
import type { AlertConfig } from '../alerts/alerting.js';
import { readAlertConfig } from './alert-config.js';
import { Catalogue } from '../catalogue/catalogue.js';
import { OPERATIONS } from '../catalogue/operations.js';
import { readDataDir } from './data-dir.js';
import { ConfigError, EnvReader } from './env-reader.js';
import { DEFAULT_IMPORT_MAX_BYTES, MAX_IMPORT_MAX_BYTES } from '../datasets/import/import-jobs.js';
import { DEFAULT_SQLITE_SYNCHRONOUS, type SqliteSynchronous } from '../storage/sqlite-connection.js';
import { readProviderConfig, type ProviderConfig } from './provider-config.js';
import { readVinConfig, type VinConfig } from './vin-config.js';

export { ConfigError, EnvReader };

/**
 * The configuration every command needs: where the store is, Redis, and the rate limits of
 * accounts without their own. The CLI reads only this (and what its command uses), so a command
 * that manages accounts does not fail on, say, an incomplete DVSA configuration.
 */
export interface CoreConfig {
  /** Directory of the embedded store and operator files (images/, vin/). */
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** PostgreSQL connections per process. */
  readonly dbPoolSize: number;
  /** PostgreSQL: how long start-up keeps retrying an unreachable database, in ms (0: one attempt). */
  readonly dbStartWaitMs: number;
  /** PostgreSQL: how long a query may wait for a connection (opening one, or a free one of the pool). */
  readonly dbConnectTimeoutMs: number;
  /** PostgreSQL: how long a debit batch whose COMMIT answer was lost waits to learn its outcome, in ms. */
  readonly dbCommitSettleMs: number;
  /** SQLite's durability of a COMMIT: `full` survives power loss, `normal` only process crashes. */
  readonly sqliteSynchronous: SqliteSynchronous;
  /** `redis://` or `rediss://` URL; unset: no Redis, everything in-process (issue 5). */
  readonly redisUrl: string | undefined;
  /** Starts every Redis key and channel name, so several deployments can share one Redis. */
  readonly redisKeyPrefix: string;
  /** Rate limits of accounts that have none of their own (null: no limit). */
  readonly rateLimitDefaults: { readonly perSecond: number | null; readonly perDay: number | null };
}

/** The service configuration, read once from the environment at start-up (docs/configuration.md). */
export interface Config extends CoreConfig {
  readonly port: number;
  readonly host: string;
  /** Server processes sharing the port (node:cluster); 1 = a single process. */
  readonly workers: number;
  /** Public base URL for absolute links (ImageUrl, WSDL addresses); default: from each request. */
  readonly baseUrl: string | undefined;
  readonly logLevel: LogLevel;
  /**
   * `LOG_FORMAT`: `json` (one JSON object a line, for machines), `pretty` (one readable line an
   * event), or `auto` (the default: pretty when stdout is a terminal, JSON otherwise).
   */
  readonly logFormat: LogFormat;
  readonly authRealm: string;
  /** `GET /ajax/getcredits.aspx` on or off. */
  readonly getCreditsEnabled: boolean;
  /** Require the API key (HTTP Basic) on the XML bindings for every account. */
  readonly requireApiKey: boolean;
  /** On an empty store: create the demo account and load the sample dataset. */
  readonly seedOnEmptyStore: boolean;
  /** Operator-supplied vehicle pictures, named after make and model. */
  readonly imagesDir: string;
  /** Honour X-Forwarded-* from a reverse proxy when building URLs. */
  readonly trustProxy: boolean;
  /** XML namespace of reg.asmx (compat-notes: `http://regcheck.org.uk`). */
  readonly regNamespace: string;
  /** XML namespace of bespokeapi.asmx (compat-notes: `http://Regcheck.org.uk/`). */
  readonly bespokeNamespace: string;
  /** Largest SOAP or form request body, in bytes, after any gzip inflation. */
  readonly xmlBodyLimit: number;
  /** How long a charged lookup's Idempotency-Key is remembered, in hours (issue 17 item 3). */
  readonly idempotencyRetentionHours: number;
  /** Credits a successful lookup of these operations costs, in place of the catalogue's (OPERATION_COSTS). */
  readonly operationCosts: Readonly<Record<string, number>>;
  /** The upstream data sources (DVLA_*, DVSA_*, RDW_*, NHTSA_*, VEGVESEN_*; docs/providers.md). */
  readonly providers: ProviderConfig;
  /** Offline VIN decoding (VIN_DECODER, VIN_DB_PATH; docs/vin-decoding.md). */
  readonly vin: VinConfig;
  /** Connection limits against slow and hostile clients (issue 17 items 5 and 11; docs/configuration.md). */
  readonly http: HttpLimits;
  /** Low-credit alerts and their webhooks (CREDIT_ALERT_*, WEBHOOK_*; docs/webhooks.md). */
  readonly alerts: AlertConfig;
  /** Operations without a username that callers without credentials may use (docs/interfaces.md "Operations without a username"). */
  readonly anonymous: AnonymousConfig;
  /** Self-service sign-up (SIGNUP_*; docs/admin-api.md "Self-service sign-up"). */
  readonly signup: SignupConfig;
  /** How a customer gets more credits (CONSOLE_TOPUP_URL): a link (http/https) or a sentence; unset, the console says "ask your operator". */
  readonly consoleTopUp: string | undefined;
  /** How often each instance adds its lookup counts to the store's hourly rollup (the operator overview's rates). */
  readonly lookupStatsFlushSeconds: number;
  /** The largest JSON Lines file uploaded through the admin API or console, in bytes (IMPORT_MAX_BYTES). */
  readonly importMaxBytes: number;
}

/** Self-service sign-up (issue 16): off unless the operator turns it on. */
export interface SignupConfig {
  /** Off: `POST /account/api/signup` and `/console/signup` answer 404, and nothing links to them. */
  readonly enabled: boolean;
  /** Credits a new account starts with, as one ledger row noted "trial credits (sign-up)". */
  readonly trialCredits: number;
  /** Sign-ups one client address may make in any 24 hours; more are refused with 429. */
  readonly perAddressPerDay: number;
}

/** The most credits one lookup may be priced at. */
export const MAX_OPERATION_COST = 1_000_000;

/**
 * `OPERATION_COSTS=CheckUKMinimal:1,Check:2`: a comma-separated list of `Operation:credits`
 * (exact operation names; whole credits from 1, since a free lookup is an account's test plates'
 * business, not a price). Operations not listed keep the catalogue's cost.
 */
function readOperationCosts(env: EnvReader): Readonly<Record<string, number>> {
  const raw = env.text('OPERATION_COSTS');
  const costs: Record<string, number> = {};
  if (raw === undefined) return Object.freeze(costs);
  const known = new Set(OPERATIONS.map((op) => op.name));
  for (const item of raw.split(',')) {
    const match = /^\s*(\w+)\s*:\s*(\d+)\s*$/.exec(item);
    const name = match?.[1] ?? '';
    const cost = Number(match?.[2]);
    if (!match) throw new ConfigError(`OPERATION_COSTS must be a comma-separated list of Operation:credits, e.g. CheckUKMinimal:1,Check:2 (got "${raw}")`);
    if (!known.has(name)) throw new ConfigError(`OPERATION_COSTS names an unknown operation "${name}" (names are case-sensitive)`);
    if (cost < 1 || cost > MAX_OPERATION_COST) throw new ConfigError(`OPERATION_COSTS: the cost of ${name} must be a whole number from 1 to ${MAX_OPERATION_COST} (got "${match[2] ?? ''}")`);
    if (Object.hasOwn(costs, name)) throw new ConfigError(`OPERATION_COSTS lists ${name} twice`);
    costs[name] = cost;
  }
  return Object.freeze(costs);
}

/** ANONYMOUS_OPERATIONS and the per-address limits of anonymous calls. */
export interface AnonymousConfig {
  readonly operations: readonly string[];
  readonly perSecond: number;
  readonly perDay: number;
}

/** Timeouts in milliseconds, the connection cap and the /metrics token. */
export interface HttpLimits {
  /** The request line and headers must arrive within this. */
  readonly headersTimeoutMs: number;
  /** The whole request, headers and body, must arrive within this (a trickling body is cut). */
  readonly requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** A connection with no bytes moving either way is closed after this (a client that stops reading). */
  readonly socketTimeoutMs: number;
  /** Open connections per process; more are closed as they arrive. */
  readonly maxConnections: number;
  /** Bearer token `/metrics` requires; undefined: /metrics is open. */
  readonly metricsToken: string | undefined;
}

/** The most processes `WORKERS` may ask for. */
export const MAX_WORKERS = 64;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The store, Redis and rate-limit defaults (see CoreConfig). */
export function readCoreConfig(env: EnvReader): CoreConfig {
  return Object.freeze({
    dataDir: readDataDir(env),
    databaseUrl: env.text('DATABASE_URL'),
    dbPoolSize: env.int('DB_POOL_SIZE', 10, { min: 1, max: 1000 }),
    dbStartWaitMs: env.int('DB_START_WAIT_SECONDS', 60, { min: 0, max: 86_400 }) * 1000,
    dbConnectTimeoutMs: env.int('DB_CONNECT_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 }),
    dbCommitSettleMs: env.int('DB_COMMIT_SETTLE_SECONDS', 30, { min: 1, max: 3600 }) * 1000,
    sqliteSynchronous: readSqliteSynchronous(env),
    redisUrl: env.url('REDIS_URL', { protocols: ['redis', 'rediss'], description: 'a redis:// or rediss:// URL' }),
    redisKeyPrefix: env.matching('REDIS_KEY_PREFIX', 'vehicle-lookup:', /^[A-Za-z0-9._:-]{1,64}$/, '1 to 64 characters of letters, digits and . _ : -'),
    rateLimitDefaults: Object.freeze({
      perSecond: env.optionalInt('RATE_LIMIT_PER_SECOND', { min: 1, max: 1_000_000 }, 'no limit') ?? null,
      perDay: env.optionalInt('RATE_LIMIT_PER_DAY', { min: 1, max: 1_000_000_000 }, 'no limit') ?? null,
    }),
  });
}

/** `full` (the default: debits are money, docs/operating.md) or `normal`, in any letter case. */
function readSqliteSynchronous(env: EnvReader): SqliteSynchronous {
  const raw = env.text('SQLITE_SYNCHRONOUS');
  if (raw === undefined) return DEFAULT_SQLITE_SYNCHRONOUS;
  const value = raw.toLowerCase();
  if (value !== 'full' && value !== 'normal') throw new ConfigError(`SQLITE_SYNCHRONOUS must be full or normal (got "${raw}")`);
  return value;
}

/** An absolute URI usable as an XML namespace and in a SOAPAction. */
function namespace(env: EnvReader, name: string, fallback: string): string {
  const value = env.text(name) ?? fallback;
  if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(value) || /["<>&]/.test(value)) throw new ConfigError(`${name} must be an absolute URI (got "${value}")`);
  return value;
}

const HOUR_MS = 3_600_000;

/** Timeouts, the connection cap and the /metrics token (issue 17 items 5 and 11). */
function readHttpLimits(env: EnvReader): HttpLimits {
  const requestTimeoutMs = env.int('REQUEST_TIMEOUT_MS', 30_000, { min: 100, max: HOUR_MS });
  const headersTimeoutMs = env.int('HEADERS_TIMEOUT_MS', Math.min(10_000, requestTimeoutMs), { min: 100, max: HOUR_MS });
  // Node refuses a headers timeout longer than the request timeout that contains it.
  if (headersTimeoutMs > requestTimeoutMs) throw new ConfigError(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  const metricsToken = env.text('METRICS_TOKEN');
  if (metricsToken !== undefined && !/^[A-Za-z0-9._~+/=-]{16,256}$/.test(metricsToken)) {
    // The value is a secret: it is not repeated in the message.
    throw new ConfigError('METRICS_TOKEN must be 16 to 256 characters of letters, digits and . _ ~ + / = -');
  }
  return Object.freeze({
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: env.int('KEEP_ALIVE_TIMEOUT_MS', 72_000, { min: 100, max: HOUR_MS }),
    socketTimeoutMs: env.int('SOCKET_TIMEOUT_MS', 120_000, { min: 1000, max: HOUR_MS }),
    maxConnections: env.int('MAX_CONNECTIONS', 10_000, { min: 1, max: 1_000_000 }),
    metricsToken,
  });
}

/**
 * ANONYMOUS_OPERATIONS: a comma-separated list of operations without a `username` parameter that
 * answer callers without credentials on the XML bindings (free, limited per client address).
 * Default: none. A name that is not such an operation is an error, not silently ignored.
 */
function readAnonymousConfig(env: EnvReader): AnonymousConfig {
  const raw = env.text('ANONYMOUS_OPERATIONS') ?? '';
  const names = raw.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const eligible = OPERATIONS.filter((op) => !Catalogue.takesUsername(op)).map((op) => op.name);
  for (const name of names) {
    if (!eligible.includes(name)) throw new ConfigError(`ANONYMOUS_OPERATIONS: "${name}" is not an operation without a username (one of ${eligible.join(', ')})`);
  }
  return Object.freeze({
    operations: Object.freeze([...new Set(names)]),
    perSecond: env.int('ANONYMOUS_RATE_PER_SECOND', 1, { min: 1, max: 1_000_000 }),
    perDay: env.int('ANONYMOUS_RATE_PER_DAY', 100, { min: 1, max: 1_000_000_000 }),
  });
}

/** SIGNUP_ENABLED, SIGNUP_TRIAL_CREDITS, SIGNUP_PER_ADDRESS_PER_DAY. */
function readSignupConfig(env: EnvReader): SignupConfig {
  return Object.freeze({
    enabled: env.bool('SIGNUP_ENABLED', false),
    trialCredits: env.int('SIGNUP_TRIAL_CREDITS', 10, { min: 0, max: MAX_TOP_UP }),
    perAddressPerDay: env.int('SIGNUP_PER_ADDRESS_PER_DAY', 3, { min: 1, max: 10_000 }),
  });
}

/** The HTTP server: address, links, authentication realm, XML limits. */
function readServerConfig(env: EnvReader, dataDir: string) {
  const portText = env.text('PORT') ?? '8080';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new ConfigError(`PORT must be a port number (got "${portText}")`);
  const baseUrl = env.url('BASE_URL', { protocols: ['http', 'https'], description: 'an absolute http(s) URL', trimSlash: true });
  const authRealm = env.text('AUTH_REALM') ?? 'vehicle-lookup';
  if (/["\\\r\n]/.test(authRealm)) throw new ConfigError('AUTH_REALM must not contain quotes, backslashes or line breaks');
  return {
    port,
    host: env.text('HOST') ?? '0.0.0.0',
    workers: env.int('WORKERS', 1, { min: 1, max: MAX_WORKERS }),
    baseUrl,
    logLevel: env.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: env.oneOf('LOG_FORMAT', LOG_FORMATS, 'auto'),
    authRealm,
    trustProxy: env.bool('TRUST_PROXY', false),
    getCreditsEnabled: env.bool('GETCREDITS_ENABLED', true),
    requireApiKey: env.bool('REQUIRE_API_KEY', false),
    seedOnEmptyStore: env.bool('SEED_DEMO', true),
    imagesDir: resolve(env.text('IMAGES_DIR') ?? resolve(dataDir, 'images')),
    regNamespace: namespace(env, 'REG_NAMESPACE', 'http://regcheck.org.uk'),
    bespokeNamespace: namespace(env, 'BESPOKE_NAMESPACE', 'http://Regcheck.org.uk/'),
    xmlBodyLimit: env.int('XML_BODY_LIMIT', 1_048_576, { min: 1024, max: 64 * 1024 * 1024 }),
    importMaxBytes: env.int('IMPORT_MAX_BYTES', DEFAULT_IMPORT_MAX_BYTES, { min: 1024, max: MAX_IMPORT_MAX_BYTES }),
    idempotencyRetentionHours: env.int('IDEMPOTENCY_RETENTION_HOURS', 24, { min: 1, max: 24 * 90 }),
    operationCosts: readOperationCosts(env),
    http: readHttpLimits(env),
    anonymous: readAnonymousConfig(env),
    signup: readSignupConfig(env),
    consoleTopUp: env.text('CONSOLE_TOPUP_URL'),
    lookupStatsFlushSeconds: env.int('LOOKUP_STATS_FLUSH_SECONDS', 10, { min: 1, max: 3600 }),
  };
}

/** Everything: the core, the server, the upstream providers, the offline VIN decoder and the alerts. */
export function readConfig(env: EnvReader): Config {
  const core = readCoreConfig(env);
  return Object.freeze({
    ...core,
    ...readServerConfig(env, core.dataDir),
    providers: readProviderConfig(env),
    vin: readVinConfig(env, core.dataDir),
    alerts: readAlertConfig(env),
  });
}

/** The whole configuration (the server); throws ConfigError naming the first invalid variable. */
export function loadConfig(env: Readonly<NodeJS.ProcessEnv> = process.env): Config {
  return readConfig(new EnvReader(env));
}

/** The core configuration only (CLI commands that manage accounts, credits, records). */
export function loadCoreConfig(env: Readonly<NodeJS.ProcessEnv>): CoreConfig {
  return readCoreConfig(new EnvReader(env));
}
