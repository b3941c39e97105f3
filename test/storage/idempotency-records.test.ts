import { afterEach, describe, expect, it } from 'vitest';
import { CreditLedgerRepository, type DebitDetails } from '../../src/credits/credit-ledger.repository.js';
import { DebitWriter, KEY_TAKEN, type DebitRequest } from '../../src/credits/debit-writer.js';
import { IdempotencyRepository } from '../../src/credits/idempotency.repository.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const HOUR_MS = 3_600_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

function details(n: number, key: string | undefined, atMs = T0 + n * 1000): DebitDetails {
  return {
    operation: 'CheckFrance',
    interface: 'json',
    query: `Q${n}`,
    requestId: `r${n}`,
    createdAt: new Date(atMs).toISOString(),
    ...(key === undefined ? {} : { idempotency: { key, result: JSON.stringify({ n }) } }),
  };
}

describe.each(ENGINES)('idempotency records in the debit transaction on %s', (engine) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function setup(ctx: { skip: () => void }) {
    if (engine === 'postgres' && !(await postgresAvailable())) ctx.skip();
    const app = await createTestApp({}, undefined, engine);
    t = app;
    await app.services.accounts.create('low', 2);
    await t.services.accounts.create('rich', 100);
    const repository = new IdempotencyRepository(t.services.storage);
    const writer = new DebitWriter(t.services.storage, new CreditLedgerRepository(t.services.storage.db), { repository, retentionMs: 24 * HOUR_MS });
    const ids = { low: (await t.services.accounts.show('low')).id, rich: (await t.services.accounts.show('rich')).id };
    const keys = async () =>
      (await app.services.storage.db.selectFrom('idempotency_keys').select(['account_id', 'idempotency_key', 'request_id']).orderBy('request_id').execute()).map(
        (r) => [r.account_id, r.idempotency_key, r.request_id],
      );
    return { app: t, writer, repository, ids, keys };
  }

  it('debits once for a key repeated in one batch, per account, and keeps no record of a debit the balance did not cover', async (ctx) => {
    const { app, writer, ids, keys } = await setup(ctx);
    const batch: DebitRequest[] = [
      { accountId: ids.low, cost: 1, details: details(1, 'k-1') },
      { accountId: ids.low, cost: 1, details: details(2, 'k-1') },
      { accountId: ids.rich, cost: 1, details: details(3, 'k-1') },
      { accountId: ids.low, cost: 1, details: details(4, undefined) },
      { accountId: ids.low, cost: 1, details: details(5, 'k-2') },
    ];
    expect(await writer.write(batch)).toEqual([1, KEY_TAKEN, 99, 0, undefined]);
    expect(await keys()).toEqual([[ids.low, 'k-1', 'r1'], [ids.rich, 'k-1', 'r3']]);
    expect((await app.services.accounts.usage('low')).filter((r) => r.kind === 'debit').map((r) => r.requestId)).toEqual(['r1', 'r4']);
    // The key of a later batch is taken too: nothing is debited.
    expect(await writer.write([{ accountId: ids.rich, cost: 1, details: details(6, 'k-1') }])).toEqual([KEY_TAKEN]);
    expect((await app.services.accounts.show('rich')).credits).toBe(99);
  });

  it('writes nothing when the transaction fails: neither the debit nor the record', async (ctx) => {
    const { writer, ids, keys, app } = await setup(ctx);
    // An account that does not exist fails the ledger row's foreign key after the record was claimed.
    await expect(
      writer.write([
        { accountId: ids.rich, cost: 1, details: details(1, 'k-1') },
        { accountId: 999_999, cost: 0, details: details(2, 'k-2') },
      ]),
    ).rejects.toThrow();
    expect(await keys()).toEqual([]);
    expect((await app.services.accounts.show('rich')).credits).toBe(100);
  });

  it('replaces an expired record of the same key and purges the other expired ones on a keyed write', async (ctx) => {
    const { writer, repository, ids, keys } = await setup(ctx);
    expect(await writer.write([{ accountId: ids.rich, cost: 1, details: details(1, 'old-1') }, { accountId: ids.rich, cost: 1, details: details(2, 'old-2') }])).toEqual([99, 98]);
    const later = T0 + 24 * HOUR_MS + 2000;
    expect(await repository.find(ids.rich, 'old-1', new Date(later - 24 * HOUR_MS).toISOString())).toBeUndefined();
    expect(await writer.write([{ accountId: ids.rich, cost: 1, details: details(3, 'old-1', later) }])).toEqual([97]);
    expect(await keys()).toEqual([[ids.rich, 'old-1', 'r3']]);
  });
});
