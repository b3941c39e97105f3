import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AllAccountsUsage, CLOSED_DAY_GRACE_MS } from '../../src/accounts/all-accounts-usage.js';
import { LedgerQueries, type UsageRow } from '../../src/accounts/ledger-queries.js';
import type { Storage } from '../../src/storage/create-database.js';
import { enginesToTest, freshStorage } from '../helpers/engines.js';

/**
 * The operator overview's usage over every account with closed UTC days kept in process
 * (src/accounts/all-accounts-usage.ts), on both engines: whatever the clock and the range, the
 * answer is the store's uncached answer, row for row; closed days are read once; a day that ended
 * less than the grace ago is still read; the kept days are bounded.
 */
describe.each(await enginesToTest())('all-accounts usage with closed days kept, on %s', (engine) => {
  let storage: Storage;
  let cleanUp: () => Promise<void>;
  let queries: LedgerQueries;
  /** Every range the cache asked the store for. */
  let asked: { from: string; to: string }[];
  let now: number;
  const clock = { now: () => new Date(now) };
  let ann: number;
  let bob: number;

  beforeEach(async () => {
    ({ storage, cleanUp } = await freshStorage(engine, 'all-accounts-usage-'));
    queries = new LedgerQueries(storage.db);
    asked = [];
    ann = await account('ann');
    bob = await account('bob');
  });
  afterEach(async () => {
    await cleanUp();
  });

  async function account(username: string): Promise<number> {
    const row = await storage.db
      .insertInto('accounts')
      .values({ username, credits: 0, disabled: 0, require_api_key: 0, created_at: '2026-01-01T00:00:00.000Z', closed_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async function ledger(accountId: number, kind: string, operation: string | null, delta: number, at: string): Promise<void> {
    await sql`insert into ledger (account_id, kind, operation, interface, query, delta, balance_after, request_id, created_at)
      values (${accountId}, ${kind}, ${operation}, ${'json'}, ${'AB12CDE'}, ${delta}, ${0}, ${null}, ${at})`.execute(storage.db);
  }

  function cached(options: { maxDays?: number } = {}): AllAccountsUsage {
    const recording = {
      allAccountsUsage: (from: string, to: string): Promise<UsageRow[]> => {
        asked.push({ from, to });
        return queries.allAccountsUsage(from, to);
      },
    };
    return new AllAccountsUsage(recording, clock, options);
  }

  /** The cached answer, checked against the store's own. */
  async function same(usage: AllAccountsUsage, from: string, to: string): Promise<UsageRow[]> {
    const got = await usage.usage(from, to);
    expect(got).toEqual(await queries.allAccountsUsage(from, to));
    return got;
  }

  /** Rows on 1 to 4 November 2026 on both sides of each midnight, operations in both orders. */
  async function history(): Promise<void> {
    await ledger(ann, 'debit', 'CheckFrance', -1, '2026-10-31T23:59:59.999Z');
    await ledger(ann, 'debit', 'CheckFrance', -1, '2026-11-01T00:00:00.000Z');
    await ledger(bob, 'free', 'CheckUSA', 0, '2026-11-01T12:00:00.000Z');
    await ledger(ann, 'debit', 'CheckFrance', -2, '2026-11-01T23:59:59.999Z');
    await ledger(bob, 'debit', 'CheckUSA', -1, '2026-11-02T00:00:00.000Z');
    await ledger(ann, 'topup', null, 50, '2026-11-02T10:00:00.000Z');
    await ledger(ann, 'debit', 'CheckEuroNCap', -3, '2026-11-02T23:59:59.999Z');
    // 3 November has no lookups at all.
    await ledger(bob, 'debit', 'CheckFrance', -1, '2026-11-04T00:00:00.000Z');
    await ledger(bob, 'free', 'CheckFrance', 0, '2026-11-04T08:00:00.000Z');
  }

  it('answers as the store does, then reads only the open day for the same 30 days', async () => {
    await history();
    now = Date.parse('2026-11-04T09:00:00.000Z');
    const usage = cached();
    const from = '2026-10-06T00:00:00.000Z';
    const to = '2026-11-05T00:00:00.000Z';
    const first = await same(usage, from, to);
    expect(first.map((r) => `${r.day} ${r.operation}`)).toEqual([
      '2026-10-31 CheckFrance',
      '2026-11-01 CheckFrance',
      '2026-11-01 CheckUSA',
      '2026-11-02 CheckEuroNCap',
      '2026-11-02 CheckUSA',
      '2026-11-04 CheckFrance',
    ]);
    // One read for all of it: 29 closed days to keep, and the open day.
    expect(asked).toEqual([{ from, to }]);
    expect(usage.keptDays).toBe(29);

    // New rows of the open day are counted; the closed days are not read again.
    await ledger(ann, 'debit', 'CheckUSA', -1, '2026-11-04T08:30:00.000Z');
    asked = [];
    const second = await same(usage, from, to);
    expect(second).not.toEqual(first);
    expect(asked).toEqual([{ from: '2026-11-04T00:00:00.000Z', to }]);
  });

  it('keeps a day only once it ended more than the grace ago: rows committed just after midnight still count', async () => {
    await history();
    const from = '2026-11-03T00:00:00.000Z';
    const to = '2026-11-06T00:00:00.000Z';
    const usage = cached();
    // 4 November ended less than the grace ago: still read from the store every time.
    now = Date.parse('2026-11-05T00:00:00.000Z') + CLOSED_DAY_GRACE_MS - 1;
    await same(usage, from, to);
    await ledger(ann, 'debit', 'CheckUSA', -1, '2026-11-04T23:59:59.999Z'); // a batch committing around midnight
    asked = [];
    const late = await same(usage, from, to);
    expect(late).toContainEqual({ day: '2026-11-04', operation: 'CheckUSA', lookups: 1, freeLookups: 0, credits: 1 });
    expect(asked).toEqual([{ from: '2026-11-04T00:00:00.000Z', to }]);

    // At the grace's end 4 November is closed: read once more, then kept.
    now += 1;
    asked = [];
    await same(usage, from, to);
    expect(asked).toEqual([{ from: '2026-11-04T00:00:00.000Z', to }]);
    asked = [];
    await same(usage, from, to);
    expect(asked).toEqual([{ from: '2026-11-05T00:00:00.000Z', to }]);
  });

  it('reads the parts of days at either end of a range that is not whole days, and only those', async () => {
    await history();
    now = Date.parse('2026-11-10T12:00:00.000Z');
    const usage = cached();
    await same(usage, '2026-10-30T00:00:00.000Z', '2026-11-06T00:00:00.000Z');
    asked = [];
    const from = '2026-11-01T06:00:00.000Z';
    const to = '2026-11-04T06:00:00.000Z';
    const partial = await same(usage, from, to);
    expect(partial.find((r) => r.day === '2026-11-01' && r.operation === 'CheckFrance')).toEqual({ day: '2026-11-01', operation: 'CheckFrance', lookups: 1, freeLookups: 0, credits: 2 });
    expect(asked).toEqual([
      { from, to: '2026-11-02T00:00:00.000Z' },
      { from: '2026-11-04T00:00:00.000Z', to },
    ]);
    // Within one day, and a range that ends in the future.
    await same(usage, '2026-11-02T00:00:00.001Z', '2026-11-02T23:59:59.999Z');
    await same(usage, '2026-11-08T00:00:00.000Z', '2026-11-12T00:00:00.000Z');
  });

  it('keeps at most the days it is told, the least recently used going first, with the same answers', async () => {
    await history();
    now = Date.parse('2026-11-10T12:00:00.000Z');
    const usage = cached({ maxDays: 3 });
    await same(usage, '2026-10-30T00:00:00.000Z', '2026-11-06T00:00:00.000Z');
    expect(usage.keptDays).toBe(3);
    // The three kept are the last three read (3, 4, 5 November): 1 November is read again.
    asked = [];
    await same(usage, '2026-11-01T00:00:00.000Z', '2026-11-06T00:00:00.000Z');
    expect(asked).toEqual([{ from: '2026-11-01T00:00:00.000Z', to: '2026-11-03T00:00:00.000Z' }]);
    expect(usage.keptDays).toBe(3);
  });

  it('keeps nothing from a read that failed', async () => {
    await history();
    now = Date.parse('2026-11-10T12:00:00.000Z');
    let fail = true;
    const usage = new AllAccountsUsage(
      {
        allAccountsUsage: (from, to) => (fail ? Promise.reject(new Error('store down')) : queries.allAccountsUsage(from, to)),
      },
      clock,
    );
    await expect(usage.usage('2026-11-01T00:00:00.000Z', '2026-11-05T00:00:00.000Z')).rejects.toThrow('store down');
    expect(usage.keptDays).toBe(0);
    fail = false;
    await same(usage, '2026-11-01T00:00:00.000Z', '2026-11-05T00:00:00.000Z');
    expect(usage.keptDays).toBe(4);
  });
});
