import { afterEach, describe, expect, it } from 'vitest';
import { CreditLedgerRepository, type DebitDetails } from '../../src/credits/credit-ledger.repository.js';
import { DebitWriter, KEY_TAKEN, type DebitRequest } from '../../src/credits/debit-writer.js';
import { IdempotencyRepository } from '../../src/credits/idempotency.repository.js';
import { sql } from 'kysely';
import { storeAtMigration } from '../helpers/early-store.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

const HOUR_MS = 3_600_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

function details(n: number, key: string | undefined, atMs = T0 + n * 1000, answer?: object): DebitDetails {
  return {
    operation: 'CheckFrance',
    interface: 'json',
    query: `Q${n}`,
    requestId: `r${n}`,
    createdAt: new Date(atMs).toISOString(),
    ...(key === undefined ? {} : { idempotency: { key, result: JSON.stringify(answer ?? { n }), answer } }),
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
    /** The stored answers' ids, in order. */
    const answers = async () => (await app.services.storage.db.selectFrom('idempotency_results').select('id').orderBy('id').execute()).map((r) => r.id);
    return { app: t, writer, repository, ids, keys, answers };
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

  it('stores a frozen answer once for the records made while it is young, and purges answers only at twice the retention', async (ctx) => {
    const { writer, repository, ids, answers } = await setup(ctx);
    const clio = Object.freeze({ Description: 'RENAULT CLIO' });
    const at = (hours: number, seconds = 0) => T0 + hours * HOUR_MS + seconds * 1000;
    const write = (n: number, key: string, atMs: number) => writer.write([{ accountId: ids.rich, cost: 1, details: details(n, key, atMs, clio) }]);
    const found = async (key: string, nowMs: number) => (await repository.find(ids.rich, key, new Date(nowMs - 24 * HOUR_MS).toISOString()))?.result;
    // Two records of one answer in one batch, a third eleven hours later: one stored answer.
    expect(await writer.write([
      { accountId: ids.rich, cost: 1, details: details(1, 'k-a', at(0, 1), clio) },
      { accountId: ids.rich, cost: 1, details: details(2, 'k-b', at(0, 2), clio) },
    ])).toEqual([99, 98]);
    expect(await write(3, 'k-c', at(11))).toEqual([97]);
    expect(await answers()).toHaveLength(1);
    // Past half the retention the answer is stored again: the first row is not shared any more.
    expect(await write(4, 'k-d', at(12, 2))).toEqual([96]);
    expect(await answers()).toHaveLength(2);
    // The purge at hour 34 takes k-a and k-b, and no answer: k-c, made at hour 11, still needs the first.
    expect(await write(5, 'k-e', at(34))).toEqual([95]);
    const [first, second, third] = await answers();
    expect(await answers()).toHaveLength(3);
    expect(await found('k-a', at(34))).toBeUndefined();
    expect(await found('k-c', at(34, 1))).toBe(JSON.stringify(clio));
    // At hour 50 k-c and k-d have expired: the first answer goes (stored at hour 0, twice the retention ago), the others stay.
    expect(await write(6, 'k-f', at(50, 3))).toEqual([94]);
    const left = await answers();
    expect(left.slice(0, 2)).toEqual([second, third]);
    expect(left).not.toContain(first);
    expect(await found('k-e', at(50, 3))).toBe(JSON.stringify(clio));
    expect(await found('k-f', at(50, 3))).toBe(JSON.stringify(clio));
  });

  it('shares no answer a failed transaction stored: the next record of it stores its own', async (ctx) => {
    const { writer, repository, ids, answers } = await setup(ctx);
    const clio = Object.freeze({ Description: 'RENAULT CLIO' });
    await expect(
      writer.write([
        { accountId: ids.rich, cost: 1, details: details(1, 'k-1', T0 + 1000, clio) },
        { accountId: 999_999, cost: 0, details: details(2, 'k-2') },
      ]),
    ).rejects.toThrow();
    expect(await answers()).toEqual([]);
    // Another answer takes the next id (SQLite hands out the rolled-back one again), then the frozen one.
    expect(await writer.write([{ accountId: ids.rich, cost: 1, details: details(3, 'k-3') }])).toEqual([99]);
    expect(await writer.write([{ accountId: ids.rich, cost: 1, details: details(4, 'k-4', T0 + 4000, clio) }])).toEqual([98]);
    expect(await answers()).toHaveLength(2);
    const cutoff = new Date(T0 - 24 * HOUR_MS).toISOString();
    expect((await repository.find(ids.rich, 'k-3', cutoff))?.result).toBe(JSON.stringify({ n: 3 }));
    expect((await repository.find(ids.rich, 'k-4', cutoff))?.result).toBe(JSON.stringify(clio));
  });
});

describe.each(ENGINES)('migration 0020 on %s', (engine) => {
  it('moves the answers of the records already kept into idempotency_results, where a retry still finds them', async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    // A store at migration 0019 with two records as they were kept then, answers inline.
    const early = await storeAtMigration(engine, '0019-key-products');
    try {
      await sql`insert into accounts (username, credits, created_at) values ('old', 5, '2026-01-01T00:00:00.000Z')`.execute(early.db);
      for (const [key, result, at] of [['k-1', '{"n":1}', '2026-01-01T00:00:01.000Z'], ['k-2', '{"n":2}', '2026-01-01T00:00:02.000Z']]) {
        await sql`insert into idempotency_keys (account_id, idempotency_key, operation, query, result, charged, request_id, created_at)
          values (1, ${key}, 'CheckFrance', 'AB123CD', ${result}, 1, ${`r-${key}`}, ${at})`.execute(early.db);
      }
      await early.opened();

      const t = await createTestApp(early.env, undefined, 'sqlite');
      try {
        const repository = new IdempotencyRepository(t.services.storage);
        const cutoff = '2025-12-31T00:00:00.000Z';
        expect(await repository.find(1, 'k-1', cutoff)).toMatchObject({ result: '{"n":1}', requestId: 'r-k-1', charged: 1 });
        expect(await repository.find(1, 'k-2', cutoff)).toMatchObject({ result: '{"n":2}', requestId: 'r-k-2' });
        // A new record's answer is numbered after the moved ones (PostgreSQL's sequence moved on).
        const writer = new DebitWriter(t.services.storage, new CreditLedgerRepository(t.services.storage.db), { repository, retentionMs: 24 * HOUR_MS });
        expect(await writer.write([{ accountId: 1, cost: 1, details: details(3, 'k-3', Date.parse('2026-01-01T00:00:03.000Z')) }])).toEqual([4]);
        expect((await repository.find(1, 'k-3', cutoff))?.result).toBe('{"n":3}');
        expect((await t.services.storage.db.selectFrom('idempotency_results').select('id').orderBy('id').execute()).map((r) => r.id)).toEqual([1, 2, 3]);
      } finally {
        await t.app.close();
      }
    } finally {
      await early.remove();
    }
  });
});
