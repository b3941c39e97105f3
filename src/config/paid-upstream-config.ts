import { OPERATIONS } from '../catalogue/operations.js';
import { PAID_UPSTREAM_NAMES } from '../datasets/kept-per-operation.js';
import { ConfigError, type EnvReader } from './env-reader.js';
import { readUpstreamSettings, type UpstreamSettings } from './upstream-settings.js';

/*
 * The paid upstreams' configuration (issue 32): the settings the router reads of every one of them
 * alike (`<NAME>_PRICE`, `_OPERATIONS`, `_MONTHLY_BUDGET`, `_CACHE_TTL_S`, `_RECORD_FILE`), the
 * routing (UPSTREAM_*), and each paid provider's own variables. readProviderConfig
 * (provider-config.ts) calls the readers.
 */

/**
 * The original Car Registration API (regcheck.org.uk) as an upstream, over its HTTP GET binding
 * (issue 24; docs/providers.md "The original service"): on when REGCHECK_USERNAME is set.
 */
export interface RegcheckConfig {
  readonly settings: UpstreamSettings;
  /** The operator's account at the original (sent as its `username` parameter). */
  readonly username: string;
  /** The operations that may go upstream (REGCHECK_OPERATIONS); every operation by default. */
  readonly operations: readonly string[];
  /** Below this balance at the original the operator is alerted (REGCHECK_LOW_CREDITS, default 100). */
  readonly lowCredits: number;
  /** What the router reads of it (REGCHECK_PRICE, _OPERATIONS, _MONTHLY_BUDGET, _CACHE_TTL_S) and the record file (_RECORD_FILE): readPaidUpstream. */
  readonly paid: PaidUpstreamSettings;
}

/**
 * UK Vehicle Data's r2 lookup API (commercial-upstreams.md §2.2; docs/providers.md "UK Vehicle
 * Data"): on when UKVD_API_KEY is set.
 */
export interface UkvdConfig {
  readonly settings: UpstreamSettings;
  /** What the router reads of it (`<NAME>_PRICE`, `_OPERATIONS`, `_MONTHLY_BUDGET`, `_CACHE_TTL_S`, `_RECORD_FILE`): readPaidUpstream. */
  readonly paid: PaidUpstreamSettings;
  /** The account's API key (a uuid), sent as the `ApiKey` query parameter. */
  readonly apiKey: string;
  /** The package asked for Check, CheckMotorBikeUK and CheckUKMinimal (UKVD_PACKAGE, default VehicleDetails). */
  readonly packageName: string;
}

/**
 * Vincario's API 3.2 (commercial-upstreams.md §3; docs/providers.md "Vincario"): on when both
 * VINCARIO_API_KEY and VINCARIO_SECRET are set. The secret only feeds the control sum.
 */
export interface VincarioConfig {
  readonly settings: UpstreamSettings;
  /** What the router reads of it (`<NAME>_PRICE`, `_OPERATIONS`, `_MONTHLY_BUDGET`, `_CACHE_TTL_S`, `_RECORD_FILE`): readPaidUpstream. */
  readonly paid: PaidUpstreamSettings;
  readonly apiKey: string;
  readonly secret: string;
}

/** CarsXE (commercial-upstreams.md §1; docs/providers.md "CarsXE"): on when CARSXE_API_KEY is set. */
export interface CarsxeConfig {
  readonly settings: UpstreamSettings;
  /** What the router reads of it (`<NAME>_PRICE`, `_OPERATIONS`, `_MONTHLY_BUDGET`, `_CACHE_TTL_S`, `_RECORD_FILE`): readPaidUpstream. */
  readonly paid: PaidUpstreamSettings;
  readonly apiKey: string;
}

export const REGCHECK_DEFAULT_BASE_URL = 'https://www.regcheck.org.uk';
/** UKVD r2 ("Vehicle Data Global"); the lookup path /r2/lookup is appended. */
export const UKVD_DEFAULT_BASE_URL = 'https://uk.api.vehicledataglobal.com';
/** Vincario's API 3.2 as its OpenAPI document names it (api.vindecoder.eu/3.2 answers the same). */
export const VINCARIO_DEFAULT_BASE_URL = 'https://api.vincario.com/3.2';
export const CARSXE_DEFAULT_BASE_URL = 'https://api.carsxe.com';
export const UKVD_DEFAULT_PACKAGE = 'VehicleDetails';

/**
 * The original service: REGCHECK_USERNAME turns it on; REGCHECK_OPERATIONS, a comma-separated list
 * of operation names written as ANONYMOUS_OPERATIONS is, limits what goes upstream (default: every
 * operation). A name that is not an operation is an error, not silently ignored. It answers
 * slowly at times and is never asked twice for one request (no retry), so its per-attempt timeout
 * is the whole budget by default.
 */
export function readRegcheck(env: EnvReader, disabled: Array<{ provider: string; reason: string }>): RegcheckConfig | undefined {
  const username = env.headerSecret('REGCHECK_USERNAME');
  if (username === undefined) {
    disabled.push({ provider: 'regcheck', reason: 'REGCHECK_USERNAME is not set' });
    return undefined;
  }
  const settings = readUpstreamSettings(env, 'REGCHECK', 'regcheck', { baseUrl: REGCHECK_DEFAULT_BASE_URL, timeoutMs: 10_000, budgetMs: 10_000 });
  const paid = readPaidUpstream(env, 'REGCHECK', settings);
  return {
    username,
    operations: paid.operations,
    lowCredits: env.int('REGCHECK_LOW_CREDITS', 100, { min: 0, max: 1_000_000_000 }),
    paid,
    settings: paid.settings,
  };
}

/**
 * What the router (src/providers/routing/) reads of one paid upstream, the same four settings for
 * every one of them (issue 32): REGCHECK, UKVD, VINCARIO, CARSXE.
 */
export interface PaidUpstreamSettings {
  /** The provider's name (its UpstreamSettings.name): the router's, the ledger's and the console's. */
  readonly name: string;
  /** `<NAME>_PRICE`: what one answer with data costs the operator, in UPSTREAM_CURRENCY; undefined when not told (ranked after every priced source). */
  readonly price: number | undefined;
  /** `<NAME>_OPERATIONS`: the operations it may answer (every operation of the catalogue when unset, narrowed by the adapter to what it serves). */
  readonly operations: readonly string[];
  /** `<NAME>_MONTHLY_BUDGET`: spend in a calendar month (UTC) after which it is not asked until the month turns; undefined: no budget. */
  readonly monthlyBudget: number | undefined;
  /** `<NAME>_RECORD_FILE`: where each answer with data it gives is appended as an import line (src/providers/upstream/answer-recording.ts); none by default. */
  readonly recordFile?: string;
  /**
   * Its common settings, with `<NAME>_CACHE_TTL_S=0` meaning "never kept" for not-found answers
   * too (a provider whose terms forbid storing its answers: commercial-upstreams.md §9).
   */
  readonly settings: UpstreamSettings;
}

/** The largest price or budget accepted: a typo of a few extra digits is refused rather than trusted. */
const MAX_MONEY = 1_000_000_000;

/** A decimal amount of money (`0.12`, `15`), at most 6 decimals, from 0 to MAX_MONEY; undefined when unset. */
function readMoney(env: EnvReader, name: string): number | undefined {
  const raw = env.text(name);
  if (raw === undefined) return undefined;
  if (!/^\d{1,10}(\.\d{1,6})?$/.test(raw) || Number(raw) > MAX_MONEY) {
    throw new ConfigError(`${name} must be a decimal amount such as 0.12, from 0 to ${MAX_MONEY}, with at most 6 decimals (got "${raw}")`);
  }
  return Number(raw);
}

/**
 * The generic settings of one paid upstream `<PREFIX>`: `_PRICE`, `_OPERATIONS`, `_MONTHLY_BUDGET`,
 * `_CACHE_TTL_S` (through `settings`, read by readUpstreamSettings; 0 also stops keeping its
 * not-found answers, and refuses a record file) and `_RECORD_FILE`. Every paid adapter's reader calls it once with its own
 * prefix (REGCHECK here; UKVD, VINCARIO, CARSXE likewise), so the router sees every paid source
 * alike. `_OPERATIONS` names must be catalogue operations (case-sensitive); an empty list is an
 * error rather than a silent "off". `served`, when given, is what the adapter can answer at all:
 * the default, and the bound of a narrowing.
 */
export function readPaidUpstream(
  env: EnvReader,
  prefix: string,
  settings: UpstreamSettings,
  served?: readonly string[],
): PaidUpstreamSettings {
  const known = served ?? OPERATIONS.map((op) => op.name);
  const raw = env.text(`${prefix}_OPERATIONS`);
  const operations = raw === undefined ? [...known] : [...new Set(raw.split(',').map((n) => n.trim()).filter((n) => n !== ''))];
  for (const name of operations) {
    if (!known.includes(name)) {
      const what = served ? `an operation this provider answers (${served.join(', ')})` : 'an operation (see docs/operations.md; names are case-sensitive)';
      throw new ConfigError(`${prefix}_OPERATIONS: "${name}" is not ${what}`);
    }
  }
  if (operations.length === 0) throw new ConfigError(`${prefix}_OPERATIONS names no operation: leave it unset for all of them, or turn the provider off`);
  const price = readMoney(env, `${prefix}_PRICE`);
  const monthlyBudget = readMoney(env, `${prefix}_MONTHLY_BUDGET`);
  if (monthlyBudget !== undefined && price === undefined) {
    throw new ConfigError(`${prefix}_MONTHLY_BUDGET needs ${prefix}_PRICE: a budget is counted in the price of each call`);
  }
  const recordFile = env.text(`${prefix}_RECORD_FILE`);
  // `_CACHE_TTL_S=0` says the provider's terms forbid keeping its answers; a record file keeps
  // every one of them for good (docs/providers.md "Record and replay"). The two contradict each
  // other, so the configuration is refused rather than one of them silently winning.
  if (recordFile !== undefined && settings.cacheTtlS === 0) {
    throw new ConfigError(`${prefix}_RECORD_FILE cannot be used with ${prefix}_CACHE_TTL_S=0: a zero TTL says this provider's answers must not be kept, and a record file keeps every one`);
  }
  return {
    name: settings.name,
    price,
    operations: Object.freeze(operations),
    monthlyBudget,
    ...(recordFile !== undefined ? { recordFile } : {}),
    settings: settings.cacheTtlS === 0 ? { ...settings, notFoundTtlS: 0 } : settings,
  };
}

/** How the router chooses between paid upstreams (docs/providers.md "Routing"). */
export interface RoutingConfig {
  /** UPSTREAM_CURRENCY: the currency prices, budgets and spend are in (shown, never converted); default GBP. */
  readonly currency: string;
  /** UPSTREAM_ORDER: provider names in order of preference; it breaks ties of price and, where it names two sources, overrides price. */
  readonly order: readonly string[];
  /** UPSTREAM_FALLBACK_ON_NOT_FOUND: ask the next paid source when one says "not found" (each call costs); default false. */
  readonly fallbackOnNotFound: boolean;
}

/** The routing of a configuration that names none (tests that build a ProviderConfig by hand). */
export const DEFAULT_ROUTING: RoutingConfig = Object.freeze({ currency: 'GBP', order: Object.freeze([]), fallbackOnNotFound: false });

export function readRoutingConfig(env: EnvReader): RoutingConfig {
  const currency = env.matching('UPSTREAM_CURRENCY', 'GBP', /^[A-Z]{3}$/, 'a three-letter currency code such as GBP, EUR or USD');
  const raw = env.text('UPSTREAM_ORDER');
  const order = raw === undefined ? [] : [...new Set(raw.split(',').map((n) => n.trim().toLowerCase()).filter((n) => n !== ''))];
  for (const name of order) {
    // A provider's name, not checked against this build's paid upstreams: a name no source has ranks nothing.
    if (!/^[a-z][a-z0-9-]{0,31}$/.test(name)) throw new ConfigError(`UPSTREAM_ORDER: "${name}" is not a provider name such as ${PAID_UPSTREAM_NAMES.join(', ')}`);
  }
  return { currency, order: Object.freeze(order), fallbackOnNotFound: env.bool('UPSTREAM_FALLBACK_ON_NOT_FOUND', false) };
}

/**
 * The paid sources are asked once per lookup (the router is their only retry loop: each call may
 * be billed), so the per-attempt timeout is the whole budget by default, as for the original.
 */
const PAID_DEFAULTS = { timeoutMs: 10_000, budgetMs: 10_000 } as const;

/** A paid upstream's generic settings (readPaidUpstream) and its common ones with them. */
function paidOf(env: EnvReader, prefix: string, settings: UpstreamSettings, served?: readonly string[]): { paid: PaidUpstreamSettings; settings: UpstreamSettings } {
  const paid = readPaidUpstream(env, prefix, settings, served);
  return { paid, settings: paid.settings };
}

/** UK Vehicle Data r2: UKVD_API_KEY turns it on; UKVD_PACKAGE names the vehicle package (letters and digits, as r2's PackageName). */
export function readUkvd(env: EnvReader, disabled: Array<{ provider: string; reason: string }>): UkvdConfig | undefined {
  const apiKey = env.headerSecret('UKVD_API_KEY');
  if (apiKey === undefined) {
    disabled.push({ provider: 'ukvd', reason: 'UKVD_API_KEY is not set' });
    return undefined;
  }
  return {
    apiKey,
    packageName: env.matching('UKVD_PACKAGE', UKVD_DEFAULT_PACKAGE, /^[A-Za-z0-9]{1,80}$/, 'letters and digits only (an r2 package name, e.g. VehicleDetails)'),
    ...paidOf(env, 'UKVD', readUpstreamSettings(env, 'UKVD', 'ukvd', { baseUrl: UKVD_DEFAULT_BASE_URL, ...PAID_DEFAULTS }), ['Check', 'CheckMotorBikeUK', 'CheckUKMinimal', 'UKMOT']),
  };
}

/** Vincario: both VINCARIO_API_KEY and VINCARIO_SECRET, or neither (one alone is a mistake, not "off"). */
export function readVincario(env: EnvReader, disabled: Array<{ provider: string; reason: string }>): VincarioConfig | undefined {
  const apiKey = env.headerSecret('VINCARIO_API_KEY');
  const secret = env.headerSecret('VINCARIO_SECRET');
  if (apiKey === undefined && secret === undefined) {
    disabled.push({ provider: 'vincario', reason: 'VINCARIO_API_KEY and VINCARIO_SECRET are not set' });
    return undefined;
  }
  if (apiKey === undefined || secret === undefined) {
    throw new ConfigError(`Vincario needs both VINCARIO_API_KEY and VINCARIO_SECRET; missing: ${apiKey === undefined ? 'VINCARIO_API_KEY' : 'VINCARIO_SECRET'}`);
  }
  return { apiKey, secret, ...paidOf(env, 'VINCARIO', readUpstreamSettings(env, 'VINCARIO', 'vincario', { baseUrl: VINCARIO_DEFAULT_BASE_URL, ...PAID_DEFAULTS }), ['VinCheck', 'CheckStolen']) };
}

export function readCarsxe(env: EnvReader, disabled: Array<{ provider: string; reason: string }>): CarsxeConfig | undefined {
  const apiKey = env.headerSecret('CARSXE_API_KEY');
  if (apiKey === undefined) {
    disabled.push({ provider: 'carsxe', reason: 'CARSXE_API_KEY is not set' });
    return undefined;
  }
  // Its plate countries live with the adapter (src/providers/carsxe/carsxe-countries.ts), which the
  // configuration cannot import: CARSXE_OPERATIONS is checked against the catalogue here, and the
  // registration keeps only what the adapter answers.
  return { apiKey, ...paidOf(env, 'CARSXE', readUpstreamSettings(env, 'CARSXE', 'carsxe', { baseUrl: CARSXE_DEFAULT_BASE_URL, ...PAID_DEFAULTS })) };
}
