/**
 * `npx tsx bench/sqlite-durability.bench.ts`: what SQLite's synchronous=FULL costs the debit path
 * against NORMAL (issue 17, item 4), in one run. Each setting gets a fresh store file; callers
 * debit one credit each through the real DebitBatcher and DebitWriter (group commit: the debits
 * that arrive while a batch is written share the next transaction), in a loop, for a fixed time.
 *
 * Loads per setting (BENCH_CALLERS, default 1,32,256 concurrent callers): 1 caller makes every
 * debit its own transaction and its own sync (the worst case, and the latency a quiet server adds
 * to each lookup); with more callers the group commit shares each sync among the debits waiting.
 * Printed: debits/s, transactions/s, debits per transaction and the mean wait per debit.
 *
 * Environment: BENCH_DURATION (4 s per measurement), BENCH_CALLERS (1,32,256). About 30 s in all.
 * Exit code 0; 1 when a balance does not equal its credits minus the debits answered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreditLedgerRepository } from '../src/credits/credit-ledger.repository.js';
import { DebitBatcher } from '../src/credits/debit-batcher.js';
import { DebitWriter, type DebitRequest } from '../src/credits/debit-writer.js';
import { createCoreServices } from '../src/services.js';
import { systemClock } from '../src/shared/clock.js';
import { openStorage } from '../src/storage/create-database.js';
import type { SqliteSynchronous } from '../src/storage/sqlite-connection.js';

const CREDITS = 100_000_000;

function positiveInts(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [...fallback];
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value <= 0)) throw new Error(`${name} must be positive integers separated by commas`);
  return values;
}

interface Measurement {
  readonly synchronous: SqliteSynchronous;
  readonly callers: number;
  readonly debitsPerSecond: number;
  readonly transactionsPerSecond: number;
  readonly consistent: boolean;
}

async function measure(synchronous: SqliteSynchronous, callers: number, seconds: number): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), 'vehicle-lookup-durability-'));
  const storage = await openStorage({ dataDir: dir, sqliteSynchronous: synchronous });
  try {
    const services = createCoreServices(storage, { clock: systemClock });
    const { account } = await services.accounts.create('bench', CREDITS);
    const writer = new DebitWriter(storage, new CreditLedgerRepository(storage.db));
    let transactions = 0;
    const batcher = new DebitBatcher({
      write: (batch: readonly DebitRequest[]) => {
        transactions += 1;
        return writer.write(batch);
      },
      reverse: (...args) => writer.reverse(...args),
    });
    let debits = 0;
    let n = 0;
    const caller = async (until: number): Promise<void> => {
      while (performance.now() < until) {
        n += 1;
        const balance = await batcher.debit(account.id, 1, { operation: 'CheckFrance', interface: 'json', query: 'AB123CD', requestId: `b${n}`, createdAt: new Date().toISOString() });
        if (balance === undefined) throw new Error('the bench account ran out of credits');
        debits += 1;
      }
    };
    // Warm-up (statements prepared, file grown), then the measured run.
    await Promise.all(Array.from({ length: callers }, () => caller(performance.now() + 500)));
    const warm = { debits, transactions };
    const started = performance.now();
    await Promise.all(Array.from({ length: callers }, () => caller(started + seconds * 1000)));
    const elapsed = (performance.now() - started) / 1000;
    const balance = await services.accounts.balance('bench');
    return {
      synchronous,
      callers,
      debitsPerSecond: (debits - warm.debits) / elapsed,
      transactionsPerSecond: (transactions - warm.transactions) / elapsed,
      consistent: balance === CREDITS - debits,
    };
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const [seconds = 4] = positiveInts('BENCH_DURATION', [4]);
  const loads = positiveInts('BENCH_CALLERS', [1, 32, 256]);
  console.log(`SQLite durability benchmark: debits through DebitBatcher, synchronous=NORMAL against FULL`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs; ${seconds} s per measurement; store files in ${tmpdir()}`);
  const results: Measurement[] = [];
  for (const callers of loads) {
    for (const synchronous of ['normal', 'full'] as const) results.push(await measure(synchronous, callers, seconds));
  }
  console.log('');
  console.log('  synchronous  callers   debits/s   transactions/s   debits/transaction   mean wait/debit');
  for (const r of results) {
    const waitMs = (r.callers / r.debitsPerSecond) * 1000;
    console.log(
      `  ${r.synchronous.toUpperCase().padEnd(11)}  ${String(r.callers).padStart(7)}  ${r.debitsPerSecond.toFixed(0).padStart(9)}  ${r.transactionsPerSecond.toFixed(0).padStart(15)}  ${(r.debitsPerSecond / r.transactionsPerSecond).toFixed(1).padStart(19)}  ${waitMs.toFixed(2).padStart(13)} ms`,
    );
  }
  for (const callers of loads) {
    const normal = results.find((r) => r.callers === callers && r.synchronous === 'normal');
    const full = results.find((r) => r.callers === callers && r.synchronous === 'full');
    if (normal && full) console.log(`  ${callers} caller(s): FULL gives ${(full.debitsPerSecond / normal.debitsPerSecond).toFixed(2)}x the debits/s of NORMAL`);
  }
  const inconsistent = results.filter((r) => !r.consistent);
  if (inconsistent.length > 0) {
    console.error('a balance does not equal its credits minus the debits answered');
    return 1;
  }
  return 0;
}

process.exitCode = await main();
