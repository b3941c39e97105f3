import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultVinDatabasePath, loadVinConfig } from '../../src/config/vin-config.js';
import { corgiPackage } from '../../src/config/vin-config.js';
import { installVinDatabase, vinDatabaseStatus } from '../../src/providers/vin-offline/vin-database.js';
import { prepareVinDatabase, type StartupLog } from '../../src/providers/vin-offline/vin-startup.js';
import { tempDir } from '../helpers/test-app.js';
import { NETWORK_REFUSED_EXIT_CODE } from './fixtures/refuse-network.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REFUSE_NETWORK = fileURLToPath(new URL('./fixtures/refuse-network.ts', import.meta.url));
const BIN = join(ROOT, 'bin', 'vehicle-lookup.js');

/** Runs node with the network refused, in a clean environment (no VIN_DB_PATH of ours). */
function runOffline(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const { VIN_DB_PATH: _path, VIN_DECODER: _decoder, DATA_DIR: _dir, BASE_URL: _base, ...inherited } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', REFUSE_NETWORK, ...args], {
      cwd: ROOT,
      env: { ...inherited, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

function capture(): StartupLog & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (_details, message) => lines.push(`info: ${message}`),
    error: (_details, message) => lines.push(`error: ${message}`),
  };
}

const dataDir = tempDir();
const home = tempDir();
const installed = defaultVinDatabasePath(dataDir.path);
afterAll(() => {
  dataDir.remove();
  home.remove();
});

describe('installing the vPIC database', () => {
  it('the network guard of these tests really stops a connection', async () => {
    const run = await runOffline(['-e', "await fetch('http://127.0.0.1:9/')", '--input-type=module'], {});
    expect(run.code).toBe(NETWORK_REFUSED_EXIT_CODE);
    expect(run.stderr).toContain('network access attempted: fetch');
  });

  it('`vin install-db` unpacks under DATA_DIR with no network and nothing in the home directory, then decodes offline', async () => {
    const env = { DATA_DIR: dataDir.path, HOME: home.path };
    const install = await runOffline([BIN, 'vin', 'install-db', '--json'], env);
    expect(install.code, install.stderr).toBe(0);
    const outcome = JSON.parse(install.stdout) as { path: string; installed: boolean; corgiVersion: string };
    expect(outcome).toMatchObject({ path: installed, installed: true, corgiVersion: corgiPackage().version });
    expect(installed.startsWith(join(dataDir.path, 'vin'))).toBe(true);
    expect(readdirSync(join(dataDir.path, 'vin'))).toEqual([`vpic-corgi-${corgiPackage().version}.sqlite`]);

    const decode = await runOffline([BIN, 'vin', 'decode', '1HGCM82633A004352', '--json'], env);
    expect(decode.code, decode.stderr).toBe(0);
    expect(JSON.parse(decode.stdout)).toMatchObject({ Description: '2003 Honda Accord' });
    // corgi's own createDecoder would have unpacked to ~/.corgi-cache; we never call it.
    expect(readdirSync(home.path)).toEqual([]);
  }, 60_000);

  it('a current copy is not unpacked again, at start-up or by the CLI', async () => {
    const before = statSync(installed).mtimeMs;
    const log = capture();
    await prepareVinDatabase(loadVinConfig({ DATA_DIR: dataDir.path }), log);
    expect(log.lines).toEqual(['info: offline VIN decoding ready']);
    expect((await installVinDatabase(installed)).installed).toBe(false);
    expect(statSync(installed).mtimeMs).toBe(before);
    expect(vinDatabaseStatus(installed)).toMatchObject({ installed: true, corgiVersion: corgiPackage().version });
  });

  it('rebuilds a copy with older indexes once, while a second installer waits for it (and a stale lock is taken over)', async () => {
    const db = new Database(installed);
    db.prepare("UPDATE vehicle_lookup_vin_meta SET value = '0' WHERE key = 'index_version'").run();
    db.close();
    expect(vinDatabaseStatus(installed)).toMatchObject({ installed: false, reason: 'built with older indexes' });
    // A lock left by a process killed an hour ago.
    writeFileSync(`${installed}.lock`, '');
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(`${installed}.lock`, anHourAgo, anHourAgo);

    const log = capture();
    const [first, second] = await Promise.all([prepareVinDatabase(loadVinConfig({ DATA_DIR: dataDir.path }), log), installVinDatabase(installed)]);
    expect(first).toBeUndefined();
    expect(log.lines[0]).toBe('info: installing the offline VIN database (first start only)');
    expect(log.lines.at(-1)).toBe('info: offline VIN decoding ready');
    expect(second.installed).toBe(false);
    expect(vinDatabaseStatus(installed).installed).toBe(true);
    // Neither the lock nor a partial file is left behind.
    expect(readdirSync(join(dataDir.path, 'vin'))).toEqual([`vpic-corgi-${corgiPackage().version}.sqlite`]);
  }, 60_000);
});

describe('start-up hook and settings', () => {
  it('does nothing but say so when VIN_DECODER=off', async () => {
    const dir = tempDir();
    try {
      const log = capture();
      await prepareVinDatabase(loadVinConfig({ DATA_DIR: dir.path, VIN_DECODER: 'off' }), log);
      expect(log.lines).toEqual(['info: offline VIN decoding is off (VIN_DECODER=off)']);
      expect(existsSync(join(dir.path, 'vin'))).toBe(false);
    } finally {
      dir.remove();
    }
  });

  it('logs a failed install and lets the service start', async () => {
    const dir = tempDir();
    try {
      const blocker = join(dir.path, 'not-a-directory');
      writeFileSync(blocker, '');
      const log = capture();
      await prepareVinDatabase(loadVinConfig({ VIN_DB_PATH: join(blocker, 'vpic.sqlite') }), log);
      expect(log.lines.at(-1)).toMatch(/^error: could not install the offline VIN database/);
    } finally {
      dir.remove();
    }
  });

  it('reads VIN_DECODER and VIN_DB_PATH, defaulting to a file under DATA_DIR named after the corgi version', () => {
    expect(loadVinConfig({ DATA_DIR: '/srv/data' })).toEqual({ enabled: true, databasePath: `/srv/data/vin/vpic-corgi-${corgiPackage().version}.sqlite`, explicitPath: false });
    expect(loadVinConfig({ VIN_DECODER: 'OFF', VIN_DB_PATH: '/var/lib/vin.sqlite' })).toEqual({ enabled: false, databasePath: '/var/lib/vin.sqlite', explicitPath: true });
    expect(loadVinConfig({ VIN_DECODER: ' yes ' }).enabled).toBe(true);
    expect(() => loadVinConfig({ VIN_DECODER: 'sometimes' })).toThrow('VIN_DECODER must be on or off (got "sometimes")');
  });
});
