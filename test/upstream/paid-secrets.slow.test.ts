import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderAnswer } from '../../src/lookup/provider.js';
import { FakeCarsxe, CARSXE_PLATES, CARSXE_TRIGGERS, CARSXE_VINS } from '../fakes/fake-carsxe.js';
import { FakeUkvd, UKVD_PLATES } from '../fakes/fake-ukvd.js';
import { FakeVincario, VINCARIO_VINS } from '../fakes/fake-vincario.js';
import { freePort } from '../helpers/ports.js';
import { tempDir } from '../helpers/test-app.js';
import { paidProviders, queryOf } from './paid-harness.js';

/**
 * The paid providers' secrets (issue 32) never leave the process: not the UKVD and CarsXE keys
 * (which their APIs take in the query string), not Vincario's key, and above all not
 * VINCARIO_SECRET, which is never sent at all (only its control sum is). Checked through every
 * error path with logging at trace level, in the monitor's state, in the answers, in what the
 * fakes received, and in a real server process's whole output.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { BASE_URL: _viteBase, DATABASE_URL: _db, ...inherited } = process.env;

const UKVD_KEY = 'ukvd-5e4f3a2b-1c0d-4e5f-9a8b-secretsecret';
const VINCARIO_KEY = 'vincario-key-a1b2c3d4e5f6';
const VINCARIO_SECRET = 'vincario~secret.Zx9Cv8Bn7Mm6';
const CARSXE_KEY = 'carsxe-key-0f1e2d3c4b5a6978';
const SECRETS = [UKVD_KEY, VINCARIO_KEY, VINCARIO_SECRET, CARSXE_KEY];

let ukvd: FakeUkvd;
let vincario: FakeVincario;
let carsxe: FakeCarsxe;

function expectNoSecrets(text: string, secrets: readonly string[] = SECRETS): void {
  for (const s of secrets) expect(text.includes(s), `a secret (${s.slice(0, 8)}...) appears`).toBe(false);
}

const env = (overrides: Record<string, string> = {}): Record<string, string> => ({
  UKVD_API_KEY: UKVD_KEY,
  UKVD_BASE_URL: ukvd.baseUrl,
  VINCARIO_API_KEY: VINCARIO_KEY,
  VINCARIO_SECRET,
  VINCARIO_BASE_URL: vincario.baseUrl,
  CARSXE_API_KEY: CARSXE_KEY,
  CARSXE_BASE_URL: carsxe.baseUrl,
  UKVD_TIMEOUT_MS: '300',
  UKVD_BUDGET_MS: '300',
  VINCARIO_TIMEOUT_MS: '300',
  VINCARIO_BUDGET_MS: '300',
  CARSXE_TIMEOUT_MS: '300',
  CARSXE_BUDGET_MS: '300',
  ...overrides,
});

beforeAll(async () => {
  ukvd = await FakeUkvd.start({ apiKey: UKVD_KEY, slowMs: 2000 });
  vincario = await FakeVincario.start({ apiKey: VINCARIO_KEY, secret: VINCARIO_SECRET, slowMs: 2000 });
  carsxe = await FakeCarsxe.start({ apiKey: CARSXE_KEY, slowMs: 2000 });
});
afterAll(async () => {
  await ukvd.close();
  await vincario.close();
  await carsxe.close();
});

describe('the paid providers’ keys and Vincario’s secret never reach logs, messages or the wire', () => {
  it('through every outcome of the three providers, with logging at trace level', async () => {
    const p = await paidProviders(env({ UKVD_BREAKER_FAILURES: '3', VINCARIO_BREAKER_FAILURES: '3', CARSXE_BREAKER_FAILURES: '3' }));
    const answers: ProviderAnswer[] = [];
    try {
      for (const plate of Object.values(UKVD_PLATES)) answers.push(await p.provider('Check', 'ukvd').find(queryOf('Check', { RegistrationNumber: plate })));
      answers.push(await p.provider('UKMOT', 'ukvd').find(queryOf('UKMOT', { RegistrationNumber: UKVD_PLATES.car })));
      for (const vin of Object.values(VINCARIO_VINS)) {
        answers.push(await p.provider('VinCheck', 'vincario').find(queryOf('VinCheck', { Vin: vin })));
        answers.push(await p.provider('CheckStolen', 'vincario').find(queryOf('CheckStolen', { vinNumber: vin })));
      }
      for (const plate of [CARSXE_PLATES.us.plate, ...Object.values(CARSXE_TRIGGERS)]) answers.push(await p.provider('CheckUSA', 'carsxe').find(queryOf('CheckUSA', { RegistrationNumber: plate, State: 'CA' })));
      for (const vin of Object.values(CARSXE_VINS)) answers.push(await p.provider('VinCheck', 'carsxe').find(queryOf('VinCheck', { Vin: vin })));
    } finally {
      await p.close();
    }
    // Wrong credentials: the refused values are ours too, and must not show either.
    const wrong = await paidProviders(env({ UKVD_API_KEY: 'ukvd-wrong-0000-secretsecret', VINCARIO_SECRET: 'wrong~secret.Qq1', CARSXE_API_KEY: 'carsxe-wrong-000000' }));
    try {
      answers.push(await wrong.provider('Check', 'ukvd').find(queryOf('Check', { RegistrationNumber: UKVD_PLATES.car })));
      answers.push(await wrong.provider('VinCheck', 'vincario').find(queryOf('VinCheck', { Vin: VINCARIO_VINS.focus })));
      answers.push(await wrong.provider('CheckUSA', 'carsxe').find(queryOf('CheckUSA', { RegistrationNumber: CARSXE_PLATES.us.plate, State: 'CA' })));
    } finally {
      await wrong.close();
    }
    const log = p.log() + wrong.log();
    expect(log).toMatch(/upstream unavailable/);
    expect(log).toMatch(/circuit opened/);
    expect(answers.some((a) => a.status === 'found')).toBe(true);
    expect(answers.some((a) => a.status === 'unavailable')).toBe(true);
    const all = [...SECRETS, 'ukvd-wrong-0000-secretsecret', 'wrong~secret.Qq1', 'carsxe-wrong-000000'];
    expectNoSecrets(log, all);
    expectNoSecrets(JSON.stringify(answers), all);
    expectNoSecrets(JSON.stringify(p.monitor.snapshot()), all);
    expectNoSecrets(JSON.stringify(wrong.monitor.snapshot()), all);
    // The secret is never sent: only its control sum is.
    for (const r of vincario.server.requests) {
      expect(JSON.stringify(r)).not.toContain(VINCARIO_SECRET);
      expect(JSON.stringify(r)).not.toContain('wrong~secret.Qq1');
    }
  });

  it('in the real server: its log at trace level, its answers, /readyz and /metrics carry no key or secret', async () => {
    const dir = tempDir();
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'trace', DATA_DIR: dir.path, VIN_DECODER: 'off', ...env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const base = `http://127.0.0.1:${port}`;
    try {
      const deadline = Date.now() + 30_000;
      let key: string | undefined;
      while (Date.now() < deadline && key === undefined) {
        if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
        key = /curl -u 'demo:([A-Za-z0-9_-]{43})'/.exec(output)?.[1];
        if (key === undefined) await new Promise((r) => setTimeout(r, 100));
      }
      if (key === undefined) throw new Error(`no demo key printed: ${output}`);
      const auth = `Basic ${Buffer.from(`demo:${key}`).toString('base64')}`;
      let bodies = '';
      const paths = [
        `Check/${UKVD_PLATES.car}`,
        `UKMOT/${UKVD_PLATES.car}`,
        `Check/${UKVD_PLATES.down}`,
        `Check/${UKVD_PLATES.slow}`,
        `VinCheck/${VINCARIO_VINS.focus}`,
        `CheckStolen/${VINCARIO_VINS.stolen}`,
        `VinCheck/${VINCARIO_VINS.down}`,
        `CheckUSA/${CARSXE_PLATES.us.plate}/CA`,
        `CheckUSA/${CARSXE_TRIGGERS.blocked}/CA`,
        `CheckUSA/${CARSXE_TRIGGERS.slow}/TX`,
      ];
      for (const path of paths) {
        const res = await fetch(`${base}/api/json.aspx/${path}`, { headers: { authorization: auth, connection: 'close' } });
        bodies += await res.text();
      }
      bodies += await (await fetch(`${base}/readyz`, { headers: { connection: 'close' } })).text();
      bodies += await (await fetch(`${base}/metrics`, { headers: { connection: 'close' } })).text();
      expect(bodies).toContain('AUDI');
      expect(bodies).toContain('Reported stolen');
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
  }, 90_000);
});
