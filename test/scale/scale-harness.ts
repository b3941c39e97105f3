/**
 * What the scale tests share: real server processes (started as `npm start` does, like
 * test/e2e/server-start.slow.test.ts), one store for several of them (SQLite under one DATA_DIR, or a
 * fresh PostgreSQL database), lookups over JSON, SOAP 1.1 and HTTP GET with a request id of our
 * own on each, and what the store holds afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { LedgerEntry } from '../../src/credits/credit-ledger.repository.js';
import { createServices, type Services } from '../../src/services.js';
import { systemClock } from '../../src/shared/clock.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { engineEnv } from '../helpers/engine-env.js';
import { freshPostgresDatabase, type TestEngine } from '../helpers/engines.js';
import { freePort } from '../helpers/ports.js';
import { serverArgs } from '../helpers/server-entry.js';

export { freePort };

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Vitest exports Vite's BASE_URL ("/") into process.env; the service would read it as its own.
const { BASE_URL: _viteBase, DATABASE_URL: _db, WORKERS: _workers, ...inherited } = process.env;

/** Start-up on a busy two-core machine (tsx compiles on first use) can take several seconds. */
const READY_TIMEOUT_MS = 60_000;

export const PLATE = 'AB123CD';
export const VEHICLE = { Description: 'RENAULT CLIO', CarMake: { CurrentTextValue: 'RENAULT' }, CarModel: { CurrentTextValue: 'CLIO' } };

// ---------------------------------------------------------------------------------------------
// Stores.

export interface SharedStore {
  readonly engine: TestEngine;
  /** DATA_DIR (and DATABASE_URL for PostgreSQL): what every server on this store is given. */
  readonly env: Readonly<Record<string, string>>;
  readonly dataDir: string;
  /** The SQLite file, for PRAGMA integrity_check. */
  readonly sqliteFile: string | undefined;
  /** Opens the store in this process with the project's own services; close it after use. */
  open(): Promise<{ services: Services; storage: Storage; close: () => Promise<void> }>;
  remove(): Promise<void>;
}

/**
 * A store for several servers. On PostgreSQL they share Redis too (a key prefix of their own),
 * as a deployment of several instances runs (issue 31: the money probes run there as well).
 */
export async function sharedStore(engine: TestEngine): Promise<SharedStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-scale-'));
  const database = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
  const env: Record<string, string> = await engineEnv(engine, { DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) });
  return {
    engine,
    env,
    dataDir,
    sqliteFile: database ? undefined : join(dataDir, 'vehicle-lookup.sqlite'),
    async open() {
      const storage = await openStorage({ dataDir, databaseUrl: database?.url, poolSize: 2 });
      const services = createServices(storage, { clock: systemClock, requireApiKeyEverywhere: false });
      return {
        services,
        storage,
        close: async () => {
          await services.close();
          await storage.close();
        },
      };
    },
    async remove() {
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates `username` with `credits` and imports the one vehicle every lookup asks for. */
export async function prepareAccount(store: SharedStore, username: string, credits: number): Promise<string> {
  const { services, close } = await store.open();
  try {
    const file = join(store.dataDir, 'vehicle.jsonl');
    writeFileSync(file, `${JSON.stringify({ operation: 'CheckFrance', key: { RegistrationNumber: PLATE }, vehicle: VEHICLE })}\n`);
    const summary = await services.importer.importFile(file, { skipInvalid: false, source: 'test' });
    if (!summary.committed) throw new Error('the test vehicle did not import');
    return (await services.accounts.create(username, credits)).apiKey;
  } finally {
    await close();
  }
}

export interface StoreState {
  readonly balance: number;
  readonly entries: readonly LedgerEntry[];
  /** The debits that stand: one given back (a `reversal` row of its request id, its answer undelivered: issue 31) is not among them. */
  readonly debits: readonly LedgerEntry[];
  readonly reversals: readonly LedgerEntry[];
  readonly accounts: number;
}

export async function storeState(store: SharedStore, username: string): Promise<StoreState> {
  const { services, storage, close } = await store.open();
  try {
    const entries = await services.accounts.usage(username);
    const row = await storage.db.selectFrom('accounts').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return {
      balance: (await services.accounts.show(username)).credits,
      entries,
      debits: entries.filter((e) => e.kind === 'debit' && !entries.some((r) => r.kind === 'reversal' && r.requestId === e.requestId)),
      reversals: entries.filter((e) => e.kind === 'reversal'),
      accounts: Number(row.n),
    };
  } finally {
    await close();
  }
}

// ---------------------------------------------------------------------------------------------
// Server processes.

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly base: string;
  /** Everything the process (and, in cluster mode, its workers) wrote so far. */
  output(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: ServerProcess[] = [];


/**
 * Spawns the service (`node --import tsx src/main.ts`, or dist/main.js: helpers/server-entry.ts); resolves once the process is running. `preload`: more
 * modules to `--import` first (a test's fault injection, e.g. fault-kill-after-debit-commit.ts).
 */
export function spawnServer(env: Readonly<Record<string, string>>, port: number, preload: readonly string[] = []): ServerProcess {
  const child = spawn(process.execPath, serverArgs(preload), {
    cwd: ROOT,
    // VIN_DECODER=off: no 86 MB vPIC database unpacked into every test store.
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SEED_DEMO: 'false', VIN_DECODER: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  const server: ServerProcess = { child, port, base: `http://127.0.0.1:${port}`, output: () => text, exited };
  started.push(server);
  return server;
}

export function running(server: ServerProcess): boolean {
  return server.child.exitCode === null && server.child.signalCode === null;
}

/** Waits until /readyz answers 200 (and, if given, `line` appears in the output). */
export async function waitReady(server: ServerProcess, line?: RegExp): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!running(server)) throw new Error(`server exited during start-up:\n${server.output()}`);
    try {
      const res = await fetch(`${server.base}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200 && (line === undefined || line.test(server.output()))) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`server did not become ready:\n${server.output()}`);
}

export async function startServer(env: Readonly<Record<string, string>>, port?: number): Promise<ServerProcess> {
  const server = spawnServer(env, port ?? (await freePort()));
  await waitReady(server);
  return server;
}

/** SIGTERM, then the exit code; SIGKILL if it takes longer than 15 s. */
export async function stopServer(server: ServerProcess): Promise<number | null> {
  if (running(server)) server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  const { code } = await server.exited;
  clearTimeout(timer);
  return code;
}

/** For afterEach: kills whatever a failed test left running. */
export function killAll(): void {
  for (const server of started.splice(0)) if (running(server)) server.child.kill('SIGKILL');
}

// ---------------------------------------------------------------------------------------------
// Lookups.

export const INTERFACES = ['json', 'soap11', 'http-get'] as const;
export type Interface = (typeof INTERFACES)[number];

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';

export interface Outcome {
  /**
   * The server's request id (its x-request-id, the ledger's) when it answered; the X-Request-Id we
   * sent otherwise, which the server only logs (issue 17 item 3), so it matches no ledger row.
   */
  readonly requestId: string;
  readonly interface: Interface;
  /** Index of the server the request was sent to. */
  readonly target: number;
  /**
   * HTTP status; `refused` when no server was listening (the request never reached one); `cut`
   * when the connection broke before an answer (the server may have done anything with it).
   */
  readonly status: number | 'refused' | 'cut';
  readonly body: string;
}

function request(base: string, iface: Interface, requestId: string, username: string, apiKey: string): { url: string; init: RequestInit } {
  const headers: Record<string, string> = { 'x-request-id': requestId };
  switch (iface) {
    case 'json':
      headers.authorization = `Basic ${Buffer.from(`${username}:${apiKey}`).toString('base64')}`;
      return { url: `${base}/api/json.aspx/CheckFrance/${PLATE}`, init: { headers } };
    case 'soap11':
      return {
        url: `${base}/api/reg.asmx`,
        init: {
          method: 'POST',
          headers: { ...headers, 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/CheckFrance"' },
          body:
            `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body>` +
            `<CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>${PLATE}</RegistrationNumber><username>${username}</username></CheckFrance>` +
            '</soap:Body></soap:Envelope>',
        },
      };
    case 'http-get':
      return { url: `${base}/api/reg.asmx/CheckFrance?RegistrationNumber=${PLATE}&username=${encodeURIComponent(username)}`, init: { headers } };
  }
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

export async function lookup(base: string, target: number, iface: Interface, requestId: string, username: string, apiKey: string): Promise<Outcome> {
  const { url, init } = request(base, iface, requestId, username, apiKey);
  try {
    const res = await fetch(url, init);
    return { requestId: res.headers.get('x-request-id') ?? requestId, interface: iface, target, status: res.status, body: await res.text() };
  } catch (error) {
    return { requestId, interface: iface, target, status: errorCode(error) === 'ECONNREFUSED' ? 'refused' : 'cut', body: String(error) };
  }
}

/** True when a 200 answer carries the vehicle, in the interface's own format. */
export function carriesData(outcome: Outcome): boolean {
  if (outcome.status !== 200) return false;
  if (outcome.interface === 'json') return (JSON.parse(outcome.body) as { Description?: unknown }).Description === VEHICLE.Description;
  const data = outcome.body.includes(VEHICLE.Description);
  return outcome.interface === 'soap11' ? data && outcome.body.includes('<CheckFranceResult>') : data;
}

/** True when a 500 answer is the interface's "Out of credit" error (and carries no data). */
export function outOfCredit(outcome: Outcome): boolean {
  return outcome.status === 500 && outcome.body.includes('Out of credit') && !outcome.body.includes(VEHICLE.Description);
}

export interface LoadOptions {
  /** Base URL of each server; request i goes to server i % bases().length. */
  readonly bases: () => readonly string[];
  readonly requests: number;
  readonly concurrency: number;
  readonly username: string;
  readonly apiKey: string;
  /** Prefix of the request ids, unique per load. */
  readonly prefix: string;
  /** Called after each outcome (e.g. to kill a server part-way). */
  readonly onOutcome?: (outcome: Outcome, done: number) => void;
}

/** `requests` lookups, `concurrency` at a time, interfaces and servers in turn. */
export async function runLoad(options: LoadOptions): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.requests) {
      const i = next++;
      const bases = options.bases();
      const target = i % bases.length;
      const iface = INTERFACES[Math.floor(i / bases.length) % INTERFACES.length] ?? 'json';
      const outcome = await lookup(bases[target] ?? '', target, iface, `${options.prefix}-${i}`, options.username, options.apiKey);
      outcomes.push(outcome);
      options.onOutcome?.(outcome, outcomes.length);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return outcomes;
}

/** The pids that logged a finished request (Fastify's "request completed", LOG_LEVEL=info). */
export function pidsServing(output: string): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split('\n')) {
    if (!line.includes('"request completed"')) continue;
    try {
      const entry = JSON.parse(line) as { pid?: unknown; req?: unknown; reqId?: unknown };
      if (typeof entry.pid === 'number') pids.add(entry.pid);
    } catch {
      // Not a log line.
    }
  }
  return pids;
}
