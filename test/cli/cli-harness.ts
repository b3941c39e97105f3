import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type BuiltApp } from '../../src/app.js';
import type { CliOutput } from '../../src/cli/cli-context.js';
import { runCli } from '../../src/cli/program.js';
import { loadConfig } from '../../src/config/config.js';
import { tempDir } from '../helpers/test-app.js';

/** The repository root, where `npm run cli` and `bin/vehicle-lookup.js` live. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(REPO_ROOT, 'bin', 'vehicle-lookup.js');

/** What one CLI run printed and returned. */
export interface CliRun {
  readonly code: number;
  /** Everything written to `out`, one entry per call, joined by newlines. */
  readonly out: string;
  /** Everything written to `err`, one entry per call, joined by newlines. */
  readonly err: string;
  readonly errLines: readonly string[];
  /** Progress lines drawn (only when run as interactive). */
  readonly progress: readonly string[];
}

/** Runs the CLI in this process with a capturing CliOutput, as `vehicle-lookup ARGV` would. */
export async function cli(env: Readonly<Record<string, string>>, argv: readonly string[], interactive = false): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const progress: string[] = [];
  const io: CliOutput = {
    out: (text) => {
      out.push(text);
    },
    err: (text) => {
      err.push(text);
    },
    progress: (text) => {
      progress.push(text);
    },
    interactive,
  };
  const code = await runCli(argv, { ...env }, io);
  return { code, out: out.join('\n'), err: err.join('\n'), errLines: err, progress };
}

/** Parses the `--json` output of a run; fails the test with the run's stderr when it is not JSON. */
export function json(run: CliRun): unknown {
  try {
    return JSON.parse(run.out);
  } catch {
    throw new Error(`expected JSON on stdout (exit ${run.code}); stdout: ${run.out}; stderr: ${run.err}`);
  }
}

/**
 * The environment of a child CLI process: this process's, with the settings that would point it
 * elsewhere blanked (vitest itself sets BASE_URL=/ for Vite, which the service would reject).
 */
export function childEnv(env: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  return { ...process.env, BASE_URL: '', DATABASE_URL: '', REQUIRE_API_KEY: '', LOG_LEVEL: 'silent', ...env };
}

/** Runs the real `bin/vehicle-lookup.js` as a child process. */
export function runBin(args: readonly string[], env: Readonly<Record<string, string>>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: REPO_ROOT,
      env: childEnv(env),
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

/** A store in a temporary DATA_DIR with the app built on it (not listening): the "server". */
export interface Store {
  readonly dir: string;
  /** The environment a CLI run on this store gets. */
  readonly env: Readonly<Record<string, string>>;
  readonly built: BuiltApp;
  /** Writes records as a JSON Lines file in the store's directory; returns its path. */
  writeJsonl(name: string, records: readonly unknown[]): string;
  /** Imports records through the same importer the CLI uses; throws on an invalid line. */
  importRecords(records: readonly unknown[]): Promise<void>;
  /** `GET /api/json.aspx/{path}` with HTTP Basic credentials. */
  lookup(path: string, username: string, apiKey: string): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export function basic(username: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${username}:${apiKey}`, 'utf8').toString('base64')}`;
}

export async function openStore(): Promise<Store> {
  const dir = tempDir();
  const env = { DATA_DIR: dir.path, LOG_LEVEL: 'silent' };
  const built = await buildApp(loadConfig(env));
  let files = 0;
  const writeJsonl = (name: string, records: readonly unknown[]): string => {
    const file = join(dir.path, name);
    writeFileSync(file, records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
    return file;
  };
  return {
    dir: dir.path,
    env,
    built,
    writeJsonl,
    async importRecords(records) {
      files += 1;
      const summary = await built.services.importer.importFile(writeJsonl(`fixture-${files}.jsonl`, records), { skipInvalid: false, source: 'test' });
      if (!summary.committed) throw new Error(`fixture import had ${summary.invalid} invalid lines`);
    },
    lookup: (path, username, apiKey) =>
      built.app.inject({ method: 'GET', url: `/api/json.aspx/${path}`, headers: { authorization: basic(username, apiKey) } }),
    async close() {
      await built.app.close();
      dir.remove();
    },
  };
}
