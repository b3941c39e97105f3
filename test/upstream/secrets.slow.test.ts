import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderAnswer } from '../../src/lookup/provider.js';
import { UpstreamCacheRepository } from '../../src/providers/upstream/upstream-cache.repository.js';
import { UpstreamMonitor } from '../../src/providers/upstream/upstream-monitor.js';
import { UpstreamSource } from '../../src/providers/upstream/upstream-source.js';
import type { FakeDvla } from '../fakes/fake-dvla.js';
import type { FakeDvsaMot } from '../fakes/fake-dvsa-mot.js';
import { freePort } from '../helpers/ports.js';
import { serverArgs } from '../helpers/server-entry.js';
import { tempDir } from '../helpers/test-app.js';
import { closedPortUrl, fakeEnv, ManualClock, query, SECRETS, startDvla, startDvsa, ukProviders } from './harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { BASE_URL: _viteBase, DATABASE_URL: _db, ...inherited } = process.env;

let dvla: FakeDvla;
let dvsa: FakeDvsaMot;

/** Every secret the fakes know, and every token they issued. */
function secrets(): string[] {
  return [SECRETS.dvlaKey, SECRETS.dvsaClientSecret, SECRETS.dvsaKey, ...dvsa.tokens];
}

function expectNoSecrets(text: string): void {
  for (const s of secrets()) expect(text.includes(s), `a secret (${s.slice(0, 6)}...) appears`).toBe(false);
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
    const p = await ukProviders(fakeEnv({ dvla, dvsa }, { DVLA_TIMEOUT_MS: '200', DVSA_TIMEOUT_MS: '200', DVLA_BREAKER_FAILURES: '3', DVSA_BREAKER_FAILURES: '3' }), clock);
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
      for (const plate of ['AA19AAA', 'ER19NFD', 'ER19BAD', 'ER19THR', 'ER19ERR', 'ER19MNT', 'ER19HNG']) {
        answers.push(await p.check.find(query('Check', plate)));
        answers.push(await ukmot.find(query('UKMOT', plate)));
      }
      // The circuits let a trial through, which succeeds.
      clock.advance(3_600_000);
      answers.push(await p.check.find(query('Check', 'AA19SRN')));
      expect(answers.at(-1)).toMatchObject({ status: 'found' });
    } finally {
      await p.close();
    }
    const log = p.log();
    expect(dvsa.tokens.length).toBeGreaterThanOrEqual(2);
    expect(log).toMatch(/upstream unavailable/);
    expect(log).toMatch(/access token issued/);
    expect(log).toMatch(/access token request failed/);
    expect(log).toMatch(/circuit opened/);
    expect(log).toMatch(/circuit closed/);
    expect(answers.some((a) => a.status === 'unavailable')).toBe(true);
    expectNoSecrets(log);
    expectNoSecrets(JSON.stringify(answers));
    expectNoSecrets(JSON.stringify(p.monitor.snapshot()));
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
    const dir = tempDir();
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, serverArgs(), {
      cwd: ROOT,
      env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'trace', DATA_DIR: dir.path, ...fakeEnv({ dvla, dvsa }, { DVLA_TIMEOUT_MS: '300', DVSA_TIMEOUT_MS: '300' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const base = `http://127.0.0.1:${port}`;
    try {
      const deadline = Date.now() + 20_000;
      let key: string | undefined;
      while (Date.now() < deadline && key === undefined) {
        if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
        key = /curl -u 'demo:([A-Za-z0-9_-]{43})'/.exec(output)?.[1];
        if (key === undefined) await new Promise((r) => setTimeout(r, 100));
      }
      if (key === undefined) throw new Error(`no demo key printed: ${output}`);
      const auth = `Basic ${Buffer.from(`demo:${key}`).toString('base64')}`;
      let bodies = '';
      for (const path of ['Check/AA19AAA', 'UKMOT/AA19AAA', 'Check/ER19ERR', 'UKMOT/ER19HNG', 'Check/ER19THR', 'UKMOT/ER19NFD']) {
        const res = await fetch(`${base}/api/json.aspx/${path}`, { headers: { authorization: auth } });
        bodies += await res.text();
      }
      dvsa.revokeTokens();
      bodies += await (await fetch(`${base}/api/json.aspx/UKMOT/AA19DSL`, { headers: { authorization: auth } })).text();
      bodies += await (await fetch(`${base}/readyz`)).text();
      bodies += await (await fetch(`${base}/metrics`)).text();
      expect(bodies).toContain('FOCUS');
      expect(bodies).toContain('temporarily unavailable');
      child.kill('SIGTERM');
      await once(child, 'exit');
      expect(output).toMatch(/"msg":"upstream request"/);
      expect(output).toMatch(/"msg":"upstream unavailable"/);
      expectNoSecrets(output);
      expectNoSecrets(bodies);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      dir.remove();
    }
  }, 60_000);
});
