import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderAnswer } from '../../src/lookup/provider.js';
import { UpstreamCacheRepository } from '../../src/providers/upstream/upstream-cache.repository.js';
import { UpstreamMonitor } from '../../src/providers/upstream/upstream-monitor.js';
import { UpstreamSource } from '../../src/providers/upstream/upstream-source.js';
import type { FakeDvla } from '../fakes/fake-dvla.js';
import type { FakeDvsaMot } from '../fakes/fake-dvsa-mot.js';
import { tempDir } from '../helpers/test-app.js';
import { closedPortUrl, fakeEnv, ManualClock, query, SECRETS, startDvla, startDvsa, ukProviders } from './harness.js';
import { expectNoSecrets as expectNone, runTraceServer } from './trace-server.js';

let dvla: FakeDvla;
let dvsa: FakeDvsaMot;

/** Every secret the fakes know, and every token they issued. */
function secrets(): string[] {
  return [SECRETS.dvlaKey, SECRETS.dvsaClientSecret, SECRETS.dvsaKey, ...dvsa.tokens];
}

function expectNoSecrets(text: string): void {
  expectNone(text, secrets());
}

beforeAll(async () => {
  dvla = await startDvla();
  dvsa = await startDvsa();
});
afterAll(async () => {
  await dvla.close();
  await dvsa.close();
});

describe('keys and tokens never reach logs or messages', () => {
  it('through every error path of both providers, with logging at trace level', async () => {
    const clock = new ManualClock();
    // fakeEnv's timeouts, far above any answer of the local fakes however busy the machine.
    const p = await ukProviders(fakeEnv({ dvla, dvsa }, { DVLA_BREAKER_FAILURES: '3', DVSA_BREAKER_FAILURES: '3' }), clock);
    // Providers of their own for the plate that never answers (ER19HNG): they give up at 200 ms.
    const impatient = await ukProviders(fakeEnv({ dvla, dvsa }, { DVLA_TIMEOUT_MS: '200', DVSA_TIMEOUT_MS: '200' }), clock);
    const answers: ProviderAnswer[] = [];
    try {
      const ukmot = p.ukmot ?? p.check;
      answers.push(await ukmot.find(query('UKMOT', 'AA19AAA')));
      // A revoked token (401 and a new token), then refused client credentials.
      dvsa.revokeTokens();
      answers.push(await ukmot.find(query('UKMOT', 'AA19DSL')));
      dvsa.revokeTokens();
      dvsa.server.script({ status: 401, json: { error: 'invalid_client' } }, { status: 401, json: { error: 'invalid_client', error_description: `AADSTS7000215 for ${SECRETS.dvsaClientId}` } });
      answers.push(await ukmot.find(query('UKMOT', 'L2WPS')));
      // Every error plate, until the circuits open.
      for (const plate of ['AA19AAA', 'ER19NFD', 'ER19BAD', 'ER19THR', 'ER19ERR', 'ER19MNT']) {
        answers.push(await p.check.find(query('Check', plate)));
        answers.push(await ukmot.find(query('UKMOT', plate)));
      }
      answers.push(await impatient.check.find(query('Check', 'ER19HNG')));
      answers.push(await (impatient.ukmot ?? impatient.check).find(query('UKMOT', 'ER19HNG')));
      // The circuits let a trial through, which succeeds.
      clock.advance(3_600_000);
      answers.push(await p.check.find(query('Check', 'AA19SRN')));
      expect(answers.at(-1)).toMatchObject({ status: 'found' });
    } finally {
      await p.close();
      await impatient.close();
    }
    const log = p.log() + impatient.log();
    expect(dvsa.tokens.length).toBeGreaterThanOrEqual(2);
    expect(log).toMatch(/upstream unavailable/);
    expect(log).toMatch(/access token issued/);
    expect(log).toMatch(/access token request failed/);
    expect(log).toMatch(/circuit opened/);
    expect(log).toMatch(/circuit closed/);
    expect(impatient.log()).toMatch(/no answer within 200 ms/);
    expect(answers.some((a) => a.status === 'unavailable')).toBe(true);
    expectNoSecrets(log);
    expectNoSecrets(JSON.stringify(answers));
    expectNoSecrets(JSON.stringify(p.monitor.snapshot()));
    expectNoSecrets(JSON.stringify(impatient.monitor.snapshot()));
    expect(log).not.toContain(SECRETS.dvsaClientId);
  });

  it('redacts the secrets of an upstream from the message of an unexpected exception', async () => {
    const dir = tempDir();
    const { openStorage } = await import('../../src/storage/create-database.js');
    const storage = await openStorage({ dataDir: dir.path });
    try {
      const monitor = new UpstreamMonitor();
      const settings = { name: 'x', baseUrl: await closedPortUrl(), timeoutMs: 100, budgetMs: 200, cacheTtlS: 0, notFoundTtlS: 0, breakerFailures: 5, breakerOpenMs: 1000 };
      const source = new UpstreamSource(settings, { cache: new UpstreamCacheRepository(storage.db), clock: new ManualClock(), monitor }, ['configured-secret-1']);
      source.redactor.add('issued-token-abcdef');
      const answer = await source.lookup('K', () => Promise.reject(new TypeError('header "configured-secret-1" and issued-token-abcdef are invalid')));
      expect(answer).toEqual({ status: 'unavailable', reason: 'x: TypeError: header "[redacted]" and [redacted] are invalid' });
      expect(JSON.stringify(monitor.snapshot())).not.toMatch(/configured-secret-1|issued-token-abcdef/);
    } finally {
      await storage.close();
      dir.remove();
    }
  });

  it('in the real server: its log at trace level and its answers carry no key or token', async () => {
    // Timeouts far above any answer of the fakes, yet well below ER19HNG, which never answers.
    const timeouts = { DVLA_TIMEOUT_MS: '5000', DVLA_BUDGET_MS: '5000', DVSA_TIMEOUT_MS: '5000', DVSA_BUDGET_MS: '5000' };
    let bodies = '';
    const output = await runTraceServer(fakeEnv({ dvla, dvsa }, timeouts), async (server) => {
      for (const path of ['Check/AA19AAA', 'UKMOT/AA19AAA', 'Check/ER19ERR', 'UKMOT/ER19HNG', 'Check/ER19THR', 'UKMOT/ER19NFD']) bodies += await server.text(`/api/json.aspx/${path}`);
      dvsa.revokeTokens();
      bodies += await server.text('/api/json.aspx/UKMOT/AA19DSL');
      bodies += await server.text('/readyz');
      bodies += await server.text('/metrics');
    }, 20_000);
    expect(bodies).toContain('FOCUS');
    expect(bodies).toContain('temporarily unavailable');
    expectNoSecrets(output);
    expectNoSecrets(bodies);
  }, 60_000);
});
