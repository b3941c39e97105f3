/**
 * What `npm run bench:json` and `npm run bench:soap` share: server child processes (started with
 * `node --import tsx`, stopped on every exit path), a store prepared with the project's own code,
 * the credits check, autocannon runs with CPU accounting from /proc, and the result table.
 *
 * Each server runs in its own child process so the load generator (autocannon, in the bench
 * process) never shares the server's event loop.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { SAMPLE_DATASET_PATH } from '../src/bootstrap/seed.js';
import { createServices } from '../src/services.js';
import { systemClock } from '../src/shared/clock.js';
import { openStorage } from '../src/storage/create-database.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const HOST = '127.0.0.1';
export const BENCH_USERNAME = 'bench';
/** Far more than any run can spend, so a refusal for lack of credit can only be a bug. */
export const START_CREDITS = 100_000_000;
const STARTUP_TIMEOUT_MS = 60_000;

export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (got "${raw}")`);
  return value;
}

/** PASS/FAIL lines for correctness checks; any failure makes the bench exit 1. */
export class Checks {
  readonly failures: string[] = [];

  check(ok: boolean, what: string): boolean {
    console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) this.failures.push(what);
    return ok;
  }

  /** A method, not a getter: the answer changes between calls, which narrowing would not see. */
  failed(): boolean {
    return this.failures.length > 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Child processes and temporary files, cleaned up on every exit path.

export interface Server {
  readonly name: string;
  readonly baseUrl: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  /** The last few kilobytes of the child's stdout and stderr, for failure reports. */
  output(): string;
}

const servers: Server[] = [];

/** The CPUs this process may run on, from /proc (Linux); every online CPU elsewhere. */
function allowedCpus(): number[] {
  try {
    const list = /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '';
    return list.split(',').flatMap((part) => {
      const [from, to = from] = part.trim().split('-').map(Number);
      if (from === undefined || to === undefined || !Number.isInteger(from) || !Number.isInteger(to)) return [];
      return Array.from({ length: to - from + 1 }, (_, i) => from + i);
    });
  } catch {
    return cpus().map((_, i) => i);
  }
}

/** The CPU every server is started on (pinCores), or undefined to let the scheduler place them. */
let serverCpu: number | undefined;

/**
 * With BENCH_PIN=true: puts this process (the load generator) on the first CPU it may use and every
 * server started afterwards on the second, with `taskset`, so the scheduler does not move a server and autocannon
 * between the cores of a 2-core machine mid-run. Returns a line saying what was done.
 *
 * Off by default: on the development machine it made no difference that outlasted the machine's
 * own drift (bench:soap, ours / node-soap per round: pinned 2.08-3.21 and 2.59-3.19 over two runs,
 * unpinned 2.70-2.87 in the run between them), and confining a server's GC and libuv threads to the
 * core of its event loop may weigh on one server more than another. Every server of a bench is
 * started on the same CPU; only one is under load at a time. Not for benches that run several server processes at once
 * (bench:scale).
 */
export function pinCores(): string {
  if (process.env.BENCH_PIN?.trim() !== 'true') return 'cores: placed by the scheduler (BENCH_PIN=true pins the load generator and the servers to a core each)';
  // The CPUs this process may use (a container's cpuset need not start at 0 or be contiguous).
  const [client, server] = allowedCpus();
  if (client === undefined || server === undefined) return 'cores: not pinned (fewer than two CPUs allowed)';
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(client), String(process.pid)], { stdio: 'ignore' });
  } catch {
    return 'cores: not pinned (taskset failed or is missing; it is in util-linux)';
  }
  serverCpu = server;
  return `cores: the load generator on CPU ${client}, each server on CPU ${server} (BENCH_PIN=true)`;
}

const tempDirs: string[] = [];

export function running(server: Server): boolean {
  return server.child.exitCode === null && server.child.signalCode === null;
}

/**
 * Starts `node [nodeArgs] --import tsx script`: no `npx tsx` wrapper process, so the pid we kill
 * and measure is the server itself. `port` only builds baseUrl; the script reads its own from env.
 */
export function startServer(name: string, script: string, port: number, env: Record<string, string>, nodeArgs: readonly string[] = []): Server {
  // taskset execs node, so the pid is the server's own either way.
  const command = [process.execPath, ...nodeArgs, '--import', 'tsx', script];
  const [file, ...args] = serverCpu === undefined ? command : ['taskset', '-c', String(serverCpu), ...command];
  const child = spawn(file ?? process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-8192);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
    // Could not spawn at all: no 'exit' follows (Node sets exitCode, so running() is false), and
    // without a listener the 'error' would be an uncaught exception instead of a start-up failure.
    child.once('error', (error) => {
      keep(Buffer.from(`spawn failed: ${error.message}\n`));
      resolve();
    });
  });
  const server: Server = { name, baseUrl: `http://${HOST}:${port}`, child, exited, output: () => tail };
  servers.push(server);
  return server;
}

export async function stopServer(server: Server): Promise<void> {
  if (!running(server)) return;
  server.child.kill('SIGTERM');
  await Promise.race([server.exited, sleep(5000)]);
  if (running(server)) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

/** A new temporary directory, removed by cleanup() (or at exit). */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

let cleaning: Promise<void> | undefined;
/** Stops every server started here and removes every temporary directory; idempotent. */
export function cleanup(): Promise<void> {
  cleaning ??= Promise.all(servers.map(stopServer)).then(removeTempDirs);
  return cleaning;
}

// Last resort for paths that skip cleanup() (process.exit elsewhere, a crash): nothing async runs
// in 'exit', so the children get SIGKILL.
process.on('exit', () => {
  for (const server of servers) if (running(server)) server.child.kill('SIGKILL');
  removeTempDirs();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the servers`);
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

/** Runs a bench's main, then cleans up; exit code 1 when it throws. */
export function runBench(name: string, main: () => Promise<number>): void {
  main().then(
    async (code) => {
      await cleanup();
      process.exitCode = code;
    },
    async (error: unknown) => {
      console.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
      await cleanup();
      process.exitCode = 1;
    },
  );
}

/** A port nobody listens on right now (the OS picks it; we release it for the child). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => {
        if (port === 0) reject(new Error('could not find a free port'));
        else resolve(port);
      });
    });
  });
}

/** Polls `path` (GET unless `request` says otherwise) until it answers 2xx. */
export async function waitUntilAnswering(server: Server, path: string, request: RequestInit = {}): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!running(server)) {
      throw new Error(`${server.name} exited during start-up (code ${server.child.exitCode ?? server.child.signalCode ?? '?'}):\n${server.output()}`);
    }
    try {
      const response = await fetch(`${server.baseUrl}${path}`, request);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`${server.name} did not answer ${path} within ${STARTUP_TIMEOUT_MS / 1000} s:\n${server.output()}`);
}

// ---------------------------------------------------------------------------------------------
// The real service on a store prepared with the project's own services before it opens it.

export interface BenchAccount {
  readonly username: string;
  readonly apiKey: string;
  readonly sampleRecords: number;
}

/** Imports the bundled sample dataset and creates an account with START_CREDITS. */
export async function prepareStore(dataDir: string): Promise<BenchAccount> {
  const storage = await openStorage({ dataDir });
  try {
    const services = createServices(storage, { clock: systemClock, requireApiKeyEverywhere: false });
    const summary = await services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    if (!summary.committed) throw new Error(`the sample dataset has ${summary.invalid} invalid lines`);
    const { apiKey } = await services.accounts.create(BENCH_USERNAME, START_CREDITS);
    return { username: BENCH_USERNAME, apiKey, sampleRecords: summary.imported };
  } finally {
    await storage.close();
  }
}

/**
 * The real entry point (src/main.ts), exactly as `npm start` runs it, on `dataDir`. Request
 * logging at info level is off (LOG_LEVEL=warn): at info Fastify writes two log lines per request
 * to stdout, the same cost for any route, which would measure the logger and the pipe to the bench
 * rather than the lookup.
 */
export async function startService(dataDir: string, nodeArgs: readonly string[] = []): Promise<Server> {
  const port = await freePort();
  const service = startServer(
    'vehicle-lookup (src/main.ts)',
    'src/main.ts',
    port,
    {
      HOST,
      PORT: String(port),
      DATA_DIR: dataDir,
      // The embedded store of DATA_DIR and links built from the request, whatever the caller's shell says.
      DATABASE_URL: '',
      BASE_URL: '',
      LOG_LEVEL: 'warn',
      SEED_DEMO: 'false',
      GETCREDITS_ENABLED: 'true',
    },
    nodeArgs,
  );
  await waitUntilAnswering(service, '/healthz');
  return service;
}

export async function balanceOf(service: Server, username: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/ajax/getcredits.aspx?username=${encodeURIComponent(username)}`);
  const text = await response.text();
  const balance = Number(text);
  if (!response.ok || !Number.isInteger(balance)) throw new Error(`getcredits answered ${response.status} "${text}"`);
  return balance;
}

/**
 * The balance once the service has finished every lookup in flight. A warm-up that ends on time
 * drops its connections with requests still being served; those requests still debit.
 */
export async function settledBalance(service: Server, username: string): Promise<number> {
  let previous = await balanceOf(service, username);
  for (;;) {
    await sleep(250);
    const current = await balanceOf(service, username);
    if (current === previous) return current;
    previous = current;
  }
}

// ---------------------------------------------------------------------------------------------
// Load.

export interface Target {
  readonly label: string;
  readonly server: Server;
  readonly path: string;
  readonly method?: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer;
  /**
   * Sends a new Idempotency-Key with every request (`bench-<pid>-<n>`): each is a first, charged
   * lookup that claims its key and stores its answer, the keyed path's whole cost.
   */
  readonly idempotencyKeys?: true;
}

/**
 * Which lookup targets a bench runs (BENCH_IDEMPOTENCY_KEY): `both` (the default), `absent` (no
 * Idempotency-Key only) or `present` (a new key per request only), e.g. to profile one path alone.
 */
export function idempotencyKeyTargets(): { readonly absent: boolean; readonly present: boolean } {
  const raw = process.env.BENCH_IDEMPOTENCY_KEY?.trim() ?? '';
  if (raw === '' || raw === 'both') return { absent: true, present: true };
  if (raw === 'absent' || raw === 'present') return { absent: raw === 'absent', present: raw === 'present' };
  throw new Error(`BENCH_IDEMPOTENCY_KEY must be both, absent or present (got "${raw}")`);
}

let idempotencyKeyCount = 0;
/** A key no other request of this bench sends (every bench prepares a fresh store). */
function nextIdempotencyKey(): string {
  idempotencyKeyCount += 1;
  return `bench-${process.pid}-${idempotencyKeyCount}`;
}

export interface LoadRun {
  readonly label: string;
  /** Completed requests per second over the run: answered requests / (first send to last answer). */
  readonly rps: number;
  readonly seconds: number;
  readonly answered: number;
  readonly ok: number;
  readonly non2xx: number;
  /** Connection errors and timeouts. */
  readonly errors: number;
  /** Bodies that differed from the expected one (only checked when asked). */
  readonly mismatches: number;
  readonly p50: number;
  readonly p99: number;
  /** Server process CPU time / wall time (1 = one core busy), or undefined where /proc is missing. */
  readonly serverCpu: number | undefined;
  /**
   * Server CPU microseconds per answered request: unlike req/s, barely moved by other load on the
   * machine, so it is the figure to compare between runs and machines.
   */
  readonly serverUsPerRequest: number | undefined;
  /** CPU time of this process (autocannon) / wall time. */
  readonly clientCpu: number;
  /** Cores kept busy by every other process during the run; high values mean a disturbed run. */
  readonly otherCpu: number | undefined;
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return clockTicks;
}

/** User + system CPU seconds of a process, from /proc (Linux); undefined elsewhere. */
function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "(comm) " comes field 3 (state); utime and stime are fields 14 and 15 (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

/** CPU seconds all processes spent busy (user, nice, system, irq, softirq, steal), from /proc/stat. */
function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, v) => sum + (v ?? 0), 0);
    return busy / ticksPerSecond();
  } catch {
    return undefined;
  }
}

export async function load(
  target: Target,
  connections: number,
  until: { readonly seconds: number } | { readonly requests: number },
  expectBody?: string,
): Promise<LoadRun> {
  const serverBefore = processCpuSeconds(target.server.child.pid);
  const machineBefore = machineBusySeconds();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  let lastAnswer = started;
  let keyedMismatches = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${target.server.baseUrl}${target.path}`,
        connections,
        method: target.method ?? 'GET',
        headers: target.headers,
        ...(target.body !== undefined ? { body: target.body } : {}),
        ...(target.idempotencyKeys
          ? {
              requests: [
                {
                  setupRequest: (request: autocannon.Request): autocannon.Request => ({
                    ...request,
                    headers: { ...request.headers, 'idempotency-key': nextIdempotencyKey() },
                  }),
                  // autocannon refuses expectBody beside `requests`: the body is compared here.
                  ...(expectBody !== undefined
                    ? {
                        onResponse: (_status: number, body: string): void => {
                          if (body !== expectBody) keyedMismatches += 1;
                        },
                      }
                    : {}),
                },
              ],
            }
          : expectBody !== undefined
            ? { expectBody }
            : {}),
        ...('seconds' in until ? { duration: until.seconds } : { amount: until.requests }),
      },
      // autocannon types its error as any; it is only ever an Error or nothing.
      (error: unknown, finished: autocannon.Result) => {
        if (error) reject(error instanceof Error ? error : new Error(`autocannon failed: ${JSON.stringify(error)}`));
        else resolve(finished);
      },
    );
    instance.on('response', () => {
      lastAnswer = performance.now();
    });
  });
  // autocannon notices the end at its next one-second tick. Server and client are idle in that
  // tail, so their CPU is divided by the time requests were flowing; other processes are not, so
  // theirs is divided by the whole window.
  const seconds = (lastAnswer - started) / 1000;
  const window = (performance.now() - started) / 1000;
  const serverAfter = processCpuSeconds(target.server.child.pid);
  const machineAfter = machineBusySeconds();
  const clientUsage = process.cpuUsage(clientBefore);
  const client = (clientUsage.user + clientUsage.system) / 1e6;
  const server = serverBefore !== undefined && serverAfter !== undefined ? serverAfter - serverBefore : undefined;
  const machine = machineBefore !== undefined && machineAfter !== undefined ? machineAfter - machineBefore : undefined;
  const answered = result['2xx'] + result.non2xx;
  const perSecond = (value: number | undefined): number | undefined => (value !== undefined && seconds > 0 ? value / seconds : undefined);
  return {
    label: target.label,
    rps: seconds > 0 ? answered / seconds : 0,
    seconds,
    answered,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    mismatches: result.mismatches + keyedMismatches,
    p50: result.latency.p50,
    p99: result.latency.p99,
    serverCpu: perSecond(server),
    serverUsPerRequest: server !== undefined && answered > 0 ? (server * 1e6) / answered : undefined,
    clientCpu: perSecond(client) ?? 0,
    otherCpu: machine !== undefined && server !== undefined && window > 0 ? Math.max(0, machine - server - client) / window : undefined,
  };
}

export interface RoundsOptions {
  readonly connections: number;
  /** Seconds each measured run should last, at the latest rate seen for its target. */
  readonly duration: number;
  readonly rounds: number;
  /** Requests for the first round of each target (from its warm-up rate). */
  readonly firstAmounts: ReadonlyMap<Target, number>;
  /** Called after every run, e.g. to check the credits it debited. */
  readonly afterRun?: (target: Target, run: LoadRun) => Promise<void>;
}

export interface RoundsResult {
  readonly runs: ReadonlyArray<{ readonly target: Target; readonly run: LoadRun }>;
  /** The fastest run of a target, labelled with the target's label. */
  best(target: Target): LoadRun;
  /**
   * Throughput of `a` over `b` in each round (a round loads every target once, in turn, so the two
   * ran close together): on a machine whose speed drifts, the spread of these says how far the
   * best-of ratio can be trusted.
   */
  roundRatios(a: Target, b: Target): number[];
}

/**
 * Measured runs, sized by request count (about `duration` seconds at the latest rate seen) rather
 * than by time: a timed run drops its connections with up to one request each still in the
 * server, and those would debit credits no client saw answered, so a credit check could not be
 * exact.
 *
 * Targets alternate (a, b, c, a, b, c...) and each keeps its fastest round: on a shared machine
 * other load only ever slows a run down, so the fastest round is the least disturbed one, and
 * alternating exposes every target to the same drift.
 */
export async function measureRounds(targets: readonly Target[], checks: Checks, options: RoundsOptions): Promise<RoundsResult> {
  const runs: Array<{ readonly target: Target; readonly run: LoadRun }> = [];
  const amounts = new Map(options.firstAmounts);
  for (let round = 1; round <= options.rounds; round += 1) {
    for (const target of targets) {
      const amount = amounts.get(target) ?? options.connections;
      const run = { ...(await load(target, options.connections, { requests: amount })), label: `${target.label} #${round}` };
      runs.push({ target, run });
      // The warm-up rate is a cold-JIT estimate; later rounds are sized from the latest real one.
      amounts.set(target, Math.max(options.connections, Math.round(run.rps * options.duration)));
      checks.check(
        run.answered === amount && run.non2xx === 0 && run.errors === 0,
        `${run.label}: ${run.answered}/${amount} answered, non-2xx ${run.non2xx}, errors ${run.errors}`,
      );
      if (options.afterRun) await options.afterRun(target, run);
    }
  }
  return {
    runs,
    best: (target) => ({
      ...runs
        .filter((r) => r.target === target)
        .map((r) => r.run)
        .reduce((a, b) => (b.rps > a.rps ? b : a)),
      label: target.label,
    }),
    roundRatios: (a, b) => {
      const of = (target: Target): LoadRun[] => runs.filter((r) => r.target === target).map((r) => r.run);
      const theirs = of(b);
      return of(a).map((run, i) => run.rps / (theirs[i]?.rps ?? Number.NaN));
    },
  };
}

/** `name = r1, r2, ... per round (median m)`, for the lines under a benchmark's ratios. */
export function roundRatiosLine(name: string, ratios: readonly number[]): string {
  const sorted = [...ratios].sort((x, y) => x - y);
  const middle = sorted.length / 2;
  const median = sorted.length % 2 === 1 ? (sorted[Math.floor(middle)] ?? Number.NaN) : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
  return `${name} = ${ratios.map((r) => r.toFixed(2)).join(', ')} round by round (median ${median.toFixed(2)})`;
}

/**
 * Warm-up with every body checked, then the measured rounds, each run of `paid` followed by the
 * exact-credit check. Undefined when a warm-up check failed (the bench then stops).
 */
export async function warmUpAndMeasure(
  targets: readonly Target[],
  checks: Checks,
  options: {
    readonly connections: number;
    readonly warmupSeconds: number;
    readonly duration: number;
    readonly rounds: number;
    readonly expectBody: (target: Target) => string;
    /** The targets that debit credits, their service and the account they spend. */
    readonly paid: { readonly targets: readonly Target[]; readonly service: Server; readonly username: string };
  },
): Promise<RoundsResult | undefined> {
  const { connections, duration, rounds } = options;
  const firstAmounts = await warmUp(targets, checks, { connections, seconds: options.warmupSeconds, duration, expectBody: options.expectBody });
  if (checks.failed()) return undefined;
  // Alternating rounds sized by request count, each target keeping its fastest (see measureRounds).
  return measureRounds(targets, checks, {
    connections,
    duration,
    rounds,
    firstAmounts,
    afterRun: await creditCheck(options.paid.service, options.paid.username, options.paid.targets, checks),
  });
}

/** The bare Fastify route of a benchmark (bench/bare-route.ts), answering `body` as `contentType`. */
export async function startBareRoute(options: {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly bodyFile: string;
  readonly contentType: string;
}): Promise<Server> {
  const port = await freePort();
  const bare = startServer('bare route (bench/bare-route.ts)', 'bench/bare-route.ts', port, {
    BARE_HOST: HOST,
    BARE_PORT: String(port),
    BARE_METHOD: options.method,
    BARE_PATH: options.path,
    BARE_BODY_FILE: options.bodyFile,
    BARE_CONTENT_TYPE: options.contentType,
  });
  // The route answers only its own method; a POST is answered whatever its body.
  await waitUntilAnswering(bare, options.path, options.method === 'POST' ? { method: 'POST', headers: { 'content-type': 'text/xml' }, body: '' } : {});
  return bare;
}

/**
 * Warm-up runs (JIT, SQLite page cache) with every body compared to the expected one. Returns the
 * request count for each target's first measured run (its warm-up rate times `duration`).
 */
export async function warmUp(
  targets: readonly Target[],
  checks: Checks,
  options: { readonly connections: number; readonly seconds: number; readonly duration: number; readonly expectBody: (target: Target) => string },
): Promise<Map<Target, number>> {
  const firstAmounts = new Map<Target, number>();
  for (const t of targets) {
    const warm = await load(t, options.connections, { seconds: options.seconds }, options.expectBody(t));
    checks.check(
      warm.answered > 0 && warm.non2xx === 0 && warm.errors === 0 && warm.mismatches === 0,
      `${t.label} warm-up: ${warm.answered} answers, all 2xx with the expected body (non-2xx ${warm.non2xx}, errors ${warm.errors}, wrong bodies ${warm.mismatches})`,
    );
    firstAmounts.set(t, Math.max(options.connections, Math.round(warm.rps * options.duration)));
  }
  return firstAmounts;
}

/**
 * An `afterRun` for measureRounds that checks every answered lookup of `targets` debited exactly one
 * credit: the settled balance (debits of answers already sent are written) must have dropped by
 * the run's 2xx count. Call it once the warm-ups are over.
 */
export async function creditCheck(
  service: Server,
  username: string,
  targets: readonly Target[],
  checks: Checks,
): Promise<(t: Target, run: LoadRun) => Promise<void>> {
  let balance = await settledBalance(service, username);
  return async (t, run) => {
    if (!targets.includes(t)) return;
    const after = await settledBalance(service, username);
    checks.check(balance - after === run.ok, `${run.label}: credits ${balance} -> ${after}, debited ${balance - after} for ${run.ok} 2xx lookups`);
    balance = after;
  };
}

// ---------------------------------------------------------------------------------------------
// Output.

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

function percent(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${Math.round(value * 100)}%`;
}

export function table(rows: readonly LoadRun[]): string {
  const header = ['', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'seconds', 'server CPU', 'µs CPU/req', 'client CPU', 'other CPU'];
  const first = Math.max(16, ...rows.map((r) => r.label.length));
  const widths = [first, 8, 7, 7, 9, 8, 7, 8, 11, 11, 11, 10];
  const line = (cells: readonly string[]): string => cells.map((c, i) => pad(c, widths[i] ?? 10, i > 0)).join(' ');
  return [
    line(header),
    ...rows.map((r) =>
      line([
        r.label,
        r.rps.toFixed(0),
        String(r.p50),
        String(r.p99),
        String(r.answered),
        String(r.non2xx),
        String(r.errors),
        r.seconds.toFixed(2),
        percent(r.serverCpu),
        r.serverUsPerRequest === undefined ? 'n/a' : r.serverUsPerRequest.toFixed(1),
        percent(r.clientCpu),
        percent(r.otherCpu),
      ]),
    ),
  ].join('\n');
}

export const TABLE_LEGEND = [
  'server CPU: share of one core; µs CPU/req: server CPU time per answer;',
  'other CPU: cores other processes used meanwhile, high values mean a disturbed run',
].join('\n');
