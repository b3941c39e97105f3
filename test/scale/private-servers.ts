/**
 * A PostgreSQL cluster and a Redis server of a test's own, which it may stop, restart and kill:
 * the machine's servers are shared by other engineers and by CI's parallel workers (docs/testing.md),
 * so a test never touches them. PostgreSQL: `initdb` into a temporary directory, run as the
 * `postgres` user when we are root (PostgreSQL refuses to run as root), on a free port, with its
 * unix socket in that directory. Redis: `redis-server` on a free port, without persistence.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../helpers/ports.js';

const run = promisify(execFile);

const PG_BIN = process.env.PG_TEST_BIN ?? '/usr/lib/postgresql/15/bin';
const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
const RUNUSER = '/usr/sbin/runuser';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const asRoot = process.getuid?.() === 0;

/**
 * Why private servers cannot be started here (binaries missing), or undefined when they can.
 * Binaries that exist but fail are not a reason to skip: the start itself throws.
 */
export function privateServersMissing(): string | undefined {
  const needed = [join(PG_BIN, 'initdb'), join(PG_BIN, 'pg_ctl'), join(PG_BIN, 'postgres'), REDIS_SERVER, ...(asRoot ? [RUNUSER] : [])];
  const missing = needed.filter((path) => !executable(path));
  return missing.length === 0 ? undefined : `missing ${missing.join(', ')}`;
}

/** Runs a PostgreSQL tool as the `postgres` user when we are root, else as ourselves. */
async function pgTool(tool: string, args: readonly string[]): Promise<string> {
  const command = asRoot ? RUNUSER : join(PG_BIN, tool);
  const argv = asRoot ? ['-u', 'postgres', '--', join(PG_BIN, tool), ...args] : [...args];
  try {
    const { stdout, stderr } = await run(command, argv, { timeout: 120_000 });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${tool} ${args.join(' ')} failed: ${String(error)}\n${stdout}${stderr}`);
  }
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication). */
  readonly url: string;
  readonly port: number;
  /** Starts the server and waits until it accepts connections. */
  start(): Promise<void>;
  /** Fast shutdown (connections terminated, in-flight transactions rolled back), waiting until it is down. */
  stop(): Promise<void>;
  /** `pg_ctl restart -m fast`, as `pg_ctlcluster ... restart -m fast` does. */
  restart(): Promise<void>;
  /** Whether start (or restart) ran last, rather than stop. */
  isRunning(): boolean;
  /** Stops it if running and deletes its directory. */
  remove(): Promise<void>;
}

/** A new cluster in a temporary directory; not started until `start`. */
export async function privatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-pg-'));
  // mkdtemp makes it 0700 and ours; the postgres user must own it to initdb into it.
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  chmodSync(dir, 0o700);
  const data = join(dir, 'data');
  const port = await freePort();
  await pgTool('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=on -c max_connections=60`;
  let running = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await pgTool('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '120', 'start']);
      running = true;
    },
    async stop() {
      await pgTool('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '120', 'stop']);
      running = false;
    },
    async restart() {
      await pgTool('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-m', 'fast', '-w', '-t', '120', 'restart']);
      running = true;
    },
    isRunning: () => running,
    async remove() {
      if (running) await pgTool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop']).catch(() => undefined);
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  remove(): Promise<void>;
}

/** A redis-server of our own on a free port, without persistence; not started until `start`. */
export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    const current = child;
    child = undefined;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill('SIGTERM');
    const force = setTimeout(() => current.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(force);
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const server = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = server;
      let output = '';
      const ready = new Promise<void>((resolve, reject) => {
        const onData = (d: Buffer): void => {
          output += d.toString();
          if (output.includes('Ready to accept connections')) resolve();
        };
        server.stdout.on('data', onData);
        server.stderr.on('data', onData);
        server.once('exit', (code) => {
          reject(new Error(`redis-server exited with ${String(code)} before it was ready:\n${output}`));
        });
      });
      await ready;
    },
    stop,
    remove: stop,
  };
}
