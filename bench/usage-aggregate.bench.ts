/**
 * `npm run bench:usage`: the operator overview's aggregates on a fresh store holding a million
 * ledger rows over a thousand accounts and 90 days (issue 16: "fast on a million ledger rows;
 * index it; measure it"), with its indexes and, in the same run, without them (the baseline).
 *
 * Timed, each as the median of BENCH_RUNS runs after one warm-up:
 * - LedgerQueries.usage over 30 days for the busiest account (about a tenth of the rows: the
 *   accounts' sizes are skewed as real customers' are) and for a typical one;
 * - LedgerQueries.allAccountsUsage over 30 days and over the whole 90;
 * - the overview's accounts close to zero (AccountRepository.lowBalance: a scan of accounts);
 * - LookupStatsRepository.byInterface over 30 days, on 90 days of hourly rows (6 interfaces x 8
 *   operations x 2 outcomes per hour, more series than most deployments have).
 * Then ledger_kind_usage and ledger_account_usage are dropped and the usage queries timed again.
 * Each state prints the engine's plan. The answers of both states are compared (exit 1 if not equal).
 *
 * Rows are generated inside the engine (one INSERT ... SELECT from a generated series): this
 * measures reads, not the debit path. SQLite always; PostgreSQL when BENCH_PG_URL names a server
 * (a database is created there for the run and dropped after). ROWS, ACCOUNTS, BENCH_RUNS override.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { AccountRepository } from '../src/accounts/account.repository.js';
import { LedgerQueries } from '../src/accounts/ledger-queries.js';
import { LookupStatsRepository } from '../src/ops/lookup-stats.repository.js';
import { openStorage, type Storage } from '../src/storage/create-database.js';
import { positiveInt } from './bench-support.js';

const ROWS = positiveInt('ROWS', 1_000_000);
const ACCOUNTS = positiveInt('ACCOUNTS', 1000);
const RUNS = positiveInt('BENCH_RUNS', 5);
const DAYS = 90;
const START = Date.parse('2026-08-01T00:00:00.000Z');
const END = START + DAYS * 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
/** The last 30 days of the history, as the overview asks for them. */
const MONTH = { from: iso(END - 30 * 86_400_000), to: iso(END) };
const ALL = { from: iso(START), to: iso(END) };
const OPERATIONS = ['CheckFrance', 'CheckUSA', 'Check', 'CheckSpain', 'VinCheck', 'UKMOT', 'CheckNetherlands', 'CheckNorway'];
const INTERFACES = ['json', 'soap11', 'soap12', 'http-get', 'http-post', 'console'];

/** Correctness failures; any makes the bench exit 1. */
const failures: string[] = [];

/**
 * What differs between the engines here: the generated series and ISO-8601 text from a number of
 * seconds (the format every timestamp in the store has, `2026-08-01T00:00:00.000Z`).
 */
interface Generator {
  readonly series: (n: number) => string;
  readonly isoFromSeconds: (seconds: string) => string;
  /**
   * Fresh statistics for the planner. PostgreSQL also vacuums, as autovacuum does on a live
   * ledger: its index-only scans need the visibility map that a vacuum writes.
   */
  readonly settle: string;
}

const SQLITE: Generator = {
  series: (n) => `with recursive g(i) as (select 0 union all select i + 1 from g where i < ${n - 1})`,
  isoFromSeconds: (s) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${s}, 'unixepoch')`,
  settle: 'analyze',
};
const POSTGRES: Generator = {
  series: (n) => `with g(i) as (select generate_series(0, ${n - 1})::bigint)`,
  isoFromSeconds: (s) => `to_char(to_timestamp(${s}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  settle: 'vacuum analyze',
};

async function fill(storage: Storage, gen: Generator): Promise<{ busiest: number; typical: number }> {
  const { db } = storage;
  await sql.raw(`${gen.series(ACCOUNTS)}
    insert into accounts (username, credits, disabled, require_api_key, created_at)
    select 'account-' || i, (i * 37) % 2000, 0, 0, '2026-01-01T00:00:00.000Z' from g`).execute(db);
  const first = (await db.selectFrom('accounts').select((eb) => eb.fn.min('id').as('id')).executeTakeFirstOrThrow()).id;
  // A pseudo-random x in 0..999 per row (a multiplicative hash of its number); the account is
  // ACCOUNTS * (x / 1000)^3 in integer arithmetic (truncated alike on both engines), so the first
  // account has about a tenth of the rows and most have a few hundred. One row in twenty is a
  // top-up. Rows are spread evenly over the 90 days in id order, as a ledger's are.
  const x = `(((i * 2654435761) % 4294967296) % 1000)`;
  const secondsPerRow = (DAYS * 86_400) / ROWS;
  const operation = `case (i / 3) % ${OPERATIONS.length} ${OPERATIONS.map((op, k) => `when ${k} then '${op}'`).join(' ')} end`;
  await sql.raw(`${gen.series(ROWS)}
    insert into ledger (account_id, kind, operation, interface, query, delta, balance_after, request_id, created_at)
    select ${first} + (${x} * ${x} * ${x} * ${ACCOUNTS}) / 1000000000,
      case when i % 20 = 0 then 'topup' else 'debit' end,
      case when i % 20 = 0 then null else ${operation} end,
      'json', 'AB12CDE',
      case when i % 20 = 0 then 100 when i % 7 = 0 then -2 else -1 end,
      0, null,
      ${gen.isoFromSeconds(`${START / 1000} + i * ${secondsPerRow}`)}
    from g`).execute(db);
  // Hourly lookup statistics: every hour of the 90 days, each interface, operation and outcome.
  const perHour = INTERFACES.length * OPERATIONS.length * 2;
  const hours = DAYS * 24;
  await sql.raw(`${gen.series(hours * perHour)}
    insert into lookup_stats (hour, interface, operation, outcome, count)
    select ${gen.isoFromSeconds(`${START / 1000} + (i / ${perHour}) * 3600`)},
      case (i / ${OPERATIONS.length * 2}) % ${INTERFACES.length} ${INTERFACES.map((x, k) => `when ${k} then '${x}'`).join(' ')} end,
      case (i / 2) % ${OPERATIONS.length} ${OPERATIONS.map((op, k) => `when ${k} then '${op}'`).join(' ')} end,
      case when i % 2 = 0 then 'success' else 'not_found' end,
      1 + i % 50
    from g`).execute(db);
  await sql.raw(gen.settle).execute(db);
  const busiest = await db.selectFrom('ledger').select(['account_id', (eb) => eb.fn.countAll().as('n')]).groupBy('account_id').orderBy('n', 'desc').limit(1).executeTakeFirstOrThrow();
  return { busiest: busiest.account_id, typical: first + Math.floor(ACCOUNTS / 2) };
}

async function time<T>(label: string, work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  let result = await work();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    result = await work();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? Number.NaN;
  console.log(`  ${label.padEnd(52)} median ${median.toFixed(1).padStart(8)} ms  (min ${times[0]?.toFixed(1)}, max ${times.at(-1)?.toFixed(1)})`);
  return { result, ms: median };
}

async function plan(storage: Storage, label: string, query: CompiledQuery): Promise<void> {
  const text = storage.engine === 'sqlite' ? `explain query plan ${query.sql}` : `explain ${query.sql}`;
  const { rows } = await storage.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, [...query.parameters]));
  // The scans only: which index (or none) the engine reads, and how.
  const lines = rows.map((r) => String(r.detail ?? r['QUERY PLAN']).trim()).filter((l) => /scan|search/i.test(l));
  console.log(`    plan, ${label}: ${lines.join(' | ')}`);
}

interface Answers {
  readonly busiest: unknown;
  readonly typical: unknown;
  readonly month: unknown;
  readonly all: unknown;
}

async function usageQueries(storage: Storage, ids: { busiest: number; typical: number }): Promise<Answers> {
  const queries = new LedgerQueries(storage.db);
  const busiest = await time('usage of the busiest account, 30 days', () => queries.usage(ids.busiest, MONTH.from, MONTH.to));
  const typical = await time('usage of a typical account, 30 days', () => queries.usage(ids.typical, MONTH.from, MONTH.to));
  const month = await time('usage of all accounts, 30 days', () => queries.allAccountsUsage(MONTH.from, MONTH.to));
  const all = await time('usage of all accounts, 90 days (the whole ledger)', () => queries.allAccountsUsage(ALL.from, ALL.to));
  await plan(storage, 'one account', queries.usageQuery(ids.busiest, MONTH.from, MONTH.to).compile());
  await plan(storage, 'all accounts', queries.usageQuery(undefined, MONTH.from, MONTH.to).compile());
  return { busiest: busiest.result, typical: typical.result, month: month.result, all: all.result };
}

async function run(name: string, storage: Storage, gen: Generator): Promise<void> {
  const filling = performance.now();
  const ids = await fill(storage, gen);
  const debits = await storage.db.selectFrom('ledger').select((eb) => eb.fn.countAll().as('n')).where('kind', '=', 'debit').where('created_at', '>=', MONTH.from).where('created_at', '<', MONTH.to).executeTakeFirstOrThrow();
  console.log(`\n${name}: ${ROWS} ledger rows over ${ACCOUNTS} accounts and ${DAYS} days written in ${((performance.now() - filling) / 1000).toFixed(1)} s (${Number(debits.n)} debits in the last 30 days)`);

  console.log(' with the indexes (ledger_account_usage, ledger_kind_usage):');
  const indexed = await usageQueries(storage, ids);
  const monthLookups = (indexed.month as Array<{ lookups: number }>).reduce((s, r) => s + r.lookups, 0);
  if (monthLookups !== Number(debits.n)) {
    failures.push(`${name}: the 30-day usage counts ${monthLookups} lookups, the ledger holds ${Number(debits.n)} debits`);
  }
  await time(`accounts close to zero (of ${ACCOUNTS})`, () => new AccountRepository(storage.db).lowBalance(20, 50));
  await time('lookup statistics per interface, 30 days', () => new LookupStatsRepository(storage.db).byInterface(MONTH.from, MONTH.to));

  await sql`drop index ledger_kind_usage`.execute(storage.db);
  await sql`drop index ledger_account_usage`.execute(storage.db);
  await sql.raw(gen.settle).execute(storage.db);
  console.log(' baseline, without them (ledger_account_time (account_id, created_at) is still there):');
  const bare = await usageQueries(storage, ids);
  if (JSON.stringify(bare) !== JSON.stringify(indexed)) {
    failures.push(`${name}: the answers differ with and without the indexes`);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'usage-bench-'));
console.log(`bench:usage, Node ${process.version}, ${RUNS} timed runs per query after a warm-up; a shared machine, so compare within a run`);
try {
  const sqlite = await openStorage({ dataDir: dir });
  try {
    await run('SQLite', sqlite, SQLITE);
  } finally {
    await sqlite.close();
  }
  const server = process.env.BENCH_PG_URL;
  if (server) {
    const name = `vl_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    try {
      const postgres = await openStorage({ dataDir: dir, databaseUrl: url.toString() });
      try {
        await run('PostgreSQL', postgres, POSTGRES);
      } finally {
        await postgres.close();
      }
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
for (const failure of failures) console.log(`FAIL: ${failure}`);
process.exitCode = failures.length > 0 ? 1 : 0;
