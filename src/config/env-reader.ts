/**
 * The one set of environment parsers every part of the configuration uses (docs/configuration.md):
 * config.ts for the server, store, Redis and rate limits, provider-config.ts and vin-config.ts for
 * the data sources, alert-config.ts for low-credit alerts and webhooks (all in src/config/). Each parser names the
 * variable in its error, so an invalid value stops the service or the CLI with a message an
 * operator can act on; values that may be secrets are never echoed.
 */

/** An invalid configuration value; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

export interface IntOptions {
  readonly min: number;
  readonly max: number;
}

export interface IntListOptions extends IntOptions {
  /** Most numbers in the list. */
  readonly maxItems: number;
}

export interface DurationListOptions {
  /** Most durations in the list (at least one is required). */
  readonly maxItems: number;
  /** Longest single duration, in milliseconds. */
  readonly maxMs: number;
}

export interface UrlOptions {
  /** Accepted schemes without the colon, e.g. `['http', 'https']`. */
  readonly protocols: readonly string[];
  /** Says what the message demands ("an absolute http(s) URL"). */
  readonly description: string;
  /** Refuse a query string or fragment (base URLs that paths are appended to). */
  readonly noQuery?: boolean;
  /** Drop trailing slashes, so paths can be appended with their own. */
  readonly trimSlash?: boolean;
}

/**
 * Reads one environment, once. Empty and blank values count as unset. Every name asked for is
 * recorded (`names`), which lets test/docs/readme.test.ts hold docs/configuration.md to the code.
 */
export class EnvReader {
  readonly #env: Readonly<NodeJS.ProcessEnv>;
  readonly #names = new Set<string>();

  constructor(env: Readonly<NodeJS.ProcessEnv>) {
    this.#env = env;
  }

  /** Every variable read so far, in the order first read. */
  get names(): ReadonlySet<string> {
    return this.#names;
  }

  /** The trimmed value, or undefined when unset or blank. */
  text(name: string): string | undefined {
    this.#names.add(name);
    const value = this.#env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  /**
   * `true`/`false`, `1`/`0`, `yes`/`no` or `on`/`off`, in any letter case. `spelled` is how the
   * message names the two values (the VIN decoder is documented as on/off).
   */
  bool(name: string, fallback: boolean, spelled: readonly [string, string] = ['true', 'false']): boolean {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    const value = raw.toLowerCase();
    if (TRUE.has(value)) return true;
    if (FALSE.has(value)) return false;
    throw new ConfigError(`${name} must be ${spelled[0]} or ${spelled[1]} (got "${raw}")`);
  }

  /** A whole number from `min` to `max` (digits only: no sign, exponent or fraction). */
  int(name: string, fallback: number, range: IntOptions): number {
    return this.optionalInt(name, range) ?? fallback;
  }

  /** As `int`, but unset is undefined; `unsetMeans` completes the message ("no limit"). */
  optionalInt(name: string, range: IntOptions, unsetMeans?: string): number | undefined {
    const raw = this.text(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < range.min || value > range.max) {
      const unset = unsetMeans === undefined ? '' : `, or unset for ${unsetMeans}`;
      throw new ConfigError(`${name} must be a whole number from ${range.min} to ${range.max}${unset} (got "${raw}")`);
    }
    return value;
  }

  /**
   * Whole numbers from `min` to `max` separated by commas (`100,20,0`), in the order written, or
   * the word `none` for an empty list (an empty value counts as unset, as for every variable).
   */
  intList(name: string, fallback: readonly number[], options: IntListOptions): readonly number[] {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    if (raw.toLowerCase() === 'none') return [];
    const parts = raw.split(',').map((part) => part.trim());
    if (parts.length > options.maxItems || parts.some((part) => !/^\d+$/.test(part) || Number(part) < options.min || Number(part) > options.max)) {
      throw new ConfigError(`${name} must be up to ${options.maxItems} whole numbers from ${options.min} to ${options.max} separated by commas, or none (got "${raw}")`);
    }
    return parts.map(Number);
  }

  /**
   * Durations with a unit (`ms`, `s`, `m`, `h` or `d`) separated by commas, e.g. `5s,5m,30m,2h`,
   * as milliseconds in the order written; at least one.
   */
  durationList(name: string, fallback: readonly number[], options: DurationListOptions): readonly number[] {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    const values = raw.split(',').map((part) => {
      const match = /^\s*(\d+)(ms|s|m|h|d)\s*$/.exec(part);
      return match ? Number(match[1]) * DURATION_UNITS_MS[match[2] as DurationUnit] : Number.NaN;
    });
    if (values.length > options.maxItems || values.some((v) => !Number.isSafeInteger(v) || v > options.maxMs)) {
      throw new ConfigError(
        `${name} must be 1 to ${options.maxItems} durations of at most ${formatDuration(options.maxMs)} separated by commas, each a whole number with a unit ms, s, m, h or d, such as 5s,5m,2h (got "${raw}")`,
      );
    }
    return values;
  }

  /** One of a fixed set of words, exactly as written. */
  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    if (!(values as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(', ')}`);
    return raw as T;
  }

  /** A string that must match `pattern`; `rule` completes "NAME must be ...". */
  matching(name: string, fallback: string, pattern: RegExp, rule: string): string {
    const value = this.text(name) ?? fallback;
    if (!pattern.test(value)) throw new ConfigError(`${name} must be ${rule} (got "${value}")`);
    return value;
  }

  /**
   * A URL with one of the given schemes. The value is not repeated in the message: URLs may
   * carry a password (redis://:secret@host, postgres://...).
   */
  url(name: string, options: UrlOptions): string | undefined {
    const raw = this.text(name);
    return raw === undefined ? undefined : checkUrl(name, raw, options);
  }

  /** As `url`, with a default used when the variable is unset. */
  urlOr(name: string, fallback: string, options: UrlOptions): string {
    return checkUrl(name, this.text(name) ?? fallback, options);
  }

  /**
   * A credential sent in an HTTP header: visible ASCII only. Checked at start-up because fetch
   * would otherwise refuse every request, with the value in its error message.
   */
  headerSecret(name: string): string | undefined {
    const value = this.text(name);
    if (value !== undefined && !/^[\x21-\x7e]+$/.test(value)) throw new ConfigError(`${name} may hold only visible ASCII characters (no spaces or line breaks)`);
    return value;
  }
}

type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';
const DURATION_UNITS_MS: Record<DurationUnit, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `maxMs` in the largest unit that divides it (604800000 -> "7d"), for messages. */
function formatDuration(ms: number): string {
  const units = Object.entries(DURATION_UNITS_MS).reverse();
  const [unit, size] = units.find(([, size]) => ms % size === 0) ?? ['ms', 1];
  return `${ms / size}${unit}`;
}

function checkUrl(name: string, raw: string, options: UrlOptions): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be ${options.description}`);
  }
  if (!options.protocols.includes(parsed.protocol.slice(0, -1))) {
    throw new ConfigError(`${name} must use ${options.protocols.join(' or ')}`);
  }
  if (options.noQuery === true && (parsed.search !== '' || parsed.hash !== '')) throw new ConfigError(`${name} must not have a query or fragment`);
  return options.trimSlash === true ? raw.replace(/\/+$/, '') : raw;
}
