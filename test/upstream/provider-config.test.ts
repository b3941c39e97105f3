import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { DVLA_DEFAULT_BASE_URL, DVSA_DEFAULT_BASE_URL, DVSA_DEFAULT_SCOPE, loadProviderConfig } from '../../src/providers/upstream/provider-config.js';

const DVSA = { DVSA_CLIENT_ID: 'id', DVSA_CLIENT_SECRET: 'secret-value', DVSA_API_KEY: 'key-value', DVSA_TOKEN_URL: 'https://login.example/tenant/oauth2/v2.0/token' };

describe('upstream provider configuration', () => {
  it('leaves every provider off when no credentials are set, and says which variables enable them', () => {
    const config = loadProviderConfig({});
    expect(config.dvla).toBeUndefined();
    expect(config.dvsaMot).toBeUndefined();
    expect(config.disabled.map((d) => d.provider)).toEqual(['dvla', 'dvsa-mot']);
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
});
