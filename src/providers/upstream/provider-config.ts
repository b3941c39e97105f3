import { ConfigError } from '../../config.js';
import type { UpstreamSettings } from './upstream-source.js';

/**
 * Upstream provider configuration, read once from the environment. Every variable is documented
 * in docs/providers.md ("Configuration"). A provider is enabled when its credentials are set;
 * messages name variables, never their values (they may be secrets).
 */

/** DVLA Vehicle Enquiry Service (upstream-sources.md §1). */
export interface DvlaConfig {
  readonly settings: UpstreamSettings;
  readonly apiKey: string;
}

/** DVSA MOT history API, the new one with OAuth2 (upstream-sources.md §2b). */
export interface DvsaMotConfig {
  readonly settings: UpstreamSettings;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly apiKey: string;
  readonly tokenUrl: string;
  readonly scope: string;
}

/** RDW Open Data, Socrata (upstream-sources.md §3). No key; the app token only lifts throttling. */
export interface RdwConfig {
  readonly settings: UpstreamSettings;
  readonly appToken?: string;
}

/** Statens vegvesen, enkeltoppslag (upstream-sources.md §5). */
export interface VegvesenConfig {
  readonly settings: UpstreamSettings;
  readonly apiKey: string;
}

/** NHTSA vPIC REST (upstream-sources.md §4a): no key; on only when asked for (NHTSA_ONLINE=true). */
export interface NhtsaConfig {
  readonly settings: UpstreamSettings;
}

export interface ProviderConfig {
  readonly dvla?: DvlaConfig;
  readonly dvsaMot?: DvsaMotConfig;
  readonly rdw?: RdwConfig;
  readonly vegvesen?: VegvesenConfig;
  readonly nhtsa?: NhtsaConfig;
  /** Providers left off, and why (shown in /readyz). */
  readonly disabled: ReadonlyArray<{ readonly provider: string; readonly reason: string }>;
}

/** Defaults of the common `<PREFIX>_*` settings; each provider gives its own base URL. */
export interface UpstreamDefaults {
  readonly baseUrl: string;
  readonly timeoutMs?: number;
  readonly budgetMs?: number;
  readonly cacheTtlS?: number;
  readonly notFoundTtlS?: number;
  readonly breakerFailures?: number;
  readonly breakerOpenS?: number;
}

/** Env var reader shared with the next providers (RDW, NHTSA, Statens vegvesen). */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = envValue(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  return n;
}

/**
 * A credential sent in an HTTP header: visible ASCII only. Checked at start-up because fetch
 * would otherwise refuse every request, with the value in its error message.
 */
export function headerSecret(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = envValue(env, name);
  if (value !== undefined && !/^[\x21-\x7e]+$/.test(value)) throw new ConfigError(`${name} may hold only visible ASCII characters (no spaces or line breaks)`);
  return value;
}

/** An absolute http(s) URL without a trailing slash. The value is not echoed: it may hold a password. */
export function httpUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = envValue(env, name) ?? fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${name} must use http or https`);
  if (parsed.search !== '' || parsed.hash !== '') throw new ConfigError(`${name} must not have a query or fragment`);
  return raw.replace(/\/+$/, '');
}

/**
 * The common settings of one upstream from `<PREFIX>_BASE_URL`, `_TIMEOUT_MS`, `_BUDGET_MS`,
 * `_CACHE_TTL_S`, `_NOT_FOUND_TTL_S`, `_BREAKER_FAILURES` and `_BREAKER_OPEN_S`.
 */
export function readUpstreamSettings(env: NodeJS.ProcessEnv, prefix: string, name: string, defaults: UpstreamDefaults): UpstreamSettings {
  const timeoutMs = wholeNumber(env, `${prefix}_TIMEOUT_MS`, defaults.timeoutMs ?? 5000, 50, 120_000);
  const budgetMs = wholeNumber(env, `${prefix}_BUDGET_MS`, defaults.budgetMs ?? Math.max(12_000, timeoutMs), 50, 300_000);
  if (budgetMs < timeoutMs) throw new ConfigError(`${prefix}_BUDGET_MS must be at least ${prefix}_TIMEOUT_MS`);
  return {
    name,
    baseUrl: httpUrl(env, `${prefix}_BASE_URL`, defaults.baseUrl),
    timeoutMs,
    budgetMs,
    cacheTtlS: wholeNumber(env, `${prefix}_CACHE_TTL_S`, defaults.cacheTtlS ?? 86_400, 0, 31_536_000),
    notFoundTtlS: wholeNumber(env, `${prefix}_NOT_FOUND_TTL_S`, defaults.notFoundTtlS ?? 3600, 0, 31_536_000),
    breakerFailures: wholeNumber(env, `${prefix}_BREAKER_FAILURES`, defaults.breakerFailures ?? 5, 1, 1000),
    breakerOpenMs: wholeNumber(env, `${prefix}_BREAKER_OPEN_S`, defaults.breakerOpenS ?? 30, 0, 86_400) * 1000,
  };
}

/** DVLA VES production; the test environment is https://uat.driver-vehicle-licensing.api.gov.uk/vehicle-enquiry. */
export const DVLA_DEFAULT_BASE_URL = 'https://driver-vehicle-licensing.api.gov.uk/vehicle-enquiry';
export const DVSA_DEFAULT_BASE_URL = 'https://history.mot.api.gov.uk/v1/trade';
export const RDW_DEFAULT_BASE_URL = 'https://opendata.rdw.nl';
export const VEGVESEN_DEFAULT_BASE_URL = 'https://akfell-datautlevering.atlas.vegvesen.no';
export const NHTSA_DEFAULT_BASE_URL = 'https://vpic.nhtsa.dot.gov/api/vehicles';
export const DVSA_DEFAULT_SCOPE = 'https://tapi.dvsa.gov.uk/.default';

const DVSA_CREDENTIALS = ['DVSA_CLIENT_ID', 'DVSA_CLIENT_SECRET', 'DVSA_API_KEY', 'DVSA_TOKEN_URL'] as const;

/** Reads the configuration of every upstream provider. Throws ConfigError for invalid values. */
export function loadProviderConfig(env: NodeJS.ProcessEnv = process.env): ProviderConfig {
  const disabled: Array<{ provider: string; reason: string }> = [];

  let dvla: DvlaConfig | undefined;
  const dvlaKey = headerSecret(env, 'DVLA_API_KEY');
  if (dvlaKey === undefined) disabled.push({ provider: 'dvla', reason: 'DVLA_API_KEY is not set' });
  else dvla = { apiKey: dvlaKey, settings: readUpstreamSettings(env, 'DVLA', 'dvla', { baseUrl: DVLA_DEFAULT_BASE_URL }) };

  let dvsaMot: DvsaMotConfig | undefined;
  const missing = DVSA_CREDENTIALS.filter((name) => envValue(env, name) === undefined);
  if (missing.length === DVSA_CREDENTIALS.length) {
    disabled.push({ provider: 'dvsa-mot', reason: `${DVSA_CREDENTIALS.join(', ')} are not set` });
  } else if (missing.length > 0) {
    throw new ConfigError(`the DVSA MOT history API needs ${DVSA_CREDENTIALS.join(', ')}; missing: ${missing.join(', ')}`);
  } else {
    dvsaMot = {
      clientId: envValue(env, 'DVSA_CLIENT_ID') ?? '',
      clientSecret: envValue(env, 'DVSA_CLIENT_SECRET') ?? '',
      apiKey: headerSecret(env, 'DVSA_API_KEY') ?? '',
      tokenUrl: httpUrl(env, 'DVSA_TOKEN_URL', ''),
      scope: envValue(env, 'DVSA_SCOPE') ?? DVSA_DEFAULT_SCOPE,
      settings: readUpstreamSettings(env, 'DVSA', 'dvsa-mot', { baseUrl: DVSA_DEFAULT_BASE_URL }),
    };
  }
  const rdw = readRdw(env, disabled);
  const vegvesen = readVegvesen(env, disabled);
  const nhtsa = switchedOn(env, 'NHTSA_ONLINE') ? { settings: readUpstreamSettings(env, 'NHTSA', 'nhtsa', { baseUrl: NHTSA_DEFAULT_BASE_URL }) } : undefined;
  if (!nhtsa) disabled.push({ provider: 'nhtsa', reason: 'NHTSA_ONLINE is not true' });
  return { ...(dvla ? { dvla } : {}), ...(dvsaMot ? { dvsaMot } : {}), ...(rdw ? { rdw } : {}), ...(vegvesen ? { vegvesen } : {}), ...(nhtsa ? { nhtsa } : {}), disabled };
}

/** A true/false switch (unset = false). */
function switchedOn(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = envValue(env, name)?.toLowerCase();
  if (value !== undefined && value !== 'true' && value !== 'false') throw new ConfigError(`${name} must be true or false`);
  return value === 'true';
}

/**
 * RDW needs no credentials, so it is switched on explicitly (RDW_ENABLED=true): a service should
 * not start sending plates to a third party because it was upgraded.
 */
function readRdw(env: NodeJS.ProcessEnv, disabled: Array<{ provider: string; reason: string }>): RdwConfig | undefined {
  if (!switchedOn(env, 'RDW_ENABLED')) {
    disabled.push({ provider: 'rdw', reason: 'RDW_ENABLED is not true' });
    return undefined;
  }
  const appToken = headerSecret(env, 'RDW_APP_TOKEN');
  return { settings: readUpstreamSettings(env, 'RDW', 'rdw', { baseUrl: RDW_DEFAULT_BASE_URL }), ...(appToken !== undefined ? { appToken } : {}) };
}

function readVegvesen(env: NodeJS.ProcessEnv, disabled: Array<{ provider: string; reason: string }>): VegvesenConfig | undefined {
  const apiKey = headerSecret(env, 'VEGVESEN_API_KEY');
  if (apiKey === undefined) {
    disabled.push({ provider: 'vegvesen', reason: 'VEGVESEN_API_KEY is not set' });
    return undefined;
  }
  return { apiKey, settings: readUpstreamSettings(env, 'VEGVESEN', 'vegvesen', { baseUrl: VEGVESEN_DEFAULT_BASE_URL }) };
}
