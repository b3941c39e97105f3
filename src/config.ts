import { resolve } from 'node:path';

/** The service configuration, read once from the environment (README "Configuration"). */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Directory of the embedded store and operator files (images/). */
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** PostgreSQL connections per process. */
  readonly dbPoolSize: number;
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
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

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

  const dataDir = resolve(nonEmpty(env, 'DATA_DIR') ?? './data');
  return Object.freeze({
    port,
    host: nonEmpty(env, 'HOST') ?? '0.0.0.0',
    dataDir,
    databaseUrl: nonEmpty(env, 'DATABASE_URL'),
    dbPoolSize,
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
  });
}
