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
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LOOKUP = '/api/json.aspx/CheckFrance/AB123CD';
const VEHICLE = { Description: 'RENAULT CLIO' };

/**
 * Another process takes the store's write lock (BEGIN IMMEDIATE, as a CLI import or a second
 * instance does) and holds it for `ms`. Resolves once the lock is held; `released` once it is let
 * go and the process is gone.
 */
async function holdWriteLock(file: string, ms: number): Promise<{ released: Promise<unknown> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${ms});
  `;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const released = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (data: Buffer) => {
      if (data.toString().includes('locked')) resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`the lock holder exited early (code ${String(code)})`));
    });
  });
  return { released };
}

/** Settles to whether `promise` has settled yet (after the microtasks already queued). */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([promise.then(() => true, () => true), Promise.resolve(pending)])) !== pending;
}

/**
 * Asks `/healthz` `afterMs` in, on a timer, and answers whether it was answered while `waiting` was
 * still pending. Ordering, not a stopwatch: a blocked event loop would answer it only after the
 * waiting request, which waits for another process's lock; a loaded machine only makes both later.
 */
async function healthzAnsweredWhile(t: Pick<TestApp, 'app'>, waiting: Promise<unknown>, afterMs: number): Promise<boolean> {
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  const res = await t.app.inject({ url: '/healthz' });
  expect(res.statusCode).toBe(200);
  return !(await isSettled(waiting));
}

describe('another process holding the SQLite write lock', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('does not freeze the server: /healthz answers at once, and a lookup waits for the lock and is charged exactly once', async () => {
    const t = await createTestApp();
    cleanups.push(() => t.close());
    await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE }]);
    const authorization = t.basic('waiter', await t.account('waiter', 5));

    const holder = await holdWriteLock(join(t.dataDir, 'vehicle-lookup.sqlite'), 3000);
    const started = performance.now();
    const lookup = t.app.inject({ url: LOOKUP, headers: { authorization } });
    // Asked 300 ms in, while the lookup's debit waits for the lock: answered before the lookup.
    expect(await healthzAnsweredWhile(t, lookup, 300)).toBe(true);
    const res = await lookup;
    const waited = performance.now() - started;
    await holder.released;

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ Description: 'RENAULT CLIO' });
    // It really waited for the other process's COMMIT (3 s after the lock was taken).
    expect(waited).toBeGreaterThan(2500);
    expect(await t.services.accounts.balance('waiter')).toBe(4);
    expect((await t.services.accounts.usage('waiter')).filter((e) => e.kind === 'debit')).toHaveLength(1);
  });

  it('waits for the lock without holding the connection when a write outside a transaction meets it: reads go on meanwhile', async () => {
    const t = await createTestApp();
    cleanups.push(() => t.close());
    await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE }]);
    const holder = new Database(join(t.dataDir, 'vehicle-lookup.sqlite'));
    cleanups.push(() => {
      holder.close();
      return Promise.resolve();
    });
    holder.exec('BEGIN IMMEDIATE');
    // Released by a timer of this very thread: it can only fire while the event loop is free.
    setTimeout(() => holder.exec('COMMIT'), 500);
    const started = performance.now();
    const write = t.services.storage.db.insertInto('test_plates').values({ operation: 'CheckFrance', lookup_key: 'ZZ999ZZ', created_at: new Date().toISOString() }).execute();
    // A read on the same connection while the write waits: answered at once, not after the write.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await t.services.records.findDocument('CheckFrance', 'AB123CD')).toBe(JSON.stringify(VEHICLE));
    expect(await isSettled(write)).toBe(false);
    await write;
    expect(performance.now() - started).toBeGreaterThan(450);
    expect(await t.services.records.isTestPlate('CheckFrance', 'ZZ999ZZ')).toBe(true);
  });

  it('fails a lookup cleanly and charges nothing when the lock is not let go within the bound, and serves it once it is', async () => {
    const dir = tempDir();
    cleanups.push(() => {
      dir.remove();
      return Promise.resolve();
    });
    const storage = await openStorage({ dataDir: dir.path, sqliteLockWaitMs: 1000 });
    cleanups.push(() => storage.close());
    const { app, services } = await buildApp(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent' }), { storage });
    cleanups.push(() => app.close());
    const records = join(dir.path, 'records.jsonl');
    writeFileSync(records, `${JSON.stringify({ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE })}\n`);
    expect(await services.importer.importFile(records, { skipInvalid: false, source: 'test' })).toMatchObject({ committed: true });
    const { apiKey } = await services.accounts.create('bounded', 5);
    const authorization = `Basic ${Buffer.from(`bounded:${apiKey}`).toString('base64')}`;

    const holder = await holdWriteLock(join(dir.path, 'vehicle-lookup.sqlite'), 3000);
    const started = performance.now();
    const lookup = app.inject({ url: LOOKUP, headers: { authorization } });
    expect(await healthzAnsweredWhile({ app }, lookup, 300)).toBe(true);
    const res = await lookup;
    const gaveUpAfter = performance.now() - started;
    // It gave up while the other process still held the lock (3 s), not when it let go.
    expect(await isSettled(holder.released)).toBe(false);
    // The JSON interface's internal-error answer: nothing of SQLite's message reaches the client.
    expect(res.statusCode).toBe(500);
    expect(res.body).toMatch(/^Internal error; quote request id \S+ to the operator$/);
    expect(gaveUpAfter).toBeGreaterThan(900);
    expect(await services.accounts.balance('bounded')).toBe(5);
    expect((await services.accounts.usage('bounded')).filter((e) => e.kind === 'debit')).toEqual([]);

    await holder.released;
    const again = await app.inject({ url: LOOKUP, headers: { authorization } });
    expect(again.statusCode).toBe(200);
    expect(await services.accounts.balance('bounded')).toBe(4);
  });
});
