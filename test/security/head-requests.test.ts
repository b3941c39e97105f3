/**
 * Issue 17 item 1: Fastify answers HEAD with every GET route, so a HEAD of a lookup ran the lookup
 * and debited a credit for an answer it never sends. Lookup routes now refuse HEAD (405 with
 * Allow); pages that cost nothing keep answering it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await createTestApp();
  await t.importRecords(sampleLines());
  key = await t.account('header', 10);
});
afterAll(async () => {
  await t.close();
});

async function ledgerRows(): Promise<number> {
  return (await t.services.accounts.usage('header')).filter((row) => row.kind === 'debit').length;
}

describe('HEAD requests', () => {
  it('refuses HEAD on the HTTP GET binding with 405 and Allow, without a lookup or a debit', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/api/reg.asmx/CheckUSA?RegistrationNumber=7KDJ294&State=CA&username=header' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, POST');
    expect(res.headers['x-credits-charged']).toBeUndefined();
    expect((await t.services.accounts.show('header')).credits).toBe(10);
    expect(await ledgerRows()).toBe(0);
  });

  it('refuses HEAD on the bespoke service too', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/api/bespokeapi.asmx/CheckEuroNCap?make=Volvo&username=header' });
    expect(res.statusCode).toBe(405);
    expect((await t.services.accounts.show('header')).credits).toBe(10);
  });

  it('refuses HEAD on the JSON interface with 405 and Allow, without a lookup or a debit', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/api/json.aspx/CheckFrance/FK482TR', headers: { authorization: t.basic('header', key) } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, OPTIONS');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect((await t.services.accounts.show('header')).credits).toBe(10);
    expect(await ledgerRows()).toBe(0);
  });

  it('still charges the GET that a HEAD is refused for (the refusal is HEAD-only)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/json.aspx/CheckFrance/FK482TR', headers: { authorization: t.basic('header', key) } });
    expect(res.statusCode).toBe(200);
    expect((await t.services.accounts.show('header')).credits).toBe(9);
    expect(await ledgerRows()).toBe(1);
  });

  it.each(['/api/reg.asmx', '/api/reg.asmx?WSDL', '/api/bespokeapi.asmx?op=CheckEuroNCap', '/healthz', '/readyz', '/ajax/getcredits.aspx?username=header'])(
    'keeps answering HEAD of %s, which costs nothing',
    async (url) => {
      const get = await t.app.inject({ method: 'GET', url });
      const head = await t.app.inject({ method: 'HEAD', url });
      expect(head.statusCode).toBe(get.statusCode);
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
      expect(head.body).toBe('');
    },
  );
});
