import { CompiledQuery, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccountRepository } from '../../src/accounts/account.repository.js';
import { LedgerQueries } from '../../src/accounts/ledger-queries.js';
import { LookupStatsRepository } from '../../src/ops/lookup-stats.repository.js';
import type { Storage } from '../../src/storage/create-database.js';
import { enginesToTest, freshStorage } from '../helpers/engines.js';

/**
 * The operator overview's aggregates in the store (issues 16 and 18), on both engines: usage by UTC
 * day and operation over one account and over all of them, the plans that keep them fast on a
 * million ledger rows (bench:usage measures them), the accounts close to zero, and the hourly
 * lookup statistics every instance adds to.
 */
describe.each(await enginesToTest())('usage aggregates on %s', (engine) => {
  let storage: Storage;
  let cleanUp: () => Promise<void>;

  beforeEach(async () => {
    ({ storage, cleanUp } = await freshStorage(engine, 'usage-aggregates-'));
  });
  afterEach(async () => {
    await cleanUp();
  });

  async function account(username: string, credits = 0, extra: { disabled?: number; closed_at?: string } = {}): Promise<number> {
    const row = await storage.db
      .insertInto('accounts')
      .values({ username, credits, disabled: extra.disabled ?? 0, require_api_key: 0, created_at: '2026-01-01T00:00:00.000Z', closed_at: extra.closed_at ?? null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** A ledger row; `kind` is any text, as rows written by later versions may carry kinds this one does not know. */
  async function ledger(accountId: number, kind: string, operation: string | null, delta: number, at: string): Promise<void> {
    await sql`insert into ledger (account_id, kind, operation, interface, query, delta, balance_after, request_id, created_at)
      values (${accountId}, ${kind}, ${operation}, ${'json'}, ${'AB12CDE'}, ${delta}, ${0}, ${null}, ${at})`.execute(storage.db);
  }

  async function history(): Promise<{ ann: number; bob: number }> {
    const ann = await account('ann');
    const bob = await account('bob');
    // Both sides of the midnight between 1 and 2 November, and the edges of the range asked for.
    await ledger(ann, 'debit', 'CheckFrance', -1, '2026-10-31T23:59:59.999Z'); // before `from`
    await ledger(ann, 'debit', 'CheckFrance', -1, '2026-11-01T00:00:00.000Z');
    await ledger(ann, 'debit', 'CheckFrance', -2, '2026-11-01T23:59:59.999Z');
    await ledger(ann, 'debit', 'CheckUSA', -1, '2026-11-01T12:00:00.000Z');
    await ledger(ann, 'debit', 'CheckFrance', -1, '2026-11-02T00:00:00.000Z');
    await ledger(bob, 'debit', 'CheckFrance', -3, '2026-11-01T08:00:00.000Z');
    await ledger(bob, 'debit', 'CheckUSA', -1, '2026-11-02T23:59:59.999Z');
    await ledger(bob, 'debit', 'CheckUSA', -1, '2026-11-03T00:00:00.000Z'); // at `to`: excluded
    // A free lookup (a test plate): a lookup that cost nothing.
    await ledger(bob, 'free', 'CheckFrance', 0, '2026-11-01T09:00:00.000Z');
    // Not usage: top-ups, removals, and a kind this version does not write.
    await ledger(ann, 'topup', null, 100, '2026-11-01T10:00:00.000Z');
    await ledger(bob, 'removal', null, -5, '2026-11-01T11:00:00.000Z');
    await ledger(bob, 'refund', 'CheckFrance', 1, '2026-11-01T09:30:00.000Z');
    return { ann, bob };
  }

  const FROM = '2026-11-01T00:00:00.000Z';
  const TO = '2026-11-03T00:00:00.000Z';

  it('sums every account\'s lookups (charged and free) and credits by UTC day and operation, within [from, to), without other kinds of rows', async () => {
    await history();
    expect(await new LedgerQueries(storage.db).allAccountsUsage(FROM, TO)).toEqual([
      { day: '2026-11-01', operation: 'CheckFrance', lookups: 4, freeLookups: 1, credits: 6 },
      { day: '2026-11-01', operation: 'CheckUSA', lookups: 1, freeLookups: 0, credits: 1 },
      { day: '2026-11-02', operation: 'CheckFrance', lookups: 1, freeLookups: 0, credits: 1 },
      { day: '2026-11-02', operation: 'CheckUSA', lookups: 1, freeLookups: 0, credits: 1 },
    ]);
  });

  it('sums one account\'s usage the same way, without the other accounts\' rows', async () => {
    const { ann, bob } = await history();
    const queries = new LedgerQueries(storage.db);
    expect(await queries.usage(ann, FROM, TO)).toEqual([
      { day: '2026-11-01', operation: 'CheckFrance', lookups: 2, freeLookups: 0, credits: 3 },
      { day: '2026-11-01', operation: 'CheckUSA', lookups: 1, freeLookups: 0, credits: 1 },
      { day: '2026-11-02', operation: 'CheckFrance', lookups: 1, freeLookups: 0, credits: 1 },
    ]);
    expect(await queries.usage(bob, FROM, TO)).toEqual([
      { day: '2026-11-01', operation: 'CheckFrance', lookups: 2, freeLookups: 1, credits: 3 },
      { day: '2026-11-02', operation: 'CheckUSA', lookups: 1, freeLookups: 0, credits: 1 },
    ]);
  });

  /**
   * The plan the engine picks for a query, as text. On a table this small PostgreSQL rightly prefers
   * a sequential scan, so sequential and bitmap scans are turned off for the question: which index
   * would it read? That is what a dropped or reshaped index changes.
   */
  async function plan(query: CompiledQuery): Promise<string> {
    if (engine === 'sqlite') {
      const { rows } = await storage.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
      return rows.map((r) => r.detail).join('\n');
    }
    await sql`vacuum analyze ledger`.execute(storage.db);
    return storage.db.connection().execute(async (connection) => {
      await sql`set enable_seqscan = off`.execute(connection);
      await sql`set enable_bitmapscan = off`.execute(connection);
      try {
        const { rows } = await connection.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]));
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await sql`reset enable_seqscan`.execute(connection);
        await sql`reset enable_bitmapscan`.execute(connection);
      }
    });
  }

  const covering = (index: string) => (engine === 'sqlite' ? `USING COVERING INDEX ${index}` : `Index Only Scan using ${index}`);

  it('answers both usage queries from a covering index, reading no table row', async () => {
    const { ann, bob } = await history();
    const queries = new LedgerQueries(storage.db);
    const one = await plan(queries.usageQuery(ann, FROM, TO).compile());
    expect(one, one).toContain(covering('ledger_account_usage'));
    if (engine === 'postgres') {
      // Statistics of a realistic table: many accounts' rows, most of them outside the range asked
      // for. On a dozen rows PostgreSQL picks among the covering indexes by a coin toss of costs.
      await sql`insert into ledger (account_id, kind, operation, interface, query, delta, balance_after, request_id, created_at)
        select case when g % 2 = 0 then ${ann}::integer else ${bob}::integer end, case when g % 10 = 0 then 'topup' else 'debit' end, 'CheckFrance', 'json', 'AB12CDE', -1, 0, null,
          to_char(timestamp '2026-01-01' + (g || ' minutes')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        from generate_series(1, 20000) g`.execute(storage.db);
    }
    const all = await plan(queries.usageQuery(undefined, FROM, TO).compile());
    expect(all, all).toContain(covering('ledger_kind_usage'));
  });

  it('lists open, enabled accounts at or below the threshold, lowest balance first, with their number', async () => {
    await account('zero', 0);
    await account('twenty', 20);
    await account('twenty-one', 21);
    await account('five', 5);
    await account('also-five', 5);
    await account('off', 0, { disabled: 1 });
    await account('gone', 0, { disabled: 1, closed_at: '2026-02-01T00:00:00.000Z' });
    const repository = new AccountRepository(storage.db);
    const low = await repository.lowBalance(20, 3);
    expect(low.accounts.map((a) => [a.username, a.credits])).toEqual([
      ['zero', 0],
      ['also-five', 5],
      ['five', 5],
    ]);
    expect(low.total).toBe(4);
    expect((await repository.lowBalance(4, 10)).accounts.map((a) => a.username)).toEqual(['zero']);
  });

  it('adds lookup counts to the hour\'s row (instances add, never overwrite) and sums hours in [from, to) per interface', async () => {
    const stats = new LookupStatsRepository(storage.db);
    const hour = (h: number) => `2026-11-01T${String(h).padStart(2, '0')}:00:00.000Z`;
    await storage.transaction((tx) =>
      stats.add(tx, [
        { hour: hour(9), interface: 'json', operation: 'CheckFrance', outcome: 'success', count: 5 },
        { hour: hour(9), interface: 'json', operation: 'CheckFrance', outcome: 'not_found', count: 1 },
        { hour: hour(10), interface: 'soap11', operation: 'CheckUSA', outcome: 'success', count: 2 },
        { hour: hour(11), interface: 'json', operation: 'CheckFrance', outcome: 'success', count: 100 },
      ]),
    );
    // A second instance's flush of the same hour and series.
    await storage.transaction((tx) =>
      stats.add(tx, [
        { hour: hour(9), interface: 'json', operation: 'CheckFrance', outcome: 'success', count: 3 },
        { hour: hour(9), interface: 'json', operation: 'CheckUSA', outcome: 'unauthorized', count: 2 },
      ]),
    );
    expect(await stats.byInterface(hour(9), hour(11))).toEqual([
      { interface: 'json', total: 11, successes: 8, errors: { unauthorized: 2, not_found: 1 }, successRate: 8 / 11 },
      { interface: 'soap11', total: 2, successes: 2, errors: {}, successRate: 1 },
    ]);
    const rows = await storage.db.selectFrom('lookup_stats').selectAll().where('hour', '=', hour(9)).where('outcome', '=', 'success').execute();
    expect(rows.map((r) => r.count)).toEqual([8]);
    expect(await stats.byInterface(hour(12), hour(13))).toEqual([]);
  });
});
