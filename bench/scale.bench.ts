/**
 * `npm run bench:scale`: JSON lookups (auth, a record read, a credit debit with its ledger row per
 * request) against the real service with WORKERS=1 and WORKERS=2 (cluster mode, one port), on
 * SQLite and on PostgreSQL, all in one run so the four figures share the machine's conditions.
 *
 * Every configuration gets its own fresh store, prepared with the project's own code, and runs
 * src/main.ts exactly as `npm start` does. autocannon runs in this process; its CPU is reported
 * next to the server's, because on a two-core machine the load generator takes a good part of one
 * core away from the workers. Server CPU counts the whole process tree (the cluster primary, its
 * workers and their debit threads); PostgreSQL's own processes are counted apart ("db CPU").
 *
 * Environment: BENCH_CONNECTIONS (32), BENCH_DURATION (8 s per measured run), BENCH_WARMUP (2 s),
 * BENCH_ROUNDS (2), BENCH_ENGINES (`sqlite,postgres`), PG_TEST_URL (the PostgreSQL server; each configuration gets a fresh database
 * on it; unreachable: the PostgreSQL rows are skipped loudly, or the bench fails with CI=true).
 * Exit code 0 whatever the figures; 1 when a server fails to start or a correctness check fails
 * (non-2xx answers, wrong bodies, credits not debited exactly once per answered lookup).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_EXAMPLE_PATH, SAMPLE_DATASET_PATH } from '../src/bootstrap/seed.js';
import { createServices } from '../src/services.js';
import { systemClock } from '../src/shared/clock.js';
import { openStorage } from '../src/storage/create-database.js';
import { freshPostgresDatabase, postgresAvailable } from '../test/helpers/engines.js';
import {
  balanceOf,
  BENCH_USERNAME,
  Checks,
  freePort,
  HOST,
  load,
  makeTempDir,
  positiveInt,
  runBench,
  running,
  settledBalance,
  startServer,
  START_CREDITS,
  stopServer,
  waitUntilAnswering,
  type LoadRun,
  type Server,
  type Target,
} from './bench-support.js';

/** A plate of the bundled sample dataset; each answer costs 1 credit. */
const LOOKUP_PATH = DEMO_EXAMPLE_PATH;
const WORKER_COUNTS = [1, 2] as const;

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc (Linux): a process tree, PostgreSQL's processes, the whole machine.

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return clockTicks;
}

interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
  readonly cpuSeconds: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    // After "(comm) ": field 3 (state), 4 (ppid) ... 14 (utime), 15 (stime); proc(5).
    const fields = stat.slice(close + 2).split(' ');
    return { pid, ppid: Number(fields[1]), comm: stat.slice(open + 1, close), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / ticksPerSecond() };
  } catch {
    return undefined;
  }
}

function allProcesses(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) stats.push(stat);
  }
  return stats;
}

interface CpuSample {
  /** CPU seconds of the server's process tree, per pid (a pid that exits mid-run drops out). */
  readonly tree: ReadonlyMap<number, number>;
  /** CPU seconds of the PostgreSQL backends serving the configuration's database, per pid. */
  readonly db: ReadonlyMap<number, number>;
  /** Busy CPU seconds of the whole machine. */
  readonly machine: number;
  /** CPU seconds in interrupts and softirqs (loopback TCP is mostly here), charged to no process. */
  readonly interrupts: number;
}

/**
 * True for a PostgreSQL backend serving `database`: its title reads "postgres: 15/main: user
 * database host(port) state". Other databases' backends (other benches and tests on the same server) and
 * the shared background processes (WAL writer, checkpointer) are not counted.
 */
function backendOf(pid: number, database: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().split(/\s+/).includes(database);
  } catch {
    return false;
  }
}

function sample(root: number | undefined, database: string | undefined): CpuSample {
  const processes = allProcesses();
  const children = new Map<number, ProcStat[]>();
  for (const p of processes) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const tree = new Map<number, number>();
  const queue = processes.filter((p) => p.pid === root);
  while (queue.length > 0) {
    const p = queue.shift() as ProcStat;
    tree.set(p.pid, p.cpuSeconds);
    queue.push(...(children.get(p.pid) ?? []));
  }
  const db = new Map(processes.filter((p) => p.comm === 'postgres' && database !== undefined && backendOf(p.pid, database)).map((p) => [p.pid, p.cpuSeconds] as const));
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const machine = [user, nice, system, irq, softirq, steal].reduce<number>((sum, v) => sum + (v ?? 0), 0) / ticksPerSecond();
  return { tree, db, machine, interrupts: ((irq ?? 0) + (softirq ?? 0)) / ticksPerSecond() };
}

/**
 * CPU seconds spent between two samples: a pid that appeared meanwhile (a new pooled connection's
 * backend) counts whole; one that exited meanwhile is lost.
 */
function spent(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

// ---------------------------------------------------------------------------------------------

type Engine = 'sqlite' | 'postgres';

interface Configuration {
  readonly engine: Engine;
  readonly workers: number;
  readonly target: Target;
  /** The PostgreSQL database name, for its backends' CPU. */
  readonly database: string | undefined;
}

/** Stops a configuration's server, then drops its PostgreSQL database; run at the end. */
const teardowns: Array<() => Promise<void>> = [];

interface Measured {
  readonly configuration: Configuration;
  readonly run: LoadRun;
  /** Cores busy, averaged over the run. */
  readonly serverCores: number;
  readonly serverUsPerRequest: number;
  readonly dbCores: number;
  readonly clientCores: number;
  readonly interruptCores: number;
  readonly otherCores: number;
  readonly processes: number;
}

/** A store with the bundled sample dataset and the bench account, for `databaseUrl` or SQLite. */
async function prepare(dataDir: string, databaseUrl: string | undefined): Promise<string> {
  const storage = await openStorage({ dataDir, databaseUrl });
  const services = createServices(storage, { clock: systemClock, requireApiKeyEverywhere: false });
  try {
    const summary = await services.importer.importFile(SAMPLE_DATASET_PATH, { skipInvalid: false, source: 'sample' });
    if (!summary.committed) throw new Error(`the sample dataset has ${summary.invalid} invalid lines`);
    return (await services.accounts.create(BENCH_USERNAME, START_CREDITS)).apiKey;
  } finally {
    await services.close();
    await storage.close();
  }
}

/** Worker processes of a cluster primary (direct children running node). */
function workerPids(server: Server): number[] {
  const pid = server.child.pid;
  return allProcesses()
    .filter((p) => p.ppid === pid && p.comm.startsWith('node'))
    .map((p) => p.pid);
}

async function startConfiguration(engine: Engine, workers: number): Promise<Configuration> {
  const dataDir = makeTempDir(`vehicle-lookup-scale-${engine}-`);
  const database = engine === 'postgres' ? await freshPostgresDatabase() : undefined;
  if (database) teardowns.push(database.drop);
  const apiKey = await prepare(dataDir, database?.url);
  const port = await freePort();
  const label = `${engine} ×${workers}`;
  const server = startServer(`vehicle-lookup ${label}`, 'src/main.ts', port, {
    HOST,
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: database?.url ?? '',
    BASE_URL: '',
    WORKERS: String(workers),
    // Request logging off (see bench:json); no offline VIN database unpacked into each store.
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    VIN_DECODER: 'off',
    GETCREDITS_ENABLED: 'true',
  });
  // Servers stop before their databases are dropped (teardowns run last to first).
  teardowns.push(() => stopServer(server));
  await waitUntilAnswering(server, '/healthz');
  if (workers > 1) {
    // /healthz answers as soon as one worker listens; wait for all of them to be up.
    const deadline = Date.now() + 60_000;
    while (workerPids(server).length < workers && Date.now() < deadline) await sleep(100);
    if (workerPids(server).length < workers) throw new Error(`${label}: ${workerPids(server).length} of ${workers} workers running:\n${server.output()}`);
    await sleep(2000);
  }
  const authorization = `Basic ${Buffer.from(`${BENCH_USERNAME}:${apiKey}`).toString('base64')}`;
  const name = database ? new URL(database.url).pathname.slice(1) : undefined;
  return { engine, workers, database: name, target: { label, server, path: LOOKUP_PATH, headers: { authorization } } };
}

async function measure(configuration: Configuration, connections: number, until: { seconds: number } | { requests: number }, expectBody?: string): Promise<Measured> {
  const root = configuration.target.server.child.pid;
  const before = sample(root, configuration.database);
  const run = await load(configuration.target, connections, until, expectBody);
  const after = sample(root, configuration.database);
  const window = Math.max(run.seconds, 1e-9);
  const server = spent(before.tree, after.tree);
  const db = spent(before.db, after.db);
  const client = run.clientCpu * run.seconds;
  return {
    configuration,
    run,
    serverCores: server / window,
    serverUsPerRequest: run.answered > 0 ? (server * 1e6) / run.answered : 0,
    dbCores: db / window,
    clientCores: client / window,
    interruptCores: (after.interrupts - before.interrupts) / window,
    // The machine figure covers the whole window, autocannon's idle tail included.
    otherCores: Math.max(0, after.machine - before.machine - (after.interrupts - before.interrupts) - server - db - client) / window,
    processes: after.tree.size,
  };
}

function pad(text: string, width: number, right = true): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

function table(rows: readonly Measured[]): string {
  const header = ['', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'server CPU', 'µs CPU/req', 'db CPU', 'client CPU', 'irq CPU', 'other CPU', 'procs'];
  const widths = [22, 8, 7, 7, 9, 8, 7, 11, 11, 8, 11, 8, 10, 6];
  const cores = (v: number): string => `${Math.round(v * 100)}%`;
  const line = (cells: readonly string[]): string => cells.map((c, i) => pad(c, widths[i] ?? 8, i > 0)).join(' ');
  return [
    line(header),
    ...rows.map((m) =>
      line([
        m.run.label,
        m.run.rps.toFixed(0),
        String(m.run.p50),
        String(m.run.p99),
        String(m.run.answered),
        String(m.run.non2xx),
        String(m.run.errors),
        cores(m.serverCores),
        m.serverUsPerRequest.toFixed(0),
        cores(m.dbCores),
        cores(m.clientCores),
        cores(m.interruptCores),
        cores(m.otherCores),
        String(m.processes),
      ]),
    ),
  ].join('\n');
}

async function main(): Promise<number> {
  const connections = positiveInt('BENCH_CONNECTIONS', 32);
  const duration = positiveInt('BENCH_DURATION', 8);
  const warmup = positiveInt('BENCH_WARMUP', 2);
  const rounds = positiveInt('BENCH_ROUNDS', 2);
  const checks = new Checks();

  console.log(`scale benchmark: GET ${LOOKUP_PATH} (a debit and its ledger row per answer), WORKERS=1 and 2`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs; ${connections} connections, ${duration} s per run, ${warmup} s warm-up, ${rounds} round(s)`);

  const wanted = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((e) => e.trim());
  const engines: Engine[] = [];
  if (wanted.includes('sqlite')) engines.push('sqlite');
  if (wanted.includes('postgres')) {
    if (await postgresAvailable()) engines.push('postgres');
    else console.log('\n  *** SKIPPED: the PostgreSQL rows (see the warning above) ***\n');
  }

  const configurations: Configuration[] = [];
  try {
    for (const engine of engines) for (const workers of WORKER_COUNTS) configurations.push(await startConfiguration(engine, workers));

    console.log('\ncorrectness');
    const amounts = new Map<Configuration, number>();
    for (const configuration of configurations) {
      // One real lookup: every warm-up answer must be this body (its ImageUrl names the server's port).
      const probe = await fetch(`${configuration.target.server.baseUrl}${LOOKUP_PATH}`, { headers: configuration.target.headers });
      const body = await probe.text();
      if (probe.status !== 200) throw new Error(`${configuration.target.label} answered ${probe.status} to ${LOOKUP_PATH}: ${body}`);
      const warm = await measure(configuration, connections, { seconds: warmup }, body);
      const { run } = warm;
      checks.check(run.non2xx === 0 && run.errors === 0 && run.mismatches === 0, `${run.label} warm-up: ${run.answered} answers, all 2xx with the expected body (non-2xx ${run.non2xx}, errors ${run.errors}, wrong bodies ${run.mismatches})`);
      amounts.set(configuration, Math.max(connections, Math.round(run.rps * duration)));
    }
    if (checks.failed()) return 1;

    // Runs sized by request count (exact credit check: see measureRounds in bench-support),
    // configurations alternating, each keeping its fastest round.
    const runs: Measured[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      for (const configuration of configurations) {
        const server = configuration.target.server;
        const balance = await settledBalance(server, BENCH_USERNAME);
        const amount = amounts.get(configuration) ?? connections;
        const measured = await measure(configuration, connections, { requests: amount });
        const run = { ...measured.run, label: `${configuration.target.label} #${round}` };
        runs.push({ ...measured, run });
        amounts.set(configuration, Math.max(connections, Math.round(run.rps * duration)));
        checks.check(run.answered === amount && run.non2xx === 0 && run.errors === 0, `${run.label}: ${run.answered}/${amount} answered, non-2xx ${run.non2xx}, errors ${run.errors}`);
        const after = await balanceOf(server, BENCH_USERNAME);
        checks.check(balance - after === run.ok, `${run.label}: credits ${balance} -> ${after}, debited ${balance - after} for ${run.ok} 2xx lookups`);
        checks.check(running(server), `${run.label}: the service is still running`);
      }
    }

    const best = configurations.map((configuration) => {
      const own = runs.filter((m) => m.configuration === configuration);
      const fastest = own.reduce((a, b) => (b.run.rps > a.run.rps ? b : a));
      return { ...fastest, run: { ...fastest.run, label: configuration.target.label } };
    });

    console.log('\nevery run (CPU columns in cores, 100% = one core busy for the whole run; server = the');
    console.log('process tree: cluster primary, workers, their debit threads; db = PostgreSQL processes;');
    console.log('client = autocannon in this process; irq = interrupts and softirqs, mostly loopback TCP, charged');
    console.log('to no process; other = every other process on the machine meanwhile)');
    console.log(table(runs));
    console.log(`\nbest of ${rounds} round(s)`);
    console.log(table(best));
    console.log('');
    for (const engine of engines) {
      const one = best.find((m) => m.configuration.engine === engine && m.configuration.workers === 1);
      const two = best.find((m) => m.configuration.engine === engine && m.configuration.workers === 2);
      if (!one || !two) continue;
      console.log(
        `${engine}: 2 workers / 1 worker = ${(two.run.rps / one.run.rps).toFixed(2)} (${two.run.rps.toFixed(0)} / ${one.run.rps.toFixed(0)} req/s); ` +
          `server CPU per request ${two.serverUsPerRequest.toFixed(0)} / ${one.serverUsPerRequest.toFixed(0)} µs`,
      );
    }
    const clientShare = best.reduce((sum, m) => sum + m.clientCores, 0) / best.length;
    console.log(
      `\n${cpus().length} CPUs: the load generator alone kept ${Math.round(clientShare * 100)}% of a core busy on average, so the service ` +
        `had at most ${Math.max(0, cpus().length - clientShare).toFixed(1)} cores left (less the database on PostgreSQL). A second ` +
        'worker can only use what is left; compare "other CPU" between runs to see how disturbed each was.',
    );
  } finally {
    for (const teardown of teardowns.splice(0).reverse()) await teardown();
  }

  if (checks.failed()) {
    console.log(`\ncorrectness checks failed: ${checks.failures.length}`);
    return 1;
  }
  return 0;
}

runBench('bench:scale', main);
