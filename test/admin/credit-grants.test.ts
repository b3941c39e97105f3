import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { consoleLogin, post } from '../console/console-harness.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { as, operator, type Login } from './admin-harness.js';

/**
 * One credit-grant path (issue 22 item 3) and grants idempotent by reference (issue 23): the
 * console, the admin API and the CLI grant through AccountService.grantCredits, which writes the
 * ledger row, the audit row and the alert re-arm in one transaction.
 */
describe.each(await enginesToTest())('credit grants on %s', (engine) => {
  let t: TestApp;
  let root: Login;

  beforeAll(async () => {
    t = await createTestApp({}, undefined, engine);
    root = await operator(t, 'root');
  });
  afterAll(async () => t.close());

  const fired = async (username: string): Promise<number[]> => {
    const { id } = await t.services.accounts.show(username);
    return (await t.services.storage.db.selectFrom('credit_alert_fired').select('threshold').where('account_id', '=', id).execute()).map((r) => r.threshold);
  };
  const fire = async (username: string, threshold: number): Promise<void> => {
    const { id } = await t.services.accounts.show(username);
    await t.services.storage.db.insertInto('credit_alert_fired').values({ account_id: id, threshold, fired_at: new Date().toISOString() }).execute();
  };
  const ledgerRows = async (username: string): Promise<Array<{ kind: string; delta: number; reference: string | null }>> => {
    const { id } = await t.services.accounts.show(username);
    return t.services.storage.db.selectFrom('ledger').select(['kind', 'delta', 'reference']).where('account_id', '=', id).orderBy('id').execute();
  };

  it('re-arms a fired low-credit alert at once when the admin API or the console grants credits, with or without a reference', async () => {
    await t.account('low', 2);
    await fire('low', 5);
    expect((await as(t, root)('POST', '/admin/api/accounts/low/credits', { operation: 'grant', amount: 10 })).statusCode).toBe(200);
    expect(await fired('low')).toEqual([]);

    await fire('low', 50);
    const session = await consoleLogin(t, 'root');
    const granted = await post(t, '/console/admin/accounts/low/credits', { operation: 'grant', amount: 100, reference: 'INV-1', note: '' }, session);
    expect(granted.statusCode, granted.body).toBe(303);
    expect(await fired('low')).toEqual([]);
    // No empty-string reference stands for "none" any more.
    expect((await ledgerRows('low')).map((r) => r.reference)).toEqual([null, null, 'INV-1']);
  });

  it('grants once per reference: a repeat answers the first grant (Idempotent-Replayed), another amount is refused', async () => {
    await t.account('payer', 0);
    const grant = (amount: number, reference: string) => as(t, root)('POST', '/admin/api/accounts/payer/credits', { operation: 'grant', amount, reference });
    const first = await grant(10, 'INV-7');
    expect(first.json()).toEqual({ username: 'payer', credits: 10 });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    await grant(5, 'INV-8');
    const repeat = await grant(10, 'INV-7');
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json()).toEqual({ username: 'payer', credits: 10 });
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    const other = await grant(11, 'INV-7');
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: 'already-exists' });
    expect((await t.services.accounts.show('payer')).credits).toBe(15);
    // A removal may cite the grant's reference (a refund of that invoice): it is its own change.
    expect((await as(t, root)('POST', '/admin/api/accounts/payer/credits', { operation: 'remove', amount: 10, reference: 'INV-7' })).json()).toEqual({ username: 'payer', credits: 5 });
    expect((await ledgerRows('payer')).map((r) => [r.kind, r.delta, r.reference])).toEqual([
      ['topup', 10, 'INV-7'],
      ['topup', 5, 'INV-8'],
      ['removal', -10, 'INV-7'],
    ]);
    const audit = await t.services.storage.db.selectFrom('audit_log').select('action').where('target', '=', 'payer').where('action', 'like', 'credits.%').execute();
    expect(audit).toHaveLength(3);
  });

  it('grants once when the same reference is sent eight times at once to two instances', async () => {
    await t.account('racer', 0);
    const second: BuiltApp = await buildApp(t.config);
    try {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? t.app : second.app).inject({
            method: 'POST',
            url: '/admin/api/accounts/racer/credits',
            headers: { cookie: root.cookie, 'x-csrf-token': root.csrf },
            payload: { operation: 'grant', amount: 3, reference: 'PO-1' },
          }),
        ),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(Array.from({ length: 8 }, () => 200));
      expect(answers.map((a) => a.json<{ credits: number }>().credits)).toEqual(Array.from({ length: 8 }, () => 3));
      expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
    } finally {
      await second.app.close();
    }
    expect(await ledgerRows('racer')).toEqual([{ kind: 'topup', delta: 3, reference: 'PO-1' }]);
  });
});
