import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { CreditLedgerRepository } from '../../src/credits/credit-ledger.repository.js';
import { createServices } from '../../src/services.js';
import { systemClock } from '../../src/shared/clock.js';
import { openStorage } from '../../src/storage/create-database.js';
import { isSqliteBusy, retryOnSqliteBusy } from '../../src/storage/sqlite-connection.js';
import { ManualWaitClock } from '../helpers/manual-wait-clock.js';
import { tempDir } from '../helpers/test-app.js';

/** Several connections (processes) on one SQLite file: start-up migrations and busy writers. */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function store(): string {
  const dir = tempDir();
  cleanups.push(dir.remove);
  return dir.path;
}

function busyError(): Error {
  return Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
}

describe('start-up migrations on a new SQLite file', () => {
  it('applies every migration exactly once when two stores open the same new file at the same moment', async () => {
    const dataDir = store();
    // In one process the two migrators interleave at every await: without a lock both see no
    // migration applied and the second fails with "table accounts already exists".
    const opened = await Promise.all([openStorage({ dataDir }), openStorage({ dataDir })]);
    for (const s of opened) cleanups.push(() => s.close());
    const applied = await opened[0].db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    const names = applied.map((row) => (row as { name: string }).name);
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('a writer that meets SQLITE_BUSY after the busy timeout', () => {
  it('Storage.transaction debits once the other connection lets go of the write lock, instead of failing the lookup', async () => {
    const dataDir = store();
    const clock = new ManualWaitClock();
    const storage = await openStorage({ dataDir, sqliteLockWaitClock: clock });
    cleanups.push(() => storage.close());
    const services = createServices(storage, { clock: systemClock, requireApiKeyEverywhere: false });
    cleanups.push(() => services.close());
    const { account } = await services.accounts.create('waiting', 5);

    // Another process holds the write lock (a long import, say) for longer than the busy timeout.
    const file = join(dataDir, 'vehicle-lookup.sqlite');
    const holder = new Database(file);
    cleanups.push(() => {
      holder.close();
    });
    holder.exec('BEGIN IMMEDIATE');
    const probe = new Database(file, { timeout: 50 });
    cleanups.push(() => {
      probe.close();
    });
    let probeError: unknown;
    try {
      probe.exec('BEGIN IMMEDIATE');
    } catch (error) {
      probeError = error;
    }
    // Without the retry, this is what the debit transaction would have failed with.
    expect(isSqliteBusy(probeError)).toBe(true);

    const ledger = new CreditLedgerRepository(storage.db);
    const waiting = clock.nextSleep();
    const debit = storage.transaction((tx) =>
      ledger.debit(tx, account.id, 1, { operation: 'CheckFrance', interface: 'json', query: 'AB123CD', requestId: 'after-busy', createdAt: new Date().toISOString() }),
    );
    // The debit met the lock and waits to try again; the other connection lets go, and it goes through.
    await waiting;
    holder.exec('COMMIT');
    const balance = await debit;
    expect(clock.sleepCount).toBeGreaterThan(0);
    expect(balance).toBe(4);
    const debits = (await services.accounts.usage('waiting')).filter((e) => e.kind === 'debit');
    expect(debits.map((d) => d.requestId)).toEqual(['after-busy']);
  });

  it('tries again only on SQLITE_BUSY, and gives up after its time limit', async () => {
    let calls = 0;
    const failing = retryOnSqliteBusy(() => {
      calls += 1;
      return Promise.reject(new Error('no such table: accounts'));
    });
    await expect(failing(() => Promise.resolve(1))).rejects.toThrow('no such table');
    expect(calls).toBe(1);

    calls = 0;
    // Time moves by what the retry sleeps: 2, 4, 8, 16, then 25 ms each, so it gives up at the first
    // try past 200 ms of waiting (205 ms, the 12th), whatever the machine's speed.
    const clock = new ManualWaitClock({ advanceOnSleep: true });
    const busy = retryOnSqliteBusy(() => {
      calls += 1;
      return Promise.reject(busyError());
    }, { ms: 200, clock });
    await expect(busy(() => Promise.resolve(1))).rejects.toThrow('database is locked');
    expect(clock.now()).toBe(205);
    expect(calls).toBe(12);
  });
});
