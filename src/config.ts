import { resolve } from 'node:path';

/** The service configuration, read once from the environment (README "Configuration"). */
export interface Config {
  /**
   * The environment the configuration was read from. Providers read their own settings from it
   * (DVLA_*, DVSA_*, VIN_*...; docs/providers.md), so a test or the CLI can pass one explicitly.
   */
  readonly env: Readonly<NodeJS.ProcessEnv>;
  readonly port: number;
  readonly host: string;
  /** Directory of the embedded store and operator files (images/). */
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** PostgreSQL connections per process. */
  readonly dbPoolSize: number;
  /** Server processes sharing the port (node:cluster); 1 = a single process. */
  readonly workers: number;
  /** Write debits on a worker thread when the store is an SQLite file. */
  readonly sqliteDebitWorker: boolean;
  /** Public base URL for absolute links (ImageUrl, WSDL addresses); default: from each request. */
  readonly baseUrl: string | undefined;
  readonly logLevel: string;
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
  /** `redis://` or `rediss://` URL; unset: no Redis, everything in-process (issue 5). */
  readonly redisUrl: string | undefined;
  /** Starts every Redis key and channel name, so several deployments can share one Redis. */
  readonly redisKeyPrefix: string;
  /** Rate limits of accounts that have none of their own (null: no limit). */
  readonly rateLimitDefaults: { readonly perSecond: number | null; readonly perDay: number | null };
  /** Low-credit alerts and their webhooks (docs/webhooks.md). */
  readonly webhooks: WebhookConfig;
}

/** Low-credit alerts and webhook delivery (README "Configuration", docs/webhooks.md). */
export interface WebhookConfig {
  /** Thresholds of accounts without their own, highest first. */
  readonly alertThresholds: readonly number[];
  /** Waits before each retry; attempts = length + 1. */
  readonly retryScheduleMs: readonly number[];
  readonly timeoutMs: number;
  readonly pollMs: number;
  readonly sweepMs: number;
  /** Allow endpoints on loopback and private addresses. */
  readonly allowPrivateUrls: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** The most processes `WORKERS` may ask for. */
export const MAX_WORKERS = 64;

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${env[name] ?? ''}")`);
}

function nonEmpty(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function namespace(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = nonEmpty(env, name) ?? fallback;
  if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(value) || /["<>&]/.test(value)) throw new ConfigError(`${name} must be an absolute URI (got "${value}")`);
  return value;
}

/** An optional whole number from 1 to `max`; unset means null. */
function optionalLimit(env: NodeJS.ProcessEnv, name: string, max: number): number | null {
  const text = nonEmpty(env, name);
  if (text === undefined) return null;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > max) throw new ConfigError(`${name} must be a whole number from 1 to ${max}, or unset for no limit (got "${text}")`);
  return value;
}

function redisUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = nonEmpty(env, name);
  if (value === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    // The value may hold a password: it is not repeated in the message.
    throw new ConfigError(`${name} must be a redis:// or rediss:// URL`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new ConfigError(`${name} must be a redis:// or rediss:// URL`);
  return value;
}

/** A whole number of milliseconds from `min` to `max`. */
function millis(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = nonEmpty(env, name) ?? String(fallback);
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new ConfigError(`${name} must be a whole number of milliseconds from ${min} to ${max} (got "${text}")`);
  return value;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `5s,5m,30m,2h,5h,10h`: durations with a unit (ms, s, m, h, d), comma-separated. */
function durations(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const text = nonEmpty(env, name) ?? fallback;
  const values = text.split(',').map((part) => {
    const m = /^\s*(\d+)(ms|s|m|h|d)\s*$/.exec(part);
    if (!m) throw new ConfigError(`${name} must be durations such as 5s,5m,30m,2h separated by commas (got "${text}")`);
    return Number(m[1]) * (DURATION_UNITS[m[2] ?? 's'] ?? 1000);
  });
  if (values.length > 20 || values.some((v) => v > 7 * 86_400_000)) throw new ConfigError(`${name} allows at most 20 waits of at most 7d each`);
  return values;
}

/** Comma-separated whole numbers (`100,20,0`), highest first, or none (an empty value). */
function thresholds(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const text = env[name] === undefined ? fallback : (env[name] ?? '').trim();
  if (text === '') return [];
  const values = text.split(',').map((part) => part.trim());
  if (values.length > 10 || values.some((v) => !/^\d{1,10}$/.test(v) || Number(v) > 1_000_000_000)) {
    throw new ConfigError(`${name} must be up to 10 whole numbers from 0 to 1000000000 separated by commas (got "${text}")`);
  }
  return [...new Set(values.map(Number))].sort((a, b) => b - a);
}

/** The low-credit alert and webhook settings; `loadWebhookConfig({})` gives the defaults. */
export function loadWebhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
  return Object.freeze({
    alertThresholds: Object.freeze(thresholds(env, 'CREDIT_ALERT_THRESHOLDS', '100,20,0')),
    retryScheduleMs: Object.freeze(durations(env, 'WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h')),
    timeoutMs: millis(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    pollMs: millis(env, 'WEBHOOK_POLL_MS', 1000, 10, 600_000),
    sweepMs: millis(env, 'CREDIT_ALERT_SWEEP_MS', 10_000, 10, 3_600_000),
    allowPrivateUrls: bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const portText = nonEmpty(env, 'PORT') ?? '8080';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be a port number (got "${portText}")`);

  const logLevel = nonEmpty(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.has(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}`);

  const baseUrlRaw = nonEmpty(env, 'BASE_URL');
  let baseUrl: string | undefined;
  if (baseUrlRaw !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(baseUrlRaw);
    } catch {
      throw new ConfigError(`BASE_URL must be an absolute http(s) URL (got "${baseUrlRaw}")`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError('BASE_URL must use http or https');
    baseUrl = baseUrlRaw.replace(/\/+$/, '');
  }

  const realm = nonEmpty(env, 'AUTH_REALM') ?? 'vehicle-lookup';
  if (/["\\\r\n]/.test(realm)) throw new ConfigError('AUTH_REALM must not contain quotes, backslashes or line breaks');

  const limitText = nonEmpty(env, 'XML_BODY_LIMIT') ?? '1048576';
  const xmlBodyLimit = Number(limitText);
  if (!Number.isInteger(xmlBodyLimit) || xmlBodyLimit < 1024 || xmlBodyLimit > 64 * 1024 * 1024) {
    throw new ConfigError(`XML_BODY_LIMIT must be a number of bytes from 1024 to 67108864 (got "${limitText}")`);
  }

  const poolText = nonEmpty(env, 'DB_POOL_SIZE') ?? '10';
  const dbPoolSize = Number(poolText);
  if (!Number.isInteger(dbPoolSize) || dbPoolSize < 1 || dbPoolSize > 1000) throw new ConfigError(`DB_POOL_SIZE must be a whole number from 1 to 1000 (got "${poolText}")`);

  const redisKeyPrefix = nonEmpty(env, 'REDIS_KEY_PREFIX') ?? 'vehicle-lookup:';
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError(`REDIS_KEY_PREFIX must be 1 to 64 characters of letters, digits and . _ : - (got "${redisKeyPrefix}")`);
  }

  const workersText = nonEmpty(env, 'WORKERS') ?? '1';
  const workers = Number(workersText);
  if (!/^\d+$/.test(workersText) || workers < 1 || workers > MAX_WORKERS) {
    throw new ConfigError(`WORKERS must be a whole number from 1 to ${MAX_WORKERS} (got "${workersText}")`);
  }

  const dataDir = resolve(nonEmpty(env, 'DATA_DIR') ?? './data');
  return Object.freeze({
    env: Object.freeze({ ...env }),
    port,
    host: nonEmpty(env, 'HOST') ?? '0.0.0.0',
    dataDir,
    databaseUrl: nonEmpty(env, 'DATABASE_URL'),
    dbPoolSize,
    sqliteDebitWorker: bool(env, 'SQLITE_DEBIT_WORKER', false),
    workers,
    baseUrl,
    logLevel,
    authRealm: realm,
    getCreditsEnabled: bool(env, 'GETCREDITS_ENABLED', true),
    requireApiKey: bool(env, 'REQUIRE_API_KEY', false),
    seedOnEmptyStore: bool(env, 'SEED_DEMO', true),
    imagesDir: resolve(nonEmpty(env, 'IMAGES_DIR') ?? resolve(dataDir, 'images')),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    regNamespace: namespace(env, 'REG_NAMESPACE', 'http://regcheck.org.uk'),
    bespokeNamespace: namespace(env, 'BESPOKE_NAMESPACE', 'http://Regcheck.org.uk/'),
    xmlBodyLimit,
    redisUrl: redisUrl(env, 'REDIS_URL'),
    redisKeyPrefix,
    rateLimitDefaults: Object.freeze({
      perSecond: optionalLimit(env, 'RATE_LIMIT_PER_SECOND', 1_000_000),
      perDay: optionalLimit(env, 'RATE_LIMIT_PER_DAY', 1_000_000_000),
    }),
    webhooks: loadWebhookConfig(env),
  });
}
