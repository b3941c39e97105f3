/**
 * `npx tsx bench/ledger-usage.bench.ts`: usage by day and operation (LedgerQueries.usage, the
 * admin and account APIs' /usage) and the newest ledger page on an account with a million ledger
 * rows, on SQLite (and PostgreSQL when BENCH_PG_URL is set). Rows are inserted directly in large
 * batches: this measures the read, not the debit path. ROWS overrides the row count.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { LedgerQueries } from '../src/accounts/ledger-queries.js';
import { openStorage, type Storage } from '../src/storage/create-database.js';
import { positiveInt } from './bench-support.js';

const ROWS = positiveInt('ROWS', 1_000_000);
const DAYS = 90;
const OPERATIONS = ['CheckFrance', 'CheckUSA', 'Check', 'CheckSpain', 'VinCheck'];

async function fill(storage: Storage): Promise<number> {
  const { db } = storage;
  const other = await db.insertInto('accounts').values({ username: 'other', credits: 0, disabled: 0, require_api_key: 0, created_at: '2026-01-01T00:00:00.000Z' }).returning('id').executeTakeFirstOrThrow();
  const target = await db.insertInto('accounts').values({ username: 'big', credits: 0, disabled: 0, require_api_key: 0, created_at: '2026-01-01T00:00:00.000Z' }).returning('id').executeTakeFirstOrThrow();
  const start = Date.parse('2026-08-01T00:00:00.000Z');
  const batch = 2000;
  for (let i = 0; i < ROWS; i += batch) {
    const values = Array.from({ length: Math.min(batch, ROWS - i) }, (_, k) => {
      const n = i + k;
      return {
        // Every tenth row belongs to another account, so the index has to pick the account's rows.
        account_id: n % 10 === 0 ? other.id : target.id,
        kind: 'debit' as const,
        operation: OPERATIONS[n % OPERATIONS.length] ?? 'Check',
        interface: 'json',
        query: 'AB12CDE',
        delta: -1,
        balance_after: 0,
        request_id: null,
        created_at: new Date(start + Math.floor((n / ROWS) * DAYS * 86_400_000)).toISOString(),
      };
    });
    await storage.transaction((tx) => tx.db.insertInto('ledger').values(values).execute());
  }
  // Both engines take ANALYZE with a table name: fresh statistics for the planner before measuring.
  await sql`analyze ledger`.execute(db);
  return target.id;
}

async function time<T>(label: string, work: () => Promise<T>, runs = 5): Promise<T> {
  let result: T | undefined;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    result = await work();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`  ${label.padEnd(44)} median ${times[Math.floor(runs / 2)]?.toFixed(1)} ms  (min ${times[0]?.toFixed(1)}, max ${times.at(-1)?.toFixed(1)})`);
  return result as T;
}

async function run(name: string, storage: Storage): Promise<void> {
  const filling = performance.now();
  const accountId = await fill(storage);
  console.log(`${name}: ${ROWS} ledger rows written in ${((performance.now() - filling) / 1000).toFixed(1)} s`);
  const queries = new LedgerQueries(storage.db);
  const all = await time('usage, 90 days (the whole history)', () => queries.usage(accountId, '2026-08-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z'));
  console.log(`    ${all.length} day x operation rows, ${all.reduce((s, r) => s + r.lookups, 0)} lookups`);
  await time('usage, 30 days', () => queries.usage(accountId, '2026-09-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z'));
  await time('usage, 1 day', () => queries.usage(accountId, '2026-09-15T00:00:00.000Z', '2026-09-16T00:00:00.000Z'));
  await time('ledger page (newest 100)', () => queries.rows(accountId, { limit: 100 }));
  await time('ledger page, one operation, 1 week', () => queries.rows(accountId, { limit: 100, operation: 'CheckUSA', from: '2026-09-01T00:00:00.000Z', to: '2026-09-08T00:00:00.000Z' }));
}

const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
try {
  const sqlite = await openStorage({ dataDir: dir });
  try {
    await run('SQLite', sqlite);
  } finally {
    await sqlite.close();
  }
  const pgUrl = process.env.BENCH_PG_URL;
  if (pgUrl) {
    const pg = await openStorage({ dataDir: dir, databaseUrl: pgUrl });
    try {
      await run('PostgreSQL', pg);
    } finally {
      await pg.close();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
