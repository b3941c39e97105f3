import { ConfigError, type EnvReader } from './env-reader.js';

/** The operator's settings for one upstream (read below from `<PREFIX>_*`; UpstreamSource takes it). */
export interface UpstreamSettings {
  /** Provider name: metrics label, /readyz key and cache partition (`dvla`, `dvsa-mot`). */
  readonly name: string;
  /** Base URL without a trailing slash. */
  readonly baseUrl: string;
  /** Per-attempt timeout (ms). */
  readonly timeoutMs: number;
  /** Whole-request budget including the retry and any Retry-After wait (ms). */
  readonly budgetMs: number;
  /** How long a found answer is reused (s); 0 turns caching off. */
  readonly cacheTtlS: number;
  /** How long a not-found answer is reused (s); shorter, so a new registration shows soon. */
  readonly notFoundTtlS: number;
  /** Consecutive failed lookups that open the circuit. */
  readonly breakerFailures: number;
  /** How long the circuit stays open before a trial call (ms). */
  readonly breakerOpenMs: number;
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

export const HTTP_URL = { protocols: ['http', 'https'], description: 'an absolute http(s) URL', noQuery: true, trimSlash: true } as const;

/**
 * The common settings of one upstream from `<PREFIX>_BASE_URL`, `_TIMEOUT_MS`, `_BUDGET_MS`,
 * `_CACHE_TTL_S`, `_NOT_FOUND_TTL_S`, `_BREAKER_FAILURES` and `_BREAKER_OPEN_S`.
 */
export function readUpstreamSettings(env: EnvReader, prefix: string, name: string, defaults: UpstreamDefaults): UpstreamSettings {
  const timeoutMs = env.int(`${prefix}_TIMEOUT_MS`, defaults.timeoutMs ?? 5000, { min: 50, max: 120_000 });
  const budgetMs = env.int(`${prefix}_BUDGET_MS`, defaults.budgetMs ?? Math.max(12_000, timeoutMs), { min: 50, max: 300_000 });
  if (budgetMs < timeoutMs) throw new ConfigError(`${prefix}_BUDGET_MS must be at least ${prefix}_TIMEOUT_MS`);
  return {
    name,
    baseUrl: env.urlOr(`${prefix}_BASE_URL`, defaults.baseUrl, HTTP_URL),
    timeoutMs,
    budgetMs,
    cacheTtlS: env.int(`${prefix}_CACHE_TTL_S`, defaults.cacheTtlS ?? 86_400, { min: 0, max: 31_536_000 }),
    notFoundTtlS: env.int(`${prefix}_NOT_FOUND_TTL_S`, defaults.notFoundTtlS ?? 3600, { min: 0, max: 31_536_000 }),
    breakerFailures: env.int(`${prefix}_BREAKER_FAILURES`, defaults.breakerFailures ?? 5, { min: 1, max: 1000 }),
    breakerOpenMs: env.int(`${prefix}_BREAKER_OPEN_S`, defaults.breakerOpenS ?? 30, { min: 0, max: 86_400 }) * 1000,
  };
}
