import { ConfigError, EnvReader } from './env-reader.js';
import { readCarsxe, readRegcheck, readRoutingConfig, readUkvd, readVincario, type CarsxeConfig, type RegcheckConfig, type RoutingConfig, type UkvdConfig, type VincarioConfig } from './paid-upstream-config.js';
import { HTTP_URL, readUpstreamSettings, type UpstreamSettings } from './upstream-settings.js';

/**
 * Upstream provider configuration, read once at start-up with the parsers every part of the
 * configuration shares (src/config/env-reader.ts). Every variable is in docs/configuration.md
 * and docs/providers.md. A provider is enabled when its credentials are set (RDW and NHTSA, which
 * need none, when switched on); messages name variables, never their values (they may be secrets).
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

/**
 * NHTSA Recalls API (upstream-sources.md §10.4), asked by make, model and model year after an
 * offline VIN decode (CheckRecalledVIN). No key; on only when asked for (NHTSA_RECALLS_ENABLED).
 */
export interface NhtsaRecallsConfig {
  readonly settings: UpstreamSettings;
}

/**
 * vPIC GetCanadianVehicleSpecifications (upstream-sources.md §10.6), for CarSpecifications. No
 * key; on only when asked for (CANADA_SPECS_ENABLED).
 */
export interface CanadaSpecsConfig {
  readonly settings: UpstreamSettings;
}

/**
 * Israel's Ministry of Transport registers on data.gov.il, CKAN `datastore_search`
 * (upstream-sources.md §10.1). No key; on only when asked for (ISRAEL_ENABLED).
 */
export interface IsraelConfig {
  readonly settings: UpstreamSettings;
}

/**
 * NHTSA 5-Star Safety Ratings API (upstream-sources.md §10.5), added to VinCheck and CheckUSA
 * answers that carry make, model and year. No key; on only when asked for (NHTSA_RATINGS_ENABLED).
 */
export interface NhtsaRatingsConfig {
  readonly settings: UpstreamSettings;
}

export interface ProviderConfig {
  readonly dvla?: DvlaConfig;
  readonly dvsaMot?: DvsaMotConfig;
  readonly rdw?: RdwConfig;
  readonly vegvesen?: VegvesenConfig;
  readonly nhtsa?: NhtsaConfig;
  readonly nhtsaRecalls?: NhtsaRecallsConfig;
  readonly canadaSpecs?: CanadaSpecsConfig;
  readonly israel?: IsraelConfig;
  readonly nhtsaRatings?: NhtsaRatingsConfig;
  readonly regcheck?: RegcheckConfig;
  /** How paid upstreams are chosen between (UPSTREAM_CURRENCY, UPSTREAM_ORDER, UPSTREAM_FALLBACK_ON_NOT_FOUND). */
  readonly routing?: RoutingConfig;
  readonly ukvd?: UkvdConfig;
  readonly vincario?: VincarioConfig;
  readonly carsxe?: CarsxeConfig;
  /** Providers left off, and why (shown in /readyz). */
  readonly disabled: ReadonlyArray<{ readonly provider: string; readonly reason: string }>;
}

/** DVLA VES production; the test environment is https://uat.driver-vehicle-licensing.api.gov.uk/vehicle-enquiry. */
export const DVLA_DEFAULT_BASE_URL = 'https://driver-vehicle-licensing.api.gov.uk/vehicle-enquiry';
export const DVSA_DEFAULT_BASE_URL = 'https://history.mot.api.gov.uk/v1/trade';
export const RDW_DEFAULT_BASE_URL = 'https://opendata.rdw.nl';
export const VEGVESEN_DEFAULT_BASE_URL = 'https://akfell-datautlevering.atlas.vegvesen.no';
export const NHTSA_DEFAULT_BASE_URL = 'https://vpic.nhtsa.dot.gov/api/vehicles';
export const NHTSA_RECALLS_DEFAULT_BASE_URL = 'https://api.nhtsa.gov';
export const CANADA_SPECS_DEFAULT_BASE_URL = 'https://vpic.nhtsa.dot.gov/api/vehicles';
export const ISRAEL_DEFAULT_BASE_URL = 'https://data.gov.il';
export const NHTSA_RATINGS_DEFAULT_BASE_URL = 'https://api.nhtsa.gov';
export const DVSA_DEFAULT_SCOPE = 'https://tapi.dvsa.gov.uk/.default';

/** Prefixes of the `<PREFIX>_*` settings of the two NHTSA sources that answer operations of their own. */
const RECALLS_PREFIX = 'NHTSA_RECALLS';
const CANADA_SPECS_PREFIX = 'CANADA_SPECS';
const NHTSA_RATINGS_PREFIX = 'NHTSA_RATINGS';

const DVSA_CREDENTIALS = ['DVSA_CLIENT_ID', 'DVSA_CLIENT_SECRET', 'DVSA_API_KEY', 'DVSA_TOKEN_URL'] as const;

/** Reads the configuration of every upstream provider. Throws ConfigError for invalid values. */
export function readProviderConfig(env: EnvReader): ProviderConfig {
  const disabled: Array<{ provider: string; reason: string }> = [];

  let dvla: DvlaConfig | undefined;
  const dvlaKey = env.headerSecret('DVLA_API_KEY');
  if (dvlaKey === undefined) disabled.push({ provider: 'dvla', reason: 'DVLA_API_KEY is not set' });
  else dvla = { apiKey: dvlaKey, settings: readUpstreamSettings(env, 'DVLA', 'dvla', { baseUrl: DVLA_DEFAULT_BASE_URL }) };

  let dvsaMot: DvsaMotConfig | undefined;
  const missing = DVSA_CREDENTIALS.filter((name) => env.text(name) === undefined);
  if (missing.length === DVSA_CREDENTIALS.length) {
    disabled.push({ provider: 'dvsa-mot', reason: `${DVSA_CREDENTIALS.join(', ')} are not set` });
  } else if (missing.length > 0) {
    throw new ConfigError(`the DVSA MOT history API needs ${DVSA_CREDENTIALS.join(', ')}; missing: ${missing.join(', ')}`);
  } else {
    dvsaMot = {
      clientId: env.text('DVSA_CLIENT_ID') ?? '',
      clientSecret: env.text('DVSA_CLIENT_SECRET') ?? '',
      apiKey: env.headerSecret('DVSA_API_KEY') ?? '',
      tokenUrl: env.urlOr('DVSA_TOKEN_URL', '', HTTP_URL),
      scope: env.text('DVSA_SCOPE') ?? DVSA_DEFAULT_SCOPE,
      settings: readUpstreamSettings(env, 'DVSA', 'dvsa-mot', { baseUrl: DVSA_DEFAULT_BASE_URL }),
    };
  }
  const rdw = readRdw(env, disabled);
  const vegvesen = readVegvesen(env, disabled);
  const nhtsa = env.bool('NHTSA_ONLINE', false) ? { settings: readUpstreamSettings(env, 'NHTSA', 'nhtsa', { baseUrl: NHTSA_DEFAULT_BASE_URL }) } : undefined;
  if (!nhtsa) disabled.push({ provider: 'nhtsa', reason: 'NHTSA_ONLINE is not true' });
  // Neither needs a key, so each is switched on explicitly, as RDW (readRdw).
  const nhtsaRecalls = env.bool('NHTSA_RECALLS_ENABLED', false)
    ? { settings: readUpstreamSettings(env, RECALLS_PREFIX, 'nhtsa-recalls', { baseUrl: NHTSA_RECALLS_DEFAULT_BASE_URL }) }
    : undefined;
  if (!nhtsaRecalls) disabled.push({ provider: 'nhtsa-recalls', reason: 'NHTSA_RECALLS_ENABLED is not true' });
  const canadaSpecs = env.bool('CANADA_SPECS_ENABLED', false)
    ? { settings: readUpstreamSettings(env, CANADA_SPECS_PREFIX, 'canada-specs', { baseUrl: CANADA_SPECS_DEFAULT_BASE_URL }) }
    : undefined;
  if (!canadaSpecs) disabled.push({ provider: 'canada-specs', reason: 'CANADA_SPECS_ENABLED is not true' });
  // data.gov.il needs no key either: a service should not start sending plates abroad on upgrade.
  const israel = env.bool('ISRAEL_ENABLED', false) ? { settings: readUpstreamSettings(env, 'ISRAEL', 'israel', { baseUrl: ISRAEL_DEFAULT_BASE_URL }) } : undefined;
  if (!israel) disabled.push({ provider: 'israel', reason: 'ISRAEL_ENABLED is not true' });
  const nhtsaRatings = env.bool('NHTSA_RATINGS_ENABLED', false)
    ? { settings: readUpstreamSettings(env, NHTSA_RATINGS_PREFIX, 'nhtsa-ratings', { baseUrl: NHTSA_RATINGS_DEFAULT_BASE_URL }) }
    : undefined;
  if (!nhtsaRatings) disabled.push({ provider: 'nhtsa-ratings', reason: 'NHTSA_RATINGS_ENABLED is not true' });
  const regcheck = readRegcheck(env, disabled);
  const ukvd = readUkvd(env, disabled);
  const vincario = readVincario(env, disabled);
  const carsxe = readCarsxe(env, disabled);
  return {
    ...(dvla ? { dvla } : {}),
    ...(dvsaMot ? { dvsaMot } : {}),
    ...(rdw ? { rdw } : {}),
    ...(vegvesen ? { vegvesen } : {}),
    ...(nhtsa ? { nhtsa } : {}),
    ...(nhtsaRecalls ? { nhtsaRecalls } : {}),
    ...(canadaSpecs ? { canadaSpecs } : {}),
    ...(israel ? { israel } : {}),
    ...(nhtsaRatings ? { nhtsaRatings } : {}),
    ...(regcheck ? { regcheck } : {}),
    routing: readRoutingConfig(env),
    ...(ukvd ? { ukvd } : {}),
    ...(vincario ? { vincario } : {}),
    ...(carsxe ? { carsxe } : {}),
    disabled,
  };
}

/** The provider configuration alone, from an environment (tests, and src/config/config.ts through readProviderConfig). */
export function loadProviderConfig(env: Readonly<NodeJS.ProcessEnv>): ProviderConfig {
  return readProviderConfig(new EnvReader(env));
}

/**
 * RDW needs no credentials, so it is switched on explicitly (RDW_ENABLED=true): a service should
 * not start sending plates to a third party because it was upgraded.
 */
function readRdw(env: EnvReader, disabled: Array<{ provider: string; reason: string }>): RdwConfig | undefined {
  if (!env.bool('RDW_ENABLED', false)) {
    disabled.push({ provider: 'rdw', reason: 'RDW_ENABLED is not true' });
    return undefined;
  }
  const appToken = env.headerSecret('RDW_APP_TOKEN');
  return { settings: readUpstreamSettings(env, 'RDW', 'rdw', { baseUrl: RDW_DEFAULT_BASE_URL }), ...(appToken !== undefined ? { appToken } : {}) };
}

function readVegvesen(env: EnvReader, disabled: Array<{ provider: string; reason: string }>): VegvesenConfig | undefined {
  const apiKey = env.headerSecret('VEGVESEN_API_KEY');
  if (apiKey === undefined) {
    disabled.push({ provider: 'vegvesen', reason: 'VEGVESEN_API_KEY is not set' });
    return undefined;
  }
  return { apiKey, settings: readUpstreamSettings(env, 'VEGVESEN', 'vegvesen', { baseUrl: VEGVESEN_DEFAULT_BASE_URL }) };
}
