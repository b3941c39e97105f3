import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { openStorage } from '../../src/storage/create-database.js';
import { SQLITE_LOCK_WAIT_MS } from '../../src/storage/sqlite-connection.js';
import { ManualWaitClock } from '../helpers/manual-wait-clock.js';
import { tempDir } from '../helpers/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LOOKUP = '/api/json.aspx/CheckFrance/AB123CD';
const VEHICLE = { Description: 'RENAULT CLIO' };

/**
 * Another process takes the store's write lock (BEGIN IMMEDIATE, as a CLI import or a second
 * instance does) and holds it until the test calls `release`, which resolves once it has committed
 * and exited. No timer decides when the lock goes: the test does.
 */
async function holdWriteLock(file: string): Promise<{ release: () => Promise<void> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (data: Buffer) => {
      if (data.toString().includes('locked')) resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`the lock holder exited early (code ${String(code)})`));
    });
  });
  let released: Promise<void> | undefined;
  return {
    // Once: the test releases it, and the clean-up again in case the test stopped before.
    release: () =>
      (released ??= (async () => {
        child.stdin.end('release\n');
        const [code] = (await exited) as [number | null];
        expect(code, 'the lock holder committed and exited').toBe(0);
      })()),
  };
}

/** Settles to whether `promise` has settled yet (after the microtasks already queued). */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([promise.then(() => true, () => true), Promise.resolve(pending)])) !== pending;
}

describe('another process holding the SQLite write lock', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * An app on a SQLite store of its own whose lock waits run on `clock` (bounded by `lockWaitMs`),
   * with the record of LOOKUP and an account `username` holding 5 credits.
   */
  async function appWaitingOn(clock: ManualWaitClock, username: string, lockWaitMs?: number) {
    const dir = tempDir();
    cleanups.push(() => {
      dir.remove();
      return Promise.resolve();
    });
    const storage = await openStorage({ dataDir: dir.path, sqliteLockWaitClock: clock, ...(lockWaitMs ? { sqliteLockWaitMs: lockWaitMs } : {}) });
    cleanups.push(() => storage.close());
    const { app, services } = await buildApp(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', SEED_DEMO: 'false', VIN_DECODER: 'off' }), { storage });
    cleanups.push(() => app.close());
    const records = join(dir.path, 'records.jsonl');
    writeFileSync(records, `${JSON.stringify({ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE })}\n`);
    expect(await services.importer.importFile(records, { skipInvalid: false, source: 'test' })).toMatchObject({ committed: true });
    const { apiKey } = await services.accounts.create(username, 5);
    const authorization = `Basic ${Buffer.from(`${username}:${apiKey}`).toString('base64')}`;
    return { app, services, storage, file: join(dir.path, 'vehicle-lookup.sqlite'), lookup: () => app.inject({ url: LOOKUP, headers: { authorization } }) };
  }

  it('does not freeze the server: /healthz answers while a lookup waits for the lock, and the lookup is charged exactly once', async () => {
    const clock = new ManualWaitClock();
    const s = await appWaitingOn(clock, 'waiter');
    const holder = await holdWriteLock(s.file);
    cleanups.push(() => holder.release());

    const waiting = clock.nextSleep();
    const lookup = s.lookup();
    await waiting;
    // The debit met the other process's lock and waits for it; the event loop serves meanwhile.
    expect((await s.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect(await isSettled(lookup)).toBe(false);
    // Just short of the bound (SQLITE_LOCK_WAIT_MS) it still waits, rather than failing.
    clock.advance(SQLITE_LOCK_WAIT_MS - 1);
    await clock.nextSleep();
    expect(await isSettled(lookup)).toBe(false);

    await holder.release();
    const res = await lookup;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ Description: 'RENAULT CLIO' });
    expect(await s.services.accounts.balance('waiter')).toBe(4);
    expect((await s.services.accounts.usage('waiter')).filter((e) => e.kind === 'debit')).toHaveLength(1);
  });

  it('waits for the lock without holding the connection when a write outside a transaction meets it: reads go on meanwhile', async () => {
    const clock = new ManualWaitClock();
    const s = await appWaitingOn(clock, 'reader');
    const holder = new Database(s.file);
    cleanups.push(() => {
      holder.close();
      return Promise.resolve();
    });
    holder.exec('BEGIN IMMEDIATE');
    const waiting = clock.nextSleep();
    const write = s.storage.db.insertInto('test_plates').values({ operation: 'CheckFrance', lookup_key: 'ZZ999ZZ', created_at: new Date().toISOString() }).execute();
    await waiting;
    // A read on the same connection while the write waits: answered at once, not after the write.
    expect(await s.services.records.findDocument('CheckFrance', 'AB123CD')).toBe(JSON.stringify(VEHICLE));
    expect(await isSettled(write)).toBe(false);
    holder.exec('COMMIT');
    await write;
    expect(await s.services.records.isTestPlate('CheckFrance', 'ZZ999ZZ')).toBe(true);
  });

  it('fails a lookup cleanly and charges nothing when the lock is not let go within the bound, and serves it once it is', async () => {
    const clock = new ManualWaitClock();
    const s = await appWaitingOn(clock, 'bounded', 1000);
    const holder = await holdWriteLock(s.file);
    cleanups.push(() => holder.release());

    const waiting = clock.nextSleep();
    const lookup = s.lookup();
    await waiting;
    expect((await s.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    clock.advance(999);
    await clock.nextSleep();
    expect(await isSettled(lookup)).toBe(false);
    // The bound passes while the other process still holds the lock: the lookup gives up.
    clock.advance(1);
    const res = await lookup;
    // The JSON interface's internal-error answer: nothing of SQLite's message reaches the client.
    expect(res.statusCode).toBe(500);
    expect(res.body).toMatch(/^Internal error; quote request id \S+ to the operator$/);
    expect(await s.services.accounts.balance('bounded')).toBe(5);
    expect((await s.services.accounts.usage('bounded')).filter((e) => e.kind === 'debit')).toEqual([]);

    await holder.release();
    const again = await s.lookup();
    expect(again.statusCode).toBe(200);
    expect(await s.services.accounts.balance('bounded')).toBe(4);
  });
});
