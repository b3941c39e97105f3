import { describe, expect, it } from 'vitest';
import { ConfigError, EnvReader, loadConfig, loadCoreConfig, readConfig, readCoreConfig, type Config } from '../../src/config.js';

/** Every boolean of every part, with how to see it in the parsed configuration. */
const BOOLEANS: ReadonlyArray<readonly [string, (config: Config) => boolean]> = [
  ['TRUST_PROXY', (c) => c.trustProxy],
  ['GETCREDITS_ENABLED', (c) => c.getCreditsEnabled],
  ['REQUIRE_API_KEY', (c) => c.requireApiKey],
  ['SEED_DEMO', (c) => c.seedOnEmptyStore],
  ['RDW_ENABLED', (c) => c.providers.rdw !== undefined],
  ['NHTSA_ONLINE', (c) => c.providers.nhtsa !== undefined],
  ['VIN_DECODER', (c) => c.vin.enabled],
];

describe('configuration', () => {
  it('reads a boolean the same way in every part: true/false, 1/0, yes/no, on/off, any letter case', () => {
    for (const [name, seen] of BOOLEANS) {
      for (const on of ['true', '1', 'yes', 'ON', ' Yes ']) expect(seen(loadConfig({ [name]: on })), `${name}=${on}`).toBe(true);
      for (const off of ['false', '0', 'no', 'Off']) expect(seen(loadConfig({ [name]: off })), `${name}=${off}`).toBe(false);
      expect(() => loadConfig({ [name]: 'maybe' }), name).toThrow(new RegExp(`^${name} must be (true or false|on or off) \\(got "maybe"\\)$`));
    }
  });

  it('stops on an invalid value with a message naming the variable, whatever the part', () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
      [{ PORT: '80a' }, 'PORT must be a port number (got "80a")'],
      [{ PORT: '65536' }, 'PORT must be a port number (got "65536")'],
      [{ WORKERS: '65' }, 'WORKERS must be a whole number from 1 to 64 (got "65")'],
      [{ DB_POOL_SIZE: '-1' }, 'DB_POOL_SIZE must be a whole number from 1 to 1000 (got "-1")'],
      [{ XML_BODY_LIMIT: '1e6' }, 'XML_BODY_LIMIT must be a whole number from 1024 to 67108864 (got "1e6")'],
      [{ RATE_LIMIT_PER_SECOND: '0' }, 'RATE_LIMIT_PER_SECOND must be a whole number from 1 to 1000000, or unset for no limit (got "0")'],
      [{ LOG_LEVEL: 'chatty' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
      [{ BASE_URL: 'ftp://example.com' }, 'BASE_URL must use http or https'],
      [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL must use redis or rediss'],
      [{ REDIS_KEY_PREFIX: 'a b' }, 'REDIS_KEY_PREFIX must be 1 to 64 characters of letters, digits and . _ : - (got "a b")'],
      [{ REG_NAMESPACE: 'regcheck' }, 'REG_NAMESPACE must be an absolute URI (got "regcheck")'],
      [{ AUTH_REALM: 'a"b' }, 'AUTH_REALM must not contain quotes, backslashes or line breaks'],
      [{ DVLA_API_KEY: 'k', DVLA_TIMEOUT_MS: '10' }, 'DVLA_TIMEOUT_MS must be a whole number from 50 to 120000 (got "10")'],
      [{ VIN_DECODER: 'sometimes' }, 'VIN_DECODER must be on or off (got "sometimes")'],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
    }
  });

  it('never repeats a URL that may hold a password', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://:s3cret@redis:6379' })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_URL: 'http://:s3cret@redis:6379' })).not.toThrow(/s3cret/);
    expect(() => loadConfig({ REDIS_URL: ':s3cret@redis' })).not.toThrow(/s3cret/);
  });

  it('hands the providers and the VIN decoder their parsed settings, under the same DATA_DIR', () => {
    const config = loadConfig({ DATA_DIR: '/srv/vl', DVLA_API_KEY: 'k3y', DVLA_TIMEOUT_MS: '2000', VIN_DECODER: 'off' });
    expect(config.dataDir).toBe('/srv/vl');
    expect(config.imagesDir).toBe('/srv/vl/images');
    expect(config.providers.dvla).toMatchObject({ apiKey: 'k3y', settings: { timeoutMs: 2000 } });
    expect(config.vin).toMatchObject({ enabled: false, explicitPath: false });
    expect(config.vin.databasePath.startsWith('/srv/vl/vin/')).toBe(true);
    expect(Object.isFrozen(config)).toBe(true);
    expect('env' in config).toBe(false);
  });

  it('the core configuration (what the CLI reads) reads no server, provider or VIN variable', () => {
    const env = new EnvReader({});
    readCoreConfig(env);
    expect([...env.names].sort()).toEqual(['DATABASE_URL', 'DATA_DIR', 'DB_POOL_SIZE', 'RATE_LIMIT_PER_DAY', 'RATE_LIMIT_PER_SECOND', 'REDIS_KEY_PREFIX', 'REDIS_URL']);
    expect(loadCoreConfig({ DVSA_CLIENT_ID: 'x', PORT: 'http', VIN_DECODER: 'maybe' }).dbPoolSize).toBe(10);
    const all = new EnvReader({});
    readConfig(all);
    expect(all.names.size).toBeGreaterThan(env.names.size);
  });

  it('opens only operations without a username to anonymous callers, none by default', () => {
    expect(loadConfig({}).anonymous).toEqual({ operations: [], perSecond: 1, perDay: 100 });
    expect(loadConfig({ ANONYMOUS_OPERATIONS: ' CheckStolen , CheckIrishTaxi,CheckStolen', ANONYMOUS_RATE_PER_SECOND: '5' }).anonymous).toEqual({
      operations: ['CheckStolen', 'CheckIrishTaxi'],
      perSecond: 5,
      perDay: 100,
    });
    // An operation that takes a username would let a stranger name the payer: refused at start.
    expect(() => loadConfig({ ANONYMOUS_OPERATIONS: 'CheckPrice' })).toThrow(/^ANONYMOUS_OPERATIONS: "CheckPrice" is not an operation without a username/);
    expect(() => loadConfig({ ANONYMOUS_OPERATIONS: 'checkstolen' })).toThrow(ConfigError);
    expect(() => loadConfig({ ANONYMOUS_RATE_PER_DAY: '0' })).toThrow(ConfigError);
  });

  it('counts blank values as unset', () => {
    const config = loadConfig({ PORT: ' ', WORKERS: '', BASE_URL: '  ', RDW_ENABLED: '' });
    expect(config.port).toBe(8080);
    expect(config.workers).toBe(1);
    expect(config.baseUrl).toBeUndefined();
    expect(config.providers.rdw).toBeUndefined();
  });
});
