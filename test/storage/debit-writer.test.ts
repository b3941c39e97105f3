import { afterEach, describe, expect, it } from 'vitest';
import { CreditLedgerRepository } from '../../src/credits/credit-ledger.repository.js';
import type { FreeLookupRow } from '../../src/credits/credit-ledger.repository.js';
import { DebitWriter, type DebitRequest } from '../../src/credits/debit-writer.js';
import type { FreeReason } from '../../src/storage/database.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const details = (n: number) => ({ operation: 'CheckFrance', interface: 'json', query: `Q${n}`, requestId: `r${n}`, createdAt: new Date(2026, 0, 1, 0, 0, n).toISOString() });

describe.each(ENGINES)('debit writer on %s', (engine) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function setup(ctx: { skip: () => void }): Promise<{ app: TestApp; w: DebitWriter; ids: { low: number; rich: number } }> {
    if (engine === 'postgres' && !(await postgresAvailable())) ctx.skip();
    t = await createTestApp({}, undefined, engine);
    await t.services.accounts.create('low', 3);
    await t.services.accounts.create('rich', 100);
    const writer = new DebitWriter(t.services.storage, new CreditLedgerRepository(t.services.storage.db));
    const ids = { low: (await t.services.accounts.show('low')).id, rich: (await t.services.accounts.show('rich')).id };
    return { app: t, w: writer, ids };
  }

  it('debits exactly what each balance covers, in arrival order, with one ledger row per debit', async (ctx) => {
    const { app, w, ids } = await setup(ctx);
    const batch: DebitRequest[] = [
      { accountId: ids.low, cost: 1, details: details(1) },
      { accountId: ids.rich, cost: 1, details: details(2) },
      { accountId: ids.low, cost: 1, details: details(3) },
      { accountId: ids.low, cost: 1, details: details(4) },
      { accountId: ids.low, cost: 1, details: details(5) },
      { accountId: ids.rich, cost: 2, details: details(6) },
    ];
    expect(await w.write(batch)).toEqual([2, 99, 1, 0, undefined, 97]);
    const low = await app.services.accounts.usage('low');
    expect(low.filter((r) => r.kind === 'debit').map((r) => [r.requestId, r.balanceAfter])).toEqual([['r1', 2], ['r3', 1], ['r4', 0]]);
    expect((await app.services.accounts.show('low')).credits).toBe(0);
    expect((await app.services.accounts.show('rich')).credits).toBe(97);
  });

  it('takes the sum at once when the balance covers a whole group', async (ctx) => {
    const { app, w, ids } = await setup(ctx);
    const batch = Array.from({ length: 20 }, (_, i) => ({ accountId: ids.rich, cost: 1, details: details(i) }));
    expect(await w.write(batch)).toEqual(Array.from({ length: 20 }, (_, i) => 99 - i));
    const rows = (await app.services.accounts.usage('rich')).filter((r) => r.kind === 'debit');
    expect(rows.map((r) => r.balanceAfter)).toEqual(Array.from({ length: 20 }, (_, i) => 99 - i));
    expect(rows.reduce((sum, r) => sum + r.delta, 0)).toBe(-20);
  });

  it('writes every row of a batch larger than one multi-row insert, each with its own details', async (ctx) => {
    const { app, w, ids } = await setup(ctx);
    // 70 rows: two full inserts of 32 and one of 6; costs vary so each balance is distinct.
    const batch = Array.from({ length: 70 }, (_, i) => ({ accountId: ids.rich, cost: i % 3 === 0 ? 2 : 1, details: details(i) }));
    await app.services.accounts.grantCredits({ account: 'rich', amount: 900 });
    const expected: number[] = [];
    let balance = 1000;
    for (const d of batch) expected.push((balance -= d.cost));
    expect(await w.write(batch)).toEqual(expected);
    const rows = (await app.services.accounts.usage('rich')).filter((r) => r.kind === 'debit');
    expect(rows.map((r) => [r.requestId, r.query, r.operation, r.interface, r.delta, r.balanceAfter, r.createdAt])).toEqual(
      batch.map((d, i) => [`r${i}`, `Q${i}`, 'CheckFrance', 'json', -d.cost, expected[i], details(i).createdAt]),
    );
    expect((await app.services.accounts.show('rich')).credits).toBe(balance);
  });

  it('writes nothing of a batch whose transaction fails', async (ctx) => {
    const { app, w, ids } = await setup(ctx);
    const bad = [
      { accountId: ids.rich, cost: 1, details: details(1) },
      // created_at is NOT NULL on a ledger row, so this row fails after the first was written.
      { accountId: ids.rich, cost: 1, details: { ...details(2), createdAt: null as unknown as string } },
    ];
    await expect(w.write(bad)).rejects.toThrow();
    expect((await app.services.accounts.show('rich')).credits).toBe(100);
    expect((await app.services.accounts.usage('rich')).filter((r) => r.kind === 'debit')).toEqual([]);
    // And the writer keeps working afterwards.
    expect(await w.write([{ accountId: ids.rich, cost: 1, details: details(3) }])).toEqual([99]);
  });

  const free = (accountId: number, n: number, reason: FreeReason = 'test-plate'): FreeLookupRow => ({ accountId, details: { ...details(n), reason } });

  it("writes free rows after the batch's debits, each with its account's balance after them, moving no credit", async (ctx) => {
    const { app, w, ids } = await setup(ctx);
    const debits: DebitRequest[] = [
      { accountId: ids.low, cost: 1, details: details(1) },
      { accountId: ids.rich, cost: 2, details: details(2) },
    ];
    expect(await w.write(debits, [free(ids.low, 3), free(ids.rich, 4, 'no-result'), free(ids.low, 5, 'replay')])).toEqual([2, 98]);
    const low = await app.services.accounts.usage('low');
    expect(low.slice(1).map((r) => [r.kind, r.freeReason, r.requestId, r.delta, r.balanceAfter])).toEqual([
      ['debit', null, 'r1', -1, 2],
      ['free', 'test-plate', 'r3', 0, 2],
      ['free', 'replay', 'r5', 0, 2],
    ]);
    const rich = await app.services.accounts.usage('rich');
    expect(rich.slice(1).map((r) => [r.kind, r.freeReason, r.balanceAfter])).toEqual([
      ['debit', null, 98],
      ['free', 'no-result', 98],
    ]);
    expect((await app.services.accounts.show('low')).credits).toBe(2);
    expect((await app.services.accounts.show('rich')).credits).toBe(98);
  });

  it('writes free rows of an account with no credit, alone in a batch, more than one multi-row insert of them', async (ctx) => {
    const { app, w } = await setup(ctx);
    await app.services.accounts.create('empty', 0);
    const empty = (await app.services.accounts.show('empty')).id;
    const rows = Array.from({ length: 70 }, (_, i) => free(empty, i));
    expect(await w.write([], rows)).toEqual([]);
    const written = (await app.services.accounts.usage('empty')).filter((r) => r.kind === 'free');
    expect(written.map((r) => [r.requestId, r.query, r.delta, r.balanceAfter, r.createdAt])).toEqual(rows.map((_, i) => [`r${i}`, `Q${i}`, 0, 0, details(i).createdAt]));
    expect((await app.services.accounts.show('empty')).credits).toBe(0);
  });

  it('writes no free row of a batch whose transaction fails', async (ctx) => {
    const { app, w, ids } = await setup(ctx);
    const bad = [{ accountId: ids.rich, cost: 1, details: { ...details(2), createdAt: null as unknown as string } }];
    await expect(w.write(bad, [free(ids.low, 1)])).rejects.toThrow();
    expect((await app.services.accounts.usage('low')).filter((r) => r.kind === 'free')).toEqual([]);
  });
});
