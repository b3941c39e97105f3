import { describe, expect, it } from 'vitest';
import { ConfigError, EnvReader, loadConfig, loadCoreConfig, readConfig, readCoreConfig, type Config } from '../../src/config/config.js';

/** Every boolean of every part, with how to see it in the parsed configuration. */
const BOOLEANS: ReadonlyArray<readonly [string, (config: Config) => boolean]> = [
  ['TRUST_PROXY', (c) => c.trustProxy],
  ['GETCREDITS_ENABLED', (c) => c.getCreditsEnabled],
  ['REQUIRE_API_KEY', (c) => c.requireApiKey],
  ['SEED_DEMO', (c) => c.seedOnEmptyStore],
  ['RDW_ENABLED', (c) => c.providers.rdw !== undefined],
  ['NHTSA_ONLINE', (c) => c.providers.nhtsa !== undefined],
  ['VIN_DECODER', (c) => c.vin.enabled],
  ['WEBHOOK_ALLOW_PRIVATE_URLS', (c) => c.alerts.allowPrivateUrls],
  ['SIGNUP_ENABLED', (c) => c.signup.enabled],
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
      [{ CREDIT_ALERT_THRESHOLDS: '10,-1' }, 'CREDIT_ALERT_THRESHOLDS must be up to 10 whole numbers from 0 to 1000000000 separated by commas, or none (got "10,-1")'],
      [{ WEBHOOK_RETRY_SCHEDULE: '5 minutes' }, 'WEBHOOK_RETRY_SCHEDULE must be 1 to 20 durations of at most 7d separated by commas, each a whole number with a unit ms, s, m, h or d, such as 5s,5m,2h (got "5 minutes")'],
      [{ WEBHOOK_TIMEOUT_MS: '50' }, 'WEBHOOK_TIMEOUT_MS must be a whole number from 100 to 120000 (got "50")'],
      [{ CREDIT_ALERT_SWEEP_MS: '5' }, 'CREDIT_ALERT_SWEEP_MS must be a whole number from 10 to 3600000 (got "5")'],
      [{ SIGNUP_TRIAL_CREDITS: '-1' }, 'SIGNUP_TRIAL_CREDITS must be a whole number from 0 to 1000000000 (got "-1")'],
      [{ SIGNUP_PER_ADDRESS_PER_DAY: '0' }, 'SIGNUP_PER_ADDRESS_PER_DAY must be a whole number from 1 to 10000 (got "0")'],
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
    expect([...env.names].sort()).toEqual(['DATABASE_URL', 'DATA_DIR', 'DB_COMMIT_SETTLE_SECONDS', 'DB_CONNECT_TIMEOUT_MS', 'DB_POOL_SIZE', 'DB_START_WAIT_SECONDS', 'RATE_LIMIT_PER_DAY', 'RATE_LIMIT_PER_SECOND', 'REDIS_KEY_PREFIX', 'REDIS_URL', 'SQLITE_SYNCHRONOUS']);
    expect(loadCoreConfig({ DVSA_CLIENT_ID: 'x', PORT: 'http', VIN_DECODER: 'maybe' }).dbPoolSize).toBe(10);
    const all = new EnvReader({});
    readConfig(all);
    expect(all.names.size).toBeGreaterThan(env.names.size);
  });

  it('reads a list of whole numbers: in the order written, spaces allowed, none for an empty list, each in range', () => {
    const list = (value: string | undefined): readonly number[] =>
      new EnvReader(value === undefined ? {} : { LIST: value }).intList('LIST', [7], { min: 1, max: 100, maxItems: 3 });
    expect(list(undefined)).toEqual([7]);
    expect(list(' ')).toEqual([7]);
    expect(list('5, 50 ,1')).toEqual([5, 50, 1]);
    expect(list('None')).toEqual([]);
    for (const bad of ['1,2,3,4', '0', '101', '1,,2', '1,', '1.5', '+1', '1e2', 'a']) {
      expect(() => list(bad), bad).toThrow(`LIST must be up to 3 whole numbers from 1 to 100 separated by commas, or none (got "${bad}")`);
    }
  });

  it('reads a list of durations with units as milliseconds, each no longer than the maximum', () => {
    const list = (value: string | undefined): readonly number[] =>
      new EnvReader(value === undefined ? {} : { WAITS: value }).durationList('WAITS', [1000], { maxItems: 3, maxMs: 2 * 86_400_000 });
    expect(list(undefined)).toEqual([1000]);
    expect(list('250ms, 2s,3m')).toEqual([250, 2000, 180_000]);
    expect(list('1h,2d')).toEqual([3_600_000, 172_800_000]);
    for (const bad of ['3d', '49h', '1s,1s,1s,1s', '5', '5 s', '1.5s', '-1s', '1s,', 'none', '1w']) {
      expect(() => list(bad), bad).toThrow(`WAITS must be 1 to 3 durations of at most 2d separated by commas, each a whole number with a unit ms, s, m, h or d, such as 5s,5m,2h (got "${bad}")`);
    }
  });

  it('hands the server the alert and webhook settings, which the CLI does not read', () => {
    const config = loadConfig({ CREDIT_ALERT_THRESHOLDS: '20,100', WEBHOOK_RETRY_SCHEDULE: '1s,1m', WEBHOOK_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' });
    expect(config.alerts).toEqual({ alertThresholds: [100, 20], sweepMs: 10_000, retryScheduleMs: [1000, 60_000], timeoutMs: 10_000, pollMs: 50, allowPrivateUrls: true });
    expect(Object.isFrozen(config.alerts)).toBe(true);
    expect(() => loadCoreConfig({ CREDIT_ALERT_THRESHOLDS: 'x', WEBHOOK_RETRY_SCHEDULE: 'y' })).not.toThrow();
  });

  it('keeps self-service sign-up off unless turned on, with 10 trial credits and 3 sign-ups per address a day by default', () => {
    expect(loadConfig({}).signup).toEqual({ enabled: false, trialCredits: 10, perAddressPerDay: 3 });
    expect(loadConfig({ SIGNUP_ENABLED: 'on', SIGNUP_TRIAL_CREDITS: '0', SIGNUP_PER_ADDRESS_PER_DAY: '50' }).signup).toEqual({ enabled: true, trialCredits: 0, perAddressPerDay: 50 });
    expect(() => loadCoreConfig({ SIGNUP_ENABLED: 'maybe' })).not.toThrow();
  });

  it('prices operations from OPERATION_COSTS and keeps the catalogue cost of the others', () => {
    expect(loadConfig({}).operationCosts).toEqual({});
    expect(loadConfig({ OPERATION_COSTS: 'Check:2, CheckUKMinimal : 1,CheckUSA:3' }).operationCosts).toEqual({ Check: 2, CheckUKMinimal: 1, CheckUSA: 3 });
  });

  it('refuses an OPERATION_COSTS entry that is malformed, unknown, free, too dear or repeated, naming the variable', () => {
    const cases: Array<[string, RegExp]> = [
      ['CheckUKMinimal', /Operation:credits/],
      ['CheckUKMinimal:1.5', /Operation:credits/],
      ['CheckUKMinimal:-1', /Operation:credits/],
      ['Check:2,', /Operation:credits/],
      ['checkukminimal:1', /unknown operation "checkukminimal"/],
      ['CheckUKMinimal:0', /CheckUKMinimal must be a whole number from 1 to 1000000/],
      ['Check:1000001', /Check must be a whole number from 1 to 1000000/],
      ['Check:1,Check:2', /lists Check twice/],
    ];
    for (const [value, message] of cases) {
      expect(() => loadConfig({ OPERATION_COSTS: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ OPERATION_COSTS: value }), value).toThrow(/^OPERATION_COSTS/);
      expect(() => loadConfig({ OPERATION_COSTS: value }), value).toThrow(message);
    }
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
