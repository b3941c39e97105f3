import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';

const VEHICLE = { Description: 'RENAULT CLIO', CarMake: { CurrentTextValue: 'RENAULT' }, CarModel: { CurrentTextValue: 'CLIO' } };

describe.each(ENGINES)('credits on %s', (engine) => {
  let t: TestApp;
  let base: string;

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    t = await createTestApp({}, undefined, engine);
    await t.importRecords([
      { operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE },
      { operation: 'CheckUSA', key: { RegistrationNumber: 'TEST1', State: 'NJ' }, vehicle: { Description: '2004 Dodge Durango' } },
    ]);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'skip') await t.close();
  });

  async function ledger(username: string) {
    return t.services.accounts.usage(username);
  }

  describe('credits', () => {
    it('gives exactly 50 answers to 200 concurrent lookups against 50 credits, ending at 0 with 50 debit rows', async () => {
      const key = await t.account('pool', 50);
      const auth = t.basic('pool', key);
      const responses = await Promise.all(
        Array.from({ length: 200 }, () => fetch(`${base}/api/json.aspx/CheckFrance/AB123CD`, { headers: { authorization: auth } })),
      );
      const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, text: await r.text() })));
      const served = bodies.filter((b) => b.status === 200);
      const refused = bodies.filter((b) => b.status === 500);
      expect(served).toHaveLength(50);
      expect(served.every((b) => (JSON.parse(b.text) as { Description: string }).Description === 'RENAULT CLIO')).toBe(true);
      expect(refused).toHaveLength(150);
      expect(refused.every((b) => b.text.startsWith('Out of credit'))).toBe(true);
      expect((await t.services.accounts.show('pool')).credits).toBe(0);
      const rows = await ledger('pool');
      const debits = rows.filter((r) => r.kind === 'debit');
      expect(debits).toHaveLength(50);
      expect(debits.every((r) => r.delta === -1 && r.operation === 'CheckFrance' && r.interface === 'json' && r.query === 'AB123CD')).toBe(true);
      // Each debit's balance-after is distinct: 49 down to 0, one row per served answer.
      expect(debits.map((r) => r.balanceAfter).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      expect(new Set(debits.map((r) => r.requestId)).size).toBe(50);
    });

    it('keeps balance equal to top-ups minus debits', async () => {
      const key = await t.account('acct', 3);
      await t.services.accounts.grantCredits({ account: 'acct', amount: 2, note: 'invoice 7' });
      for (let i = 0; i < 4; i++) {
        await fetch(`${base}/api/json.aspx/CheckFrance/AB123CD`, { headers: { authorization: t.basic('acct', key) } });
      }
      const rows = await ledger('acct');
      const sum = rows.reduce((s, r) => s + r.delta, 0);
      expect((await t.services.accounts.show('acct')).credits).toBe(sum);
      expect(sum).toBe(1);
      expect(rows.filter((r) => r.kind === 'topup').map((r) => r.delta)).toEqual([3, 2]);
    });

    it('does not debit credits when the plate is not found, the input is invalid or the method is unknown', async () => {
      const key = await t.account('careful', 5);
      const auth = { authorization: t.basic('careful', key) };
      for (const path of ['CheckFrance/ZZ999ZZ', 'CheckUSA/TEST1/XX', 'CheckUSA/TEST1', 'NoSuchMethod/AB123CD', 'VinCheck/123']) {
        const res = await fetch(`${base}/api/json.aspx/${path}`, { headers: auth });
        expect(res.status, path).toBe(500);
      }
      expect((await t.services.accounts.show('careful')).credits).toBe(5);
      expect((await ledger('careful')).filter((r) => r.kind === 'debit')).toEqual([]);
    });

    it('debits once per successful lookup with our request id (not the client X-Request-Id), interface and normalised query on the ledger row', async () => {
      const key = await t.account('exact', 5);
      const res = await fetch(`${base}/api/json.aspx/CheckUSA/test1/nj`, { headers: { authorization: t.basic('exact', key), 'x-request-id': 'req-42' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-credits-charged')).toBe('1');
      expect(res.headers.get('x-credits-remaining')).toBe('4');
      const [debit] = (await ledger('exact')).filter((r) => r.kind === 'debit');
      const ours = res.headers.get('x-request-id');
      expect(ours).not.toBe('req-42');
      expect(debit).toMatchObject({ operation: 'CheckUSA', interface: 'json', query: 'TEST1|NJ', delta: -1, balanceAfter: 4, requestId: ours });
    });

    it('answers a free test plate without charging, even with no credits left, and records it as a free ledger row', async () => {
      const key = await t.account('tester', 0);
      await t.services.testPlates.add('CheckFrance', 'AB123CD', SYSTEM_ACTOR);
      const res = await fetch(`${base}/api/json.aspx/CheckFrance/ab-123-cd`, { headers: { authorization: t.basic('tester', key) } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-credits-charged')).toBe('0');
      expect((await ledger('tester')).map((r) => [r.kind, r.freeReason, r.delta, r.balanceAfter, r.query])).toEqual([['free', 'test-plate', 0, 0, 'AB123CD']]);
      // The same plate on another operation is not free.
      const other = await fetch(`${base}/api/json.aspx/CheckUSA/TEST1/NJ`, { headers: { authorization: t.basic('tester', key) } });
      expect(await other.text()).toMatch(/^Out of credit/);
    });

    it('charges the operation cost once per lookup across sequential requests', async () => {
      const key = await t.account('seq', 10);
      for (let i = 0; i < 7; i++) {
        expect((await fetch(`${base}/api/json.aspx/CheckFrance/AB123CD`, { headers: { authorization: t.basic('seq', key) } })).status).toBe(200);
      }
      expect((await t.services.accounts.show('seq')).credits).toBe(3);
    });
  });
});
