import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';
import { sql } from 'kysely';
import type { LedgerEntry } from '../../src/credits/credit-ledger.repository.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, customer, FRANCE, operator } from '../admin/admin-harness.js';

/** A VIN with a valid check digit that no theft register lists: CheckStolen answers an empty list. */
const CLEAN_VIN = 'JH4KA7650MC012343';
const USA = { operation: 'CheckUSA', key: { RegistrationNumber: 'TEST1', State: 'NJ' }, vehicle: { Description: '2004 Dodge Durango' } };

/**
 * Issue 16: "each row says why it cost what it did". A lookup of an authenticated account that
 * costs nothing writes one ledger row of kind `free` (delta 0, the balance, its reason); charged
 * lookups are unchanged, anonymous ones write nothing, and the ledger's filters, CSV and usage
 * tell charged and free apart.
 */
describe.each(await enginesToTest())('free lookups in the ledger on %s', (engine) => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp({ ANONYMOUS_OPERATIONS: 'CheckStolen' }, undefined, engine);
    await t.importRecords([FRANCE, USA]);
  });
  afterEach(async () => t.close());

  const get = (url: string, username?: string, key?: string, headers: Record<string, string> = {}) =>
    t.app.inject({ url, headers: { ...(username !== undefined && key !== undefined ? { authorization: t.basic(username, key) } : {}), ...headers } });

  /** The account's ledger rows after its opening credits, oldest first. */
  async function rows(username: string): Promise<LedgerEntry[]> {
    return (await t.services.accounts.usage(username)).filter((r) => !(r.kind === 'topup' && r.query === 'initial credits'));
  }

  async function ledgerRowCount(): Promise<number> {
    const { n } = await t.services.storage.db
      .selectFrom('ledger')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  it('writes one free row "free test plate" for a test plate, with delta 0 and the balance, even for an account with 0 credits', async () => {
    const key = await t.account('tester', 0);
    await t.services.testPlates.add('CheckFrance', 'EG258MA', SYSTEM_ACTOR);
    const res = await get('/api/json.aspx/CheckFrance/eg-258-ma', 'tester', key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-credits-charged']).toBe('0');
    expect(await rows('tester')).toEqual([
      expect.objectContaining({ kind: 'free', freeReason: 'test-plate', delta: 0, balanceAfter: 0, operation: 'CheckFrance', interface: 'json', query: 'EG258MA', requestId: res.headers['x-request-id'] }),
    ]);
    expect((await t.services.accounts.show('tester')).credits).toBe(0);
  });

  it('writes one free row "free: no result" for an empty Euro NCAP search, on the XML bindings too', async () => {
    const key = await t.account('searcher', 7);
    const res = await get('/api/json.aspx/CheckEuroNCap/Nonexistent/Car', 'searcher', key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
    const soap = await get('/api/bespokeapi.asmx/CheckEuroNCap?Make=Nonexistent&Model=Car&username=searcher');
    expect(soap.statusCode, soap.body).toBe(200);
    expect(await rows('searcher')).toEqual([
      expect.objectContaining({ kind: 'free', freeReason: 'no-result', delta: 0, balanceAfter: 7, operation: 'CheckEuroNCap', interface: 'json' }),
      expect.objectContaining({ kind: 'free', freeReason: 'no-result', delta: 0, balanceAfter: 7, operation: 'CheckEuroNCap', interface: 'http-get' }),
    ]);
    expect((await t.services.accounts.show('searcher')).credits).toBe(7);
  });

  it('writes one free row "free: repeated request" for an Idempotency-Key replay, next to the one debit of the first lookup', async () => {
    const key = await t.account('retrier', 5);
    const first = await get('/api/json.aspx/CheckFrance/EG258MA', 'retrier', key, { 'idempotency-key': 'order-1' });
    const again = await get('/api/json.aspx/CheckFrance/EG258MA', 'retrier', key, { 'idempotency-key': 'order-1' });
    expect(first.headers['x-credits-charged']).toBe('1');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-credits-charged']).toBe('0');
    expect(await rows('retrier')).toEqual([
      expect.objectContaining({ kind: 'debit', freeReason: null, delta: -1, balanceAfter: 4, requestId: first.headers['x-request-id'] }),
      expect.objectContaining({ kind: 'free', freeReason: 'replay', delta: 0, balanceAfter: 4, query: 'EG258MA', requestId: again.headers['x-request-id'] }),
    ]);
  });

  it('writes a "free: repeated request" row for the loser of two racing requests with one Idempotency-Key', async () => {
    const key = await t.account('racer', 5);
    const answers = await Promise.all([1, 2].map(() => get('/api/json.aspx/CheckFrance/EG258MA', 'racer', key, { 'idempotency-key': 'race-1' })));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200]);
    expect(answers.map((a) => a.headers['x-credits-charged']).sort()).toEqual(['0', '1']);
    const replayed = answers.find((a) => a.headers['x-credits-charged'] === '0');
    const found = await rows('racer');
    expect(found.map((r) => [r.kind, r.freeReason, r.delta, r.balanceAfter])).toEqual([
      ['debit', null, -1, 4],
      ['free', 'replay', 0, 4],
    ]);
    expect(found[1]?.requestId).toBe(replayed?.headers['x-request-id']);
  });

  it('leaves charged lookups as they were: one debit row each, no free row', async () => {
    const key = await t.account('payer', 3);
    for (const path of ['CheckFrance/EG258MA', 'CheckUSA/test1/nj']) expect((await get(`/api/json.aspx/${path}`, 'payer', key)).headers['x-credits-charged']).toBe('1');
    expect((await rows('payer')).map((r) => [r.kind, r.delta, r.balanceAfter, r.query])).toEqual([
      ['debit', -1, 2, 'EG258MA'],
      ['debit', -1, 1, 'TEST1|NJ'],
    ]);
  });

  it('writes nothing for a failed lookup or an anonymous one; the same lookup with credentials writes its free row', async () => {
    const key = await t.account('vin', 2);
    const before = await ledgerRowCount();
    expect((await get('/api/json.aspx/CheckFrance/ZZ999ZZ', 'vin', key)).statusCode).toBe(500);
    const anonymous = await get(`/api/bespokeapi.asmx/CheckStolen?vinNumber=${CLEAN_VIN}`);
    expect(anonymous.statusCode, anonymous.body).toBe(200);
    expect(await ledgerRowCount()).toBe(before);
    const named = await get(`/api/bespokeapi.asmx/CheckStolen?vinNumber=${CLEAN_VIN}`, 'vin', key);
    expect(named.statusCode, named.body).toBe(200);
    expect(await rows('vin')).toEqual([expect.objectContaining({ kind: 'free', freeReason: 'no-result', operation: 'CheckStolen', query: CLEAN_VIN })]);
  });

  it('never tells the low-credit alerts about a free row; a charged lookup still does', async () => {
    const onDebit = vi.spyOn(t.services.alerting.alerts, 'onDebit');
    const key = await t.account('alerted', 1);
    await t.services.testPlates.add('CheckFrance', 'EG258MA', SYSTEM_ACTOR);
    await get('/api/json.aspx/CheckFrance/EG258MA', 'alerted', key);
    await get('/api/json.aspx/CheckEuroNCap/Nonexistent/Car', 'alerted', key);
    expect(onDebit).not.toHaveBeenCalled();
    expect((await get('/api/json.aspx/CheckUSA/TEST1/NJ', 'alerted', key)).headers['x-credits-charged']).toBe('1');
    expect(onDebit).toHaveBeenCalledTimes(1);
  });

  it('keeps every balance equal to its ledger under concurrent charged and free lookups of one account, one row per answer', async () => {
    const key = await t.account('busy', 20);
    await t.services.testPlates.add('CheckFrance', 'EG258MA', SYSTEM_ACTOR);
    const paths = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? 'CheckFrance/EG258MA' : 'CheckUSA/TEST1/NJ'));
    const answers = await Promise.all(paths.map((p) => get(`/api/json.aspx/${p}`, 'busy', key)));
    const free = answers.filter((a) => a.statusCode === 200 && a.headers['x-credits-charged'] === '0').length;
    const charged = answers.filter((a) => a.statusCode === 200 && a.headers['x-credits-charged'] === '1').length;
    expect(free).toBe(30);
    expect(charged).toBe(20);
    const all = await t.services.accounts.usage('busy');
    expect(all.filter((r) => r.kind === 'free')).toHaveLength(30);
    expect(all.filter((r) => r.kind === 'debit')).toHaveLength(20);
    expect(all.reduce((sum, r) => sum + r.delta, 0)).toBe((await t.services.accounts.show('busy')).credits);
    expect((await t.services.accounts.show('busy')).credits).toBe(0);
    // Every free row's balance lies between the opening balance and the closing one.
    expect(all.filter((r) => r.kind === 'free').every((r) => r.balanceAfter >= 0 && r.balanceAfter <= 20)).toBe(true);
  });

  it('answers a free lookup whose ledger row cannot be written, and counts and logs the loss; charged lookups are not affected', async () => {
    const key = await t.account('lossy', 2);
    await t.services.testPlates.add('CheckFrance', 'EG258MA', SYSTEM_ACTOR);
    // A store that refuses free rows (and only them): the transaction of their batch fails.
    if (engine === 'sqlite') {
      await sql`create trigger refuse_free before insert on ledger when new.kind = 'free' begin select raise(abort, 'free rows refused'); end`.execute(t.services.storage.db);
    } else {
      await sql`create function refuse_free() returns trigger language plpgsql as $$ begin raise exception 'free rows refused'; end $$`.execute(t.services.storage.db);
      await sql`create trigger refuse_free before insert on ledger for each row when (new.kind = 'free') execute function refuse_free()`.execute(t.services.storage.db);
    }
    const warn = vi.spyOn(t.app.log, 'warn');
    const res = await get('/api/json.aspx/CheckFrance/EG258MA', 'lossy', key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-credits-charged']).toBe('0');
    expect(await rows('lossy')).toEqual([]);
    const metrics = await t.app.inject({ url: '/metrics' });
    expect(metrics.body).toContain('vehicle_lookup_free_ledger_rows_lost_total{interface="json",reason="test-plate"} 1');
    expect(warn.mock.calls.some((call) => JSON.stringify(call).includes(String(res.headers['x-request-id'])))).toBe(true);
    expect((await get('/api/json.aspx/CheckUSA/TEST1/NJ', 'lossy', key)).headers['x-credits-charged']).toBe('1');
    expect((await rows('lossy')).map((r) => r.kind)).toEqual(['debit']);
  });

  describe('reading the ledger', () => {
    /** acme: a charged lookup, a test plate, an empty search, a replay, a grant and a removal. */
    async function busyAccount(): Promise<ReturnType<typeof as>> {
      const call = as(t, await operator(t, 'root'));
      const { apiKey } = (await call('POST', '/admin/api/accounts', { username: 'acme', credits: 5 })).json<{ apiKey: string }>();
      await t.services.testPlates.add('CheckUSA', 'TEST1|NJ', SYSTEM_ACTOR);
      await get('/api/json.aspx/CheckFrance/EG258MA', 'acme', apiKey, { 'idempotency-key': 'k-1' });
      await get('/api/json.aspx/CheckFrance/EG258MA', 'acme', apiKey, { 'idempotency-key': 'k-1' });
      await get('/api/json.aspx/CheckUSA/TEST1/NJ', 'acme', apiKey);
      await get('/api/json.aspx/CheckEuroNCap/Nonexistent/Car', 'acme', apiKey);
      await call('POST', '/admin/api/accounts/acme/credits', { operation: 'grant', amount: 10, reference: 'INV-1' });
      await call('POST', '/admin/api/accounts/acme/credits', { operation: 'remove', amount: 2, reference: 'CN-1' });
      return call;
    }

    const reasons = async (call: ReturnType<typeof as>, url: string) => {
      const res = await call('GET', url);
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ rows: Array<{ reason: string }> }>().rows.map((r) => r.reason);
    };

    it('says why each row cost what it did, and filters charged, free, all lookups and credit movements', async () => {
      const call = await busyAccount();
      const base = '/admin/api/accounts/acme/ledger';
      expect(await reasons(call, base)).toEqual(['removal', 'top-up', 'free: no result', 'free test plate', 'free: repeated request', 'charged', 'initial credits']);
      expect(await reasons(call, `${base}?type=charged`)).toEqual(['charged']);
      expect(await reasons(call, `${base}?type=free`)).toEqual(['free: no result', 'free test plate', 'free: repeated request']);
      expect(await reasons(call, `${base}?type=lookups`)).toEqual(['free: no result', 'free test plate', 'free: repeated request', 'charged']);
      expect(await reasons(call, `${base}?type=credits`)).toEqual(['removal', 'top-up', 'initial credits']);
      expect(await reasons(call, `${base}?type=free&operation=CheckUSA`)).toEqual(['free test plate']);
      // The older filter keeps working: true is charged lookups, false every other row.
      expect(await reasons(call, `${base}?charged=true`)).toEqual(['charged']);
      expect(await reasons(call, `${base}?charged=false`)).toEqual(['removal', 'top-up', 'free: no result', 'free test plate', 'free: repeated request', 'initial credits']);
      const both = await call('GET', `${base}?type=free&charged=true`);
      expect(both.statusCode).toBe(400);
      expect(both.json()).toMatchObject({ error: 'invalid-request', field: 'charged' });
      const unknown = await call('GET', `${base}?type=refunds`);
      expect(unknown.statusCode).toBe(400);
    });

    it('writes the reason into the CSV, with the query of free lookups', async () => {
      const call = await busyAccount();
      const csv = await call('GET', '/admin/api/accounts/acme/ledger.csv?type=free');
      expect(csv.statusCode).toBe(200);
      const lines = csv.body.trim().split('\r\n');
      expect(lines).toHaveLength(4);
      expect(lines[1]).toMatch(/^\d+,[^,]+,free: no result,0,4,CheckEuroNCap,json,NONEXISTENT\|CAR,/);
      expect(lines[2]).toMatch(/^\d+,[^,]+,free test plate,0,4,CheckUSA,json,TEST1\|NJ,/);
      expect(lines[3]).toMatch(/^\d+,[^,]+,free: repeated request,0,4,CheckFrance,json,EG258MA,/);
    });

    it('counts free lookups in usage with 0 credits, beside the charged ones', async () => {
      const call = await busyAccount();
      const today = new Date().toISOString().slice(0, 10);
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      const usage = await call('GET', `/admin/api/accounts/acme/usage?from=${today}T00:00:00Z&to=${tomorrow}T00:00:00Z`);
      expect(usage.json<{ days: unknown[] }>().days).toEqual([
        { day: today, operation: 'CheckEuroNCap', lookups: 1, freeLookups: 1, credits: 0 },
        { day: today, operation: 'CheckFrance', lookups: 2, freeLookups: 1, credits: 1 },
        { day: today, operation: 'CheckUSA', lookups: 1, freeLookups: 1, credits: 0 },
      ]);
    });

    it("shows a customer only its own account's free rows, whatever the filter", async () => {
      await busyAccount();
      const otherKey = await t.account('other', 0);
      await get('/api/json.aspx/CheckUSA/TEST1/NJ', 'other', otherKey);
      const own = as(t, await customer(t, 'other', 'owner@other'));
      for (const query of ['', '?type=free', '?type=lookups', '?charged=false']) {
        const res = await own('GET', `/account/api/ledger${query}`);
        expect(res.statusCode, query).toBe(200);
        const found = res.json<{ rows: Array<{ reason: string; query: string | null }> }>().rows;
        expect(found.filter((r) => r.reason.startsWith('free')), query).toEqual([expect.objectContaining({ reason: 'free test plate', query: 'TEST1|NJ' })]);
      }
      const csv = await own('GET', '/account/api/ledger.csv?type=free');
      expect(csv.body.trim().split('\r\n')).toHaveLength(2);
      // The customer API has no way to name another account.
      expect((await own('GET', '/account/api/ledger?username=acme')).statusCode).toBe(400);
    });
  });
});
