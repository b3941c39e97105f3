import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.js';
import { keptPerOperation, PAID_UPSTREAM_NAMES } from '../../src/datasets/kept-per-operation.js';
import { DVLA_DEFAULT_BASE_URL, DVSA_DEFAULT_BASE_URL, DVSA_DEFAULT_SCOPE, loadProviderConfig, NHTSA_DEFAULT_BASE_URL, RDW_DEFAULT_BASE_URL, VEGVESEN_DEFAULT_BASE_URL } from '../../src/config/provider-config.js';
import { CARSXE_DEFAULT_BASE_URL, UKVD_DEFAULT_BASE_URL, VINCARIO_DEFAULT_BASE_URL } from '../../src/config/paid-upstream-config.js';

const DVSA = { DVSA_CLIENT_ID: 'id', DVSA_CLIENT_SECRET: 'secret-value', DVSA_API_KEY: 'key-value', DVSA_TOKEN_URL: 'https://login.example/tenant/oauth2/v2.0/token' };

describe('upstream provider configuration', () => {
  it('leaves every provider off when no credentials are set, and says which variables enable them', () => {
    const config = loadProviderConfig({});
    expect(config.dvla).toBeUndefined();
    expect(config.dvsaMot).toBeUndefined();
    expect(config.disabled.map((d) => d.provider)).toEqual(['dvla', 'dvsa-mot', 'rdw', 'vegvesen', 'nhtsa', 'nhtsa-recalls', 'canada-specs', 'israel', 'nhtsa-ratings', 'regcheck', 'ukvd', 'vincario', 'carsxe']);
    expect(config.disabled[0]?.reason).toBe('DVLA_API_KEY is not set');
  });

  it('enables DVLA with its key, with documented defaults', () => {
    expect(loadProviderConfig({ DVLA_API_KEY: 'k3y-value' }).dvla).toEqual({
      apiKey: 'k3y-value',
      settings: { name: 'dvla', baseUrl: DVLA_DEFAULT_BASE_URL, timeoutMs: 5000, budgetMs: 12_000, cacheTtlS: 86_400, notFoundTtlS: 3600, breakerFailures: 5, breakerOpenMs: 30_000 },
    });
  });

  it('reads every DVLA setting and drops a trailing slash from the base URL', () => {
    const config = loadProviderConfig({
      DVLA_API_KEY: 'k3y-value', DVLA_BASE_URL: 'https://uat.example/vehicle-enquiry/', DVLA_TIMEOUT_MS: '2000', DVLA_BUDGET_MS: '5000',
      DVLA_CACHE_TTL_S: '600', DVLA_NOT_FOUND_TTL_S: '60', DVLA_BREAKER_FAILURES: '3', DVLA_BREAKER_OPEN_S: '10',
    });
    expect(config.dvla?.settings).toEqual({ name: 'dvla', baseUrl: 'https://uat.example/vehicle-enquiry', timeoutMs: 2000, budgetMs: 5000, cacheTtlS: 600, notFoundTtlS: 60, breakerFailures: 3, breakerOpenMs: 10_000 });
  });

  it('enables the DVSA MOT API only with all four credentials, and names the missing ones without values', () => {
    const config = loadProviderConfig(DVSA);
    expect(config.dvsaMot).toMatchObject({ clientId: 'id', scope: DVSA_DEFAULT_SCOPE, settings: { name: 'dvsa-mot', baseUrl: DVSA_DEFAULT_BASE_URL } });
    const { DVSA_CLIENT_SECRET: _s, DVSA_TOKEN_URL: _t, ...partial } = DVSA;
    expect(() => loadProviderConfig(partial)).toThrow(ConfigError);
    expect(() => loadProviderConfig(partial)).toThrow(/missing: DVSA_CLIENT_SECRET, DVSA_TOKEN_URL$/);
  });

  it('refuses invalid numbers, URLs and header values, never echoing a secret', () => {
    expect(() => loadProviderConfig({ DVLA_API_KEY: 'k3y-value', DVLA_TIMEOUT_MS: 'soon' })).toThrow(/DVLA_TIMEOUT_MS must be a whole number/);
    expect(() => loadProviderConfig({ DVLA_API_KEY: 'k3y-value', DVLA_TIMEOUT_MS: '9000', DVLA_BUDGET_MS: '1000' })).toThrow(/DVLA_BUDGET_MS must be at least DVLA_TIMEOUT_MS/);
    expect(() => loadProviderConfig({ DVLA_API_KEY: 'k3y-value', DVLA_BREAKER_FAILURES: '0' })).toThrow(ConfigError);
    expect(() => loadProviderConfig({ DVLA_API_KEY: 'k3y-value', DVLA_BASE_URL: 'ftp://x' })).toThrow(/DVLA_BASE_URL must use http or https/);
    expect(() => loadProviderConfig({ ...DVSA, DVSA_TOKEN_URL: 'not a url' })).toThrow(/DVSA_TOKEN_URL must be an absolute http\(s\) URL$/);
    const withBreak = () => loadProviderConfig({ DVLA_API_KEY: 'part-one\npart-two' });
    expect(withBreak).toThrow(/DVLA_API_KEY may hold only visible ASCII/);
    expect(withBreak).not.toThrow(/part-one/);
  });

  it('turns RDW and NHTSA on only with an explicit true (they need no key), and Statens vegvesen with its key', () => {
    const config = loadProviderConfig({
      RDW_ENABLED: 'TRUE', RDW_APP_TOKEN: 'app-token-1', NHTSA_ONLINE: 'true', VEGVESEN_API_KEY: 'svv-key-1', NHTSA_RECALLS_ENABLED: 'true', CANADA_SPECS_ENABLED: 'true',
      ISRAEL_ENABLED: 'on', NHTSA_RATINGS_ENABLED: 'true',
    });
    expect(config.israel).toMatchObject({ settings: { name: 'israel', baseUrl: 'https://data.gov.il' } });
    expect(config.nhtsaRatings).toMatchObject({ settings: { name: 'nhtsa-ratings', baseUrl: 'https://api.nhtsa.gov' } });
    expect(config.rdw).toMatchObject({ appToken: 'app-token-1', settings: { name: 'rdw', baseUrl: RDW_DEFAULT_BASE_URL, cacheTtlS: 86_400 } });
    expect(config.nhtsa).toMatchObject({ settings: { name: 'nhtsa', baseUrl: NHTSA_DEFAULT_BASE_URL } });
    expect(config.vegvesen).toMatchObject({ apiKey: 'svv-key-1', settings: { name: 'vegvesen', baseUrl: VEGVESEN_DEFAULT_BASE_URL } });
    expect(config.disabled.map((d) => d.provider)).toEqual(['dvla', 'dvsa-mot', 'regcheck', 'ukvd', 'vincario', 'carsxe']);
    const off = loadProviderConfig({ RDW_ENABLED: 'false', RDW_BASE_URL: 'https://rdw.example', NHTSA_BASE_URL: 'https://vpic.example' });
    expect(off.rdw).toBeUndefined();
    expect(off.nhtsa).toBeUndefined();
    expect(() => loadProviderConfig({ RDW_ENABLED: 'maybe' })).toThrow(/RDW_ENABLED must be true or false \(got "maybe"\)/);
    expect(() => loadProviderConfig({ NHTSA_ONLINE: '2' })).toThrow(/NHTSA_ONLINE must be true or false/);
    expect(() => loadProviderConfig({ VEGVESEN_API_KEY: 'two words' })).toThrow(/VEGVESEN_API_KEY may hold only visible ASCII/);
  });

  it('reads RDW_ENABLED and NHTSA_ONLINE as every other boolean: yes/no, on/off and 1/0 too (issue 14)', () => {
    for (const on of ['yes', 'On', '1', 'TRUE']) {
      const config = loadProviderConfig({ RDW_ENABLED: on, NHTSA_ONLINE: on });
      expect(config.rdw, on).toBeDefined();
      expect(config.nhtsa, on).toBeDefined();
    }
    for (const off of ['no', 'off', '0', 'False', ' ']) {
      const config = loadProviderConfig({ RDW_ENABLED: off, NHTSA_ONLINE: off });
      expect(config.rdw, off).toBeUndefined();
      expect(config.nhtsa, off).toBeUndefined();
    }
  });
});

describe('the original service as a provider (REGCHECK_*)', () => {
  it('is on with REGCHECK_USERNAME, for every operation unless REGCHECK_OPERATIONS lists some, and refuses unknown names', () => {
    const all = loadProviderConfig({ REGCHECK_USERNAME: 'op' }).regcheck;
    expect(all?.settings).toMatchObject({ name: 'regcheck', baseUrl: 'https://www.regcheck.org.uk', timeoutMs: 10_000, budgetMs: 10_000 });
    expect(all?.operations).toContain('CheckStolen');
    expect(loadProviderConfig({ REGCHECK_USERNAME: 'op', REGCHECK_OPERATIONS: ' Check, CheckUSA ,Check' }).regcheck?.operations).toEqual(['Check', 'CheckUSA']);
    expect(() => loadProviderConfig({ REGCHECK_USERNAME: 'op', REGCHECK_OPERATIONS: 'check' })).toThrow(/REGCHECK_OPERATIONS: "check" is not an operation/);
    expect(loadProviderConfig({}).regcheck).toBeUndefined();
  });

  it('enables the paid providers with their credentials, asked once per lookup (timeout = budget = 10 s)', () => {
    const paid = { timeoutMs: 10_000, budgetMs: 10_000, cacheTtlS: 86_400, notFoundTtlS: 3600, breakerFailures: 5, breakerOpenMs: 30_000 };
    const config = loadProviderConfig({ UKVD_API_KEY: 'u-key', VINCARIO_API_KEY: 'v-key', VINCARIO_SECRET: 'v-secret', CARSXE_API_KEY: 'c-key' });
    expect(config.ukvd).toMatchObject({ apiKey: 'u-key', packageName: 'VehicleDetails', settings: { name: 'ukvd', baseUrl: UKVD_DEFAULT_BASE_URL, ...paid } });
    expect(config.vincario).toMatchObject({ apiKey: 'v-key', secret: 'v-secret', settings: { name: 'vincario', baseUrl: VINCARIO_DEFAULT_BASE_URL, ...paid } });
    expect(config.carsxe).toMatchObject({ apiKey: 'c-key', settings: { name: 'carsxe', baseUrl: CARSXE_DEFAULT_BASE_URL, ...paid } });
    // The router's view of each (readPaidUpstream): what it serves, no price or budget unless told.
    expect(config.ukvd?.paid).toMatchObject({ name: 'ukvd', price: undefined, monthlyBudget: undefined, operations: ['Check', 'CheckMotorBikeUK', 'CheckUKMinimal', 'UKMOT'] });
    expect(config.vincario?.paid.operations).toEqual(['VinCheck', 'CheckStolen']);
    expect(loadProviderConfig({ CARSXE_API_KEY: 'c-key', CARSXE_PRICE: '0.25', CARSXE_OPERATIONS: 'CheckUSA' }).carsxe?.paid).toMatchObject({ price: 0.25, operations: ['CheckUSA'] });
    expect(() => loadProviderConfig({ VINCARIO_API_KEY: 'v-key', VINCARIO_SECRET: 'v-secret', VINCARIO_OPERATIONS: 'CheckUSA' })).toThrow(/VINCARIO_OPERATIONS: "CheckUSA" is not an operation this provider answers/);
    expect(loadProviderConfig({ UKVD_API_KEY: 'u-key', UKVD_PACKAGE: 'VehicleDetailsWithImage' }).ukvd?.packageName).toBe('VehicleDetailsWithImage');
  });

  it('refuses half of Vincario’s credentials and a package name r2 cannot take, naming variables only', () => {
    expect(() => loadProviderConfig({ VINCARIO_API_KEY: 'v-key' })).toThrow(new ConfigError('Vincario needs both VINCARIO_API_KEY and VINCARIO_SECRET; missing: VINCARIO_SECRET'));
    expect(() => loadProviderConfig({ VINCARIO_SECRET: 'v-secret-value' })).toThrow(/missing: VINCARIO_API_KEY$/);
    expect(() => loadProviderConfig({ VINCARIO_SECRET: 'v-secret-value' })).not.toThrow(/v-secret-value/);
    expect(() => loadProviderConfig({ UKVD_API_KEY: 'u-key', UKVD_PACKAGE: 'Vehicle Details' })).toThrow(/UKVD_PACKAGE must be letters and digits only/);
    expect(() => loadProviderConfig({ CARSXE_API_KEY: 'key with space' })).toThrow(/CARSXE_API_KEY may hold only visible ASCII/);
  });
  it('reads <NAME>_RECORD_FILE for every paid upstream, none by default', () => {
    const all = { REGCHECK_USERNAME: 'op', UKVD_API_KEY: 'u-key', VINCARIO_API_KEY: 'v-key', VINCARIO_SECRET: 'v-secret', CARSXE_API_KEY: 'c-key' };
    const off = loadProviderConfig(all);
    for (const name of PAID_UPSTREAM_NAMES) expect(off[name]?.paid.recordFile, name).toBeUndefined();
    const on = loadProviderConfig({ ...all, ...Object.fromEntries(PAID_UPSTREAM_NAMES.map((name) => [`${name.toUpperCase()}_RECORD_FILE`, `/var/rec/${name}.jsonl`])) });
    for (const name of PAID_UPSTREAM_NAMES) expect(on[name]?.paid.recordFile, name).toBe(`/var/rec/${name}.jsonl`);
  });

  it('refuses a record file beside <NAME>_CACHE_TTL_S=0 (terms that forbid keeping answers), naming both variables', () => {
    expect(() => loadProviderConfig({ UKVD_API_KEY: 'u-key', UKVD_CACHE_TTL_S: '0', UKVD_RECORD_FILE: 'ukvd.jsonl' })).toThrow(
      new ConfigError('UKVD_RECORD_FILE cannot be used with UKVD_CACHE_TTL_S=0: a zero TTL says this provider\'s answers must not be kept, and a record file keeps every one'),
    );
    expect(() => loadProviderConfig({ REGCHECK_USERNAME: 'op', REGCHECK_CACHE_TTL_S: '0', REGCHECK_RECORD_FILE: 'r.jsonl' })).toThrow(/REGCHECK_RECORD_FILE cannot be used with REGCHECK_CACHE_TTL_S=0/);
    expect(loadProviderConfig({ CARSXE_API_KEY: 'c-key', CARSXE_CACHE_TTL_S: '0' }).carsxe?.paid.recordFile).toBeUndefined();
    expect(loadProviderConfig({ CARSXE_API_KEY: 'c-key', CARSXE_CACHE_TTL_S: '1', CARSXE_RECORD_FILE: 'c.jsonl' }).carsxe?.paid.recordFile).toBe('c.jsonl');
  });

  it('keeps the answers of every paid upstream per operation on import, and records of any other source per dataset', () => {
    for (const name of PAID_UPSTREAM_NAMES) expect(keptPerOperation(name), name).toBe(true);
    for (const other of ['sample', 'dvla', 'ours', 'UKVD', '']) expect(keptPerOperation(other), other).toBe(false);
  });
});
