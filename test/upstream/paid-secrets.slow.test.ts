import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderAnswer } from '../../src/lookup/provider.js';
import { FakeCarsxe, CARSXE_PLATES, CARSXE_TRIGGERS, CARSXE_VINS } from '../fakes/fake-carsxe.js';
import { FakeUkvd, UKVD_PLATES } from '../fakes/fake-ukvd.js';
import { FakeVincario, VINCARIO_VINS } from '../fakes/fake-vincario.js';
import { paidProviders, queryOf, type PaidProviders } from './paid-harness.js';
import { expectNoSecrets as expectNone, runTraceServer } from './trace-server.js';

/**
 * The paid providers' secrets (issue 32) never leave the process: not the UKVD and CarsXE keys
 * (which their APIs take in the query string), not Vincario's key, and above all not
 * VINCARIO_SECRET, which is never sent at all (only its control sum is). Checked through every
 * error path with logging at trace level, in the monitor's state, in the answers, in what the
 * fakes received, and in a real server process's whole output.
 */

const UKVD_KEY = 'ukvd-5e4f3a2b-1c0d-4e5f-9a8b-secretsecret';
const VINCARIO_KEY = 'vincario-key-a1b2c3d4e5f6';
const VINCARIO_SECRET = 'vincario~secret.Zx9Cv8Bn7Mm6';
const CARSXE_KEY = 'carsxe-key-0f1e2d3c4b5a6978';
const SECRETS = [UKVD_KEY, VINCARIO_KEY, VINCARIO_SECRET, CARSXE_KEY];

let ukvd: FakeUkvd;
let vincario: FakeVincario;
let carsxe: FakeCarsxe;

function expectNoSecrets(text: string, secrets: readonly string[] = SECRETS): void {
  expectNone(text, secrets, 8);
}

/** How long the fakes' slow answers take: the fake server's longest, so never within a test. */
const SLOW_MS = 30_000;
/** Far above any answer of the fakes however busy the machine, yet well below their slow ones. */
const PATIENT = { UKVD_TIMEOUT_MS: '5000', UKVD_BUDGET_MS: '5000', VINCARIO_TIMEOUT_MS: '5000', VINCARIO_BUDGET_MS: '5000', CARSXE_TIMEOUT_MS: '5000', CARSXE_BUDGET_MS: '5000' };
/** For the slow answers only. */
const IMPATIENT = { UKVD_TIMEOUT_MS: '300', UKVD_BUDGET_MS: '300', VINCARIO_TIMEOUT_MS: '300', VINCARIO_BUDGET_MS: '300', CARSXE_TIMEOUT_MS: '300', CARSXE_BUDGET_MS: '300' };

const env = (overrides: Record<string, string> = {}): Record<string, string> => ({
  UKVD_API_KEY: UKVD_KEY,
  UKVD_BASE_URL: ukvd.baseUrl,
  VINCARIO_API_KEY: VINCARIO_KEY,
  VINCARIO_SECRET,
  VINCARIO_BASE_URL: vincario.baseUrl,
  CARSXE_API_KEY: CARSXE_KEY,
  CARSXE_BASE_URL: carsxe.baseUrl,
  ...PATIENT,
  ...overrides,
});

beforeAll(async () => {
  ukvd = await FakeUkvd.start({ apiKey: UKVD_KEY, slowMs: SLOW_MS });
  vincario = await FakeVincario.start({ apiKey: VINCARIO_KEY, secret: VINCARIO_SECRET, slowMs: SLOW_MS });
  carsxe = await FakeCarsxe.start({ apiKey: CARSXE_KEY, slowMs: SLOW_MS });
});
afterAll(async () => {
  await ukvd.close();
  await vincario.close();
  await carsxe.close();
});

describe('the paid providers’ keys and Vincario’s secret never reach logs, messages or the wire', () => {
  it('through every outcome of the three providers, with logging at trace level', async () => {
    const p = await paidProviders(env({ UKVD_BREAKER_FAILURES: '3', VINCARIO_BREAKER_FAILURES: '3', CARSXE_BREAKER_FAILURES: '3' }));
    // Providers of their own for the slow answers: they give up at 300 ms.
    const impatient = await paidProviders(env(IMPATIENT));
    const answers: ProviderAnswer[] = [];
    const ask = (on: PaidProviders, operation: string, name: string, values: Record<string, string>): Promise<ProviderAnswer> => on.provider(operation, name).find(queryOf(operation, values));
    const notSlow = (values: Record<string, string>): string[] => Object.entries(values).flatMap(([k, v]) => (k === 'slow' ? [] : [v]));
    try {
      for (const plate of notSlow(UKVD_PLATES)) answers.push(await ask(p, 'Check', 'ukvd', { RegistrationNumber: plate }));
      answers.push(await ask(impatient, 'Check', 'ukvd', { RegistrationNumber: UKVD_PLATES.slow }));
      answers.push(await ask(p, 'UKMOT', 'ukvd', { RegistrationNumber: UKVD_PLATES.car }));
      for (const vin of Object.values(VINCARIO_VINS)) {
        const on = vin === VINCARIO_VINS.slow ? impatient : p;
        answers.push(await ask(on, 'VinCheck', 'vincario', { Vin: vin }));
        answers.push(await ask(on, 'CheckStolen', 'vincario', { vinNumber: vin }));
      }
      for (const plate of [CARSXE_PLATES.us.plate, ...notSlow(CARSXE_TRIGGERS)]) answers.push(await ask(p, 'CheckUSA', 'carsxe', { RegistrationNumber: plate, State: 'CA' }));
      answers.push(await ask(impatient, 'CheckUSA', 'carsxe', { RegistrationNumber: CARSXE_TRIGGERS.slow, State: 'CA' }));
      for (const vin of notSlow(CARSXE_VINS)) answers.push(await ask(p, 'VinCheck', 'carsxe', { Vin: vin }));
      answers.push(await ask(impatient, 'VinCheck', 'carsxe', { Vin: CARSXE_VINS.slow }));
    } finally {
      await p.close();
      await impatient.close();
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
    const log = p.log() + impatient.log() + wrong.log();
    expect(log).toMatch(/upstream unavailable/);
    expect(impatient.log()).toMatch(/no answer within 300 ms/);
    expect(log).toMatch(/circuit opened/);
    expect(answers.some((a) => a.status === 'found')).toBe(true);
    expect(answers.some((a) => a.status === 'unavailable')).toBe(true);
    const all = [...SECRETS, 'ukvd-wrong-0000-secretsecret', 'wrong~secret.Qq1', 'carsxe-wrong-000000'];
    expectNoSecrets(log, all);
    expectNoSecrets(JSON.stringify(answers), all);
    expectNoSecrets(JSON.stringify(p.monitor.snapshot()), all);
    expectNoSecrets(JSON.stringify(impatient.monitor.snapshot()), all);
    expectNoSecrets(JSON.stringify(wrong.monitor.snapshot()), all);
    // The secret is never sent: only its control sum is.
    for (const r of vincario.server.requests) {
      expect(JSON.stringify(r)).not.toContain(VINCARIO_SECRET);
      expect(JSON.stringify(r)).not.toContain('wrong~secret.Qq1');
    }
  });

  it('in the real server: its log at trace level, its answers, /readyz and /metrics carry no key or secret', async () => {
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
    let bodies = '';
    const output = await runTraceServer({ VIN_DECODER: 'off', ...env() }, async (server) => {
      for (const path of paths) bodies += await server.text(`/api/json.aspx/${path}`);
      bodies += await server.text('/readyz');
      bodies += await server.text('/metrics');
    });
    expect(bodies).toContain('AUDI');
    expect(bodies).toContain('Reported stolen');
    expect(bodies).toContain('temporarily unavailable');
    expectNoSecrets(output);
    expectNoSecrets(bodies);
  }, 90_000);
});
