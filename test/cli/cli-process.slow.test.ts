import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import type { LedgerEntry } from '../../src/credits/credit-ledger.repository.js';
import { basic, childEnv, cli, json, openStore, REPO_ROOT, runBin, type Store } from './cli-harness.js';

/**
 * The CLI as operators run it: bin/vehicle-lookup.js and `npm run cli` in their own processes,
 * next to a listening server. Slow (a process start each), so outside `npm run test:fast`.
 */

const FRANCE = {
  operation: 'CheckFrance',
  key: { RegistrationNumber: 'EG258MA' },
  vehicle: { Description: 'Peugeot 208 Allure', RegistrationYear: '2019', CarMake: { CurrentTextValue: 'PEUGEOT' }, CarModel: { CurrentTextValue: '208' } },
};
const API_KEY = /^[A-Za-z0-9_-]{43}$/;

let store: Store;

beforeEach(async () => {
  store = await openStore();
  await store.importRecords([FRANCE]);
});

afterEach(async () => {
  await store.close();
});

async function createAccount(name: string, credits: number): Promise<void> {
  const run = await cli(store.env, ['accounts', 'create', name, '--credits', String(credits), '--json']);
  json(run);
}

describe('the installed command', () => {
  it('bin/vehicle-lookup.js accounts create --json works with DATA_DIR and exits 0', async () => {
    const result = await runBin(['accounts', 'create', 'binuser', '--credits', '4', '--json'], { DATA_DIR: store.dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({ username: 'binuser', credits: 4 });
    expect(body.apiKey).toMatch(API_KEY);
    // The app built on the same DATA_DIR accepts the key.
    expect((await store.lookup('CheckFrance/EG258MA', 'binuser', String(body.apiKey))).statusCode).toBe(200);
  });

  it('bin exits 1 with one message and no stack trace for an unknown account', async () => {
    const result = await runBin(['accounts', 'show', 'ghost', '--json'], { DATA_DIR: store.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe('vehicle-lookup: no account named ghost');
  });

  it('bin exits 1 when an import has invalid lines', async () => {
    const file = store.writeJsonl('bad.jsonl', [FRANCE, '{"operation":"CheckFrance"']);
    const result = await runBin(['import', file], { DATA_DIR: store.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 2: not valid JSON');
  });

  it('npm run cli -- ... runs the same program', async () => {
    await createAccount('npmuser', 9);
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn('npm', ['run', '--silent', 'cli', '--', 'accounts', 'show', 'npmuser', '--json'], {
        cwd: REPO_ROOT,
        env: childEnv({ DATA_DIR: store.dir }),
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.on('error', reject);
      child.on('close', (code) => {
        resolve({ code, stdout });
      });
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ username: 'npmuser', credits: 9, disabled: false });
  });

  it('works while a server on the same DATA_DIR listens and serves lookups', async () => {
    const server = await buildApp(loadConfig({ DATA_DIR: store.dir, LOG_LEVEL: 'silent' }));
    await server.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = server.app.server.address() as AddressInfo;
      const base = `http://127.0.0.1:${port}`;
      const germany = { operation: 'CheckGermany', key: { KBANumber: '0005/ALQ' }, vehicle: { Description: 'BMW 320d', CarMake: { CurrentTextValue: 'BMW' } } };
      const file = store.writeJsonl('live.jsonl', [germany]);

      // The server keeps answering while the CLI process writes to the store.
      const importing = runBin(['import', file, '--json'], { DATA_DIR: store.dir });
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      const imported = await importing;
      expect(imported.code, imported.stderr).toBe(0);
      expect(JSON.parse(imported.stdout)).toMatchObject({ imported: 1, invalid: 0, committed: true });

      const created = await runBin(['accounts', 'create', 'live', '--credits', '2', '--json'], { DATA_DIR: store.dir });
      expect(created.code, created.stderr).toBe(0);
      const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };

      const response = await fetch(`${base}/api/json.aspx/CheckGermany/0005/ALQ`, { headers: { authorization: basic('live', apiKey) } });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject(germany.vehicle);
      expect(response.headers.get('x-credits-remaining')).toBe('1');

      const usage = await runBin(['usage', 'live', '--json'], { DATA_DIR: store.dir });
      expect(usage.code, usage.stderr).toBe(0);
      const rows = JSON.parse(usage.stdout) as LedgerEntry[];
      expect(rows.map((r) => [r.kind, r.operation, r.balanceAfter])).toEqual([
        ['topup', null, 2],
        ['debit', 'CheckGermany', 1],
      ]);

      const rotated = await runBin(['accounts', 'rotate-key', 'live', '--json'], { DATA_DIR: store.dir });
      expect(rotated.code, rotated.stderr).toBe(0);
      const stale = await fetch(`${base}/api/json.aspx/CheckGermany/0005/ALQ`, { headers: { authorization: basic('live', apiKey) } });
      expect(stale.status).toBe(401);
    } finally {
      await server.app.close();
    }
  });
});
