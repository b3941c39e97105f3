/**
 * The one set of environment parsers every part of the configuration uses (README
 * "Configuration"): src/config.ts for the server, store, Redis and rate limits,
 * providers/upstream/provider-config.ts and providers/vin-offline/vin-config.ts for the data
 * sources. Each parser names the variable in its error, so an invalid value stops the service or
 * the CLI with a message an operator can act on; values that may be secrets are never echoed.
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
 * recorded (`names`), which lets test/docs/readme.test.ts hold the README table to the code.
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
