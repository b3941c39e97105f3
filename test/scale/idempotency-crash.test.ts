import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { freePort, killAll, PLATE, prepareAccount, sharedStore, spawnServer, startServer, stopServer, storeState, VEHICLE, waitReady } from './scale-harness.js';

/**
 * Issue 17 item 3, "a crash can take a paid answer with it": the real server is killed with
 * SIGKILL between a debit's COMMIT and the answer (fault-kill-after-debit-commit.ts, preloaded
 * into that server process only), and the client's retry with the same Idempotency-Key, on a
 * restarted server, is answered without a second debit.
 */

const FAULT = fileURLToPath(new URL('./fault-kill-after-debit-commit.ts', import.meta.url));

afterEach(() => {
  killAll();
});

describe.each(ENGINES)('a crash between the debit and the answer on %s', (engine) => {
  it('leaves the idempotency record with the debit, so the retry after a kill -9 is answered and not charged', async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    const store = await sharedStore(engine);
    try {
      const apiKey = await prepareAccount(store, 'retry', 5);
      const port = await freePort();
      const doomed = spawnServer(store.env, port, [FAULT]);
      await waitReady(doomed);
      const auth = `Basic ${Buffer.from(`retry:${apiKey}`).toString('base64')}`;
      const url = `http://127.0.0.1:${port}/api/json.aspx/CheckFrance/${PLATE}`;
      const headers = { authorization: auth, 'idempotency-key': 'crash-retry-1' };

      // The paid answer never arrives: the process dies after the COMMIT.
      await expect(fetch(url, { headers }).then((r) => r.text())).rejects.toThrow();
      expect((await doomed.exited).signal).toBe('SIGKILL');
      const afterCrash = await storeState(store, 'retry');
      expect(afterCrash.balance).toBe(4);
      expect(afterCrash.debits).toHaveLength(1);

      // The retry, on a server started again on the same store, gets the answer for free.
      const restarted = await startServer(store.env, port);
      const retry = await fetch(url, { headers });
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.headers.get('x-credits-charged')).toBe('0');
      expect(((await retry.json()) as { Description?: string }).Description).toBe(VEHICLE.Description);
      // The same key on the SOAP binding: the same stored answer, in SOAP's form, free too.
      const soap = await fetch(`http://127.0.0.1:${port}/api/reg.asmx`, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/CheckFrance"', 'idempotency-key': 'crash-retry-1' },
        body:
          '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
          `<CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>${PLATE}</RegistrationNumber><username>retry</username></CheckFrance>` +
          '</soap:Body></soap:Envelope>',
      });
      expect(soap.status).toBe(200);
      expect(soap.headers.get('idempotent-replayed')).toBe('true');
      expect(await soap.text()).toContain('<CheckFranceResult>');
      expect(await stopServer(restarted)).toBe(0);

      const final = await storeState(store, 'retry');
      expect(final.balance).toBe(4);
      expect(final.debits).toHaveLength(1);
      expect(final.entries.reduce((sum, e) => sum + e.delta, 0)).toBe(final.balance);
    } finally {
      killAll();
      await store.remove();
    }
  }, 120_000);
});
