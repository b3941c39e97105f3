import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccountError } from '../../src/accounts/account.service.js';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { buildQuery } from '../../src/lookup/lookup-query.js';
import { LocalStoreProvider } from '../../src/providers/local/local-store.provider.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const catalogue = new Catalogue();
const op = (name: string) => {
  const found = catalogue.find(name);
  if (!found) throw new Error(name);
  return found;
};

describe.each(ENGINES)('storage on %s', (engine) => {
  let t: TestApp;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    t = await createTestApp({}, undefined, engine);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  it('runs its migrations and reports the engine', () => {
    expect(t.services.storage.engine).toBe(engine);
  });

  it('creates accounts with a unique username and an initial top-up row', async () => {
    await t.services.accounts.create('ann', 7);
    await expect(t.services.accounts.create('ann', 1)).rejects.toBeInstanceOf(AccountError);
    const rows = await t.services.accounts.usage('ann');
    expect(rows).toMatchObject([{ kind: 'topup', delta: 7, balanceAfter: 7, operation: null }]);
    expect((await t.services.accounts.show('ann')).credits).toBe(7);
  });

  it('stores only a hash of the API key, and rotation replaces it', async () => {
    const key = await t.account('kim', 1);
    const keys = () => t.services.storage.db.selectFrom('api_keys').select(['key_hash', 'prefix', 'revoked_at']).orderBy('id').execute();
    const [stored] = await keys();
    expect(stored?.key_hash).not.toContain(key);
    expect(stored?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored?.prefix).toBe(key.slice(0, 8));
    const rotated = await t.services.accounts.rotateKey('kim');
    const after = await keys();
    expect(rotated).not.toBe(key);
    expect(after.map((k) => k.revoked_at === null)).toEqual([false, true]);
    expect(after[1]?.key_hash).not.toBe(stored?.key_hash);
  });

  it('filters usage by date', async () => {
    await t.services.accounts.create('dated', 1);
    expect(await t.services.accounts.usage('dated', '2999-01-01T00:00:00.000Z')).toEqual([]);
    expect(await t.services.accounts.usage('dated', '2000-01-01T00:00:00.000Z')).toHaveLength(1);
  });

  it('imports, replaces and finds records by normalised key, shared datasets included', async () => {
    await t.importRecords([
      { operation: 'CheckUSA', key: { RegistrationNumber: 'ab-12 c', State: 'nj' }, vehicle: { Description: 'first' } },
      { operation: 'CheckUSAMinimal', key: { regNumber: 'XY99', state: 'ca' }, vehicle: { Description: 'minimal' } },
    ]);
    await t.importRecords([{ operation: 'CheckUSA', key: { RegistrationNumber: 'AB12C', State: 'NJ' }, vehicle: { Description: 'second' } }]);
    const local = new LocalStoreProvider(t.services.records);
    const usa = await local.find(buildQuery(op('CheckUSA'), { RegistrationNumber: 'ab12c', State: 'NJ' }));
    expect(usa).toMatchObject({ status: 'found', record: { Description: 'second' } });
    const viaMinimal = await local.find(buildQuery(op('CheckUSA'), { RegistrationNumber: 'XY99', State: 'CA' }));
    expect(viaMinimal).toMatchObject({ status: 'found', record: { Description: 'minimal' } });
    expect(await t.services.records.countByDataset()).toEqual({ CheckUSA: 2 });
    expect(await local.find(buildQuery(op('CheckUSA'), { RegistrationNumber: 'AB12C', State: 'NY' }))).toEqual({ status: 'not-found' });
  });

  it('keeps an unchanged record as it is on re-import (its updated_at too) and rewrites a changed one', async () => {
    const record = (Description: string) => ({ operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: { Description } });
    const other = { operation: 'CheckFrance', key: { RegistrationNumber: 'ZZ999ZZ' }, vehicle: { Description: 'other' } };
    const stamps = async () =>
      Object.fromEntries(
        (await t.services.storage.db.selectFrom('records').select(['lookup_key', 'updated_at']).execute()).map((r) => [r.lookup_key, r.updated_at]),
      );
    await t.importRecords([record('first'), other]);
    const before = await stamps();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await t.importRecords([record('second'), other]);
    const after = await stamps();
    expect(after.ZZ999ZZ).toBe(before.ZZ999ZZ);
    expect(after.AB123CD).not.toBe(before.AB123CD);
    expect(await t.services.records.findDocument('CheckFrance', 'AB123CD')).toBe('{"Description":"second"}');
  });

  it('searches Euro NCAP ratings by exact make and contained model, replacing by Id', async () => {
    const rating = (Id: number, Model: string, SortOrder: number) => ({ operation: 'CheckEuroNCap', ncap: { Make: 'Volvo', Model, Id, SortOrder, Year: 2020 } });
    await t.importRecords([rating(1, 'XC60', 2), rating(2, 'XC40', 1), rating(3, 'V60', 3), { operation: 'CheckEuroNCap', ncap: { Make: 'Volvo Trucks', Model: 'FH', Id: 4 } }]);
    await t.importRecords([{ operation: 'CheckEuroNCap', ncap: { Make: 'Volvo', Model: 'XC60 Recharge', Id: 1, SortOrder: 2, Year: 2021 } }]);
    const local = new LocalStoreProvider(t.services.records);
    const all = await local.find(buildQuery(op('CheckEuroNCap'), { Make: 'VOLVO', Model: '' }));
    expect(all.status === 'found' && (all.record as Array<{ Model: string }>).map((r) => r.Model)).toEqual(['XC40', 'XC60 Recharge', 'V60']);
    const xc = await local.find(buildQuery(op('CheckEuroNCap'), { Make: 'volvo', Model: 'xc' }));
    expect(xc.status === 'found' && (xc.record as unknown[]).length).toBe(2);
  });

  it('keeps test plates per operation', async () => {
    const { records, storage } = t.services;
    expect(await storage.transaction((tx) => records.addTestPlate(tx, 'CheckFrance', 'AB123CD', new Date().toISOString()))).toBe(true);
    expect(await storage.transaction((tx) => records.addTestPlate(tx, 'CheckFrance', 'AB123CD', new Date().toISOString()))).toBe(false);
    expect(await records.isTestPlate('CheckFrance', 'AB123CD')).toBe(true);
    expect(await records.isTestPlate('CheckSpain', 'AB123CD')).toBe(false);
    expect(await records.listTestPlates()).toEqual([{ operation: 'CheckFrance', lookupKey: 'AB123CD' }]);
    expect(await storage.transaction((tx) => records.removeTestPlate(tx, 'CheckFrance', 'AB123CD'))).toBe(true);
    expect(await storage.transaction((tx) => records.removeTestPlate(tx, 'CheckFrance', 'AB123CD'))).toBe(false);
  });

  it('never lets the balance go negative, even when asked directly', async () => {
    await t.services.accounts.create('floor', 0);
    await expect(
      t.services.storage.db.updateTable('accounts').set((eb) => ({ credits: eb('credits', '-', 1) })).where('username', '=', 'floor').execute(),
    ).rejects.toThrow();
    expect((await t.services.accounts.show('floor')).credits).toBe(0);
  });

  it('reads outside a transaction (Storage.read): at once on an idle SQLite connection, never a write in flight', async () => {
    await t.services.accounts.create('reader', 5);
    const { storage } = t.services;
    const credits = storage.db.selectFrom('accounts').select('credits').where('username', '=', 'reader').compile();
    const idle = storage.read(credits);
    // SQLite answers a read of an idle connection as a plain value (no promise: test/cost/ counts them).
    if (engine === 'sqlite') expect(idle).not.toBeInstanceOf(Promise);
    expect((await idle).rows).toEqual([{ credits: 5 }]);
    // A transaction that changes the balance, then waits, then fails: a read made while it is
    // open must not see its write (on SQLite it takes its turn after the rollback).
    let release: () => void = () => undefined;
    let written: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wrote = new Promise<void>((resolve) => (written = resolve));
    const failing = storage.transaction(async (tx) => {
      await tx.db.updateTable('accounts').set({ credits: 99 }).where('username', '=', 'reader').execute();
      written();
      await gate;
      throw new Error('rolled back on purpose');
    });
    await wrote;
    const during = Promise.resolve(storage.read(credits));
    release();
    await expect(failing).rejects.toThrow('rolled back on purpose');
    expect((await during).rows).toEqual([{ credits: 5 }]);
  });
});
