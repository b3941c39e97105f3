import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { serverArgs } from '../helpers/server-entry.js';
import { tempDir } from '../helpers/test-app.js';

/**
 * What the secrets suites (secrets.slow, paid-secrets.slow) share: the real server as a process
 * with logging at trace level, asked as its demo account, and its whole output scanned for secrets.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { BASE_URL: _viteBase, DATABASE_URL: _db, ...inherited } = process.env;

/** Fails naming the first `shown` characters of any of `secrets` that appears in `text`. */
export function expectNoSecrets(text: string, secrets: readonly string[], shown = 6): void {
  for (const s of secrets) expect(text.includes(s), `a secret (${s.slice(0, shown)}...) appears`).toBe(false);
}

/** The running server, as `runTraceServer` hands it to its caller. */
export interface TraceServer {
  /** The body of GET `path` asked as the demo account (HTTP Basic), on a connection of its own. */
  text(path: string): Promise<string>;
}

/**
 * Runs the server with `env` (over the test's own environment, without its database) at trace
 * level in a data folder of its own, waits for the demo key it prints, hands it to `use`, stops it
 * with SIGTERM and returns everything it wrote (stdout and stderr). The log must show an upstream
 * request and an unavailable upstream, so the scan covers the paths that carry the secrets.
 */
export async function runTraceServer(env: Record<string, string>, use: (server: TraceServer) => Promise<void>, readyMs = 30_000): Promise<string> {
  const dir = tempDir();
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, serverArgs(), {
    cwd: ROOT,
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'trace', DATA_DIR: dir.path, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + readyMs;
    let key: string | undefined;
    while (Date.now() < deadline && key === undefined) {
      if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
      key = /curl -u 'demo:([A-Za-z0-9_-]{43})'/.exec(output)?.[1];
      if (key === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    if (key === undefined) throw new Error(`no demo key printed: ${output}`);
    const auth = `Basic ${Buffer.from(`demo:${key}`).toString('base64')}`;
    await use({ text: async (path) => (await fetch(`${base}${path}`, { headers: { authorization: auth, connection: 'close' } })).text() });
    child.kill('SIGTERM');
    await once(child, 'exit');
    expect(output).toMatch(/"msg":"upstream request"/);
    expect(output).toMatch(/"msg":"upstream unavailable"/);
    return output;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    dir.remove();
  }
}
