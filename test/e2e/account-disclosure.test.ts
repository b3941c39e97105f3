import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

// Issue 17 item 10: on the XML bindings, the answer to a username must not tell a stranger whether
// the account exists or what state it is in. Unknown names keep the original's "Your username is
// incorrect"; an account that requires its API key or is disabled answers the same to a caller
// without that key, and the precise reason to a caller who sent it.

const VEHICLE = { Description: 'RENAULT CLIO V', RegistrationYear: '2019' };
const PLATE = 'AB123CD';

interface Answer {
  readonly status: number;
  readonly body: string;
}

let t: TestApp;
let strict: TestApp;
const keys: Record<string, string> = {};

/** The same lookup over HTTP GET and SOAP 1.1, as `username`, with optional Basic credentials. */
async function ask(app: TestApp, username: string, authorization?: string): Promise<{ get: Answer; soap: Answer }> {
  const headers = authorization === undefined ? {} : { authorization };
  const get = await app.app.inject({ url: `/api/reg.asmx/CheckFrance?RegistrationNumber=${PLATE}&username=${username}`, headers });
  const soap = await app.app.inject({
    method: 'POST',
    url: '/api/reg.asmx',
    headers: { ...headers, 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/CheckFrance"' },
    payload:
      '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
      `<CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>${PLATE}</RegistrationNumber><username>${username}</username></CheckFrance>` +
      '</soap:Body></soap:Envelope>',
  });
  return { get: { status: get.statusCode, body: get.body }, soap: { status: soap.statusCode, body: soap.body } };
}

beforeAll(async () => {
  t = await createTestApp();
  await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: PLATE }, vehicle: VEHICLE }]);
  for (const name of ['keyed', 'off', 'keyedoff']) keys[name] = await t.account(name, 5);
  await t.services.accounts.setRequireApiKey('keyed', true);
  await t.services.accounts.setDisabled('off', true);
  await t.services.accounts.setRequireApiKey('keyedoff', true);
  await t.services.accounts.setDisabled('keyedoff', true);

  strict = await createTestApp({ REQUIRE_API_KEY: 'true' });
  await strict.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: PLATE }, vehicle: VEHICLE }]);
  keys.someone = await strict.account('someone', 5);
});
afterAll(async () => {
  await t.close();
  await strict.close();
});

describe('account state on the XML bindings without the API key (issue 17 item 10)', () => {
  it('answers an unknown username with the original "Your username is incorrect"', async () => {
    const { get, soap } = await ask(t, 'ghost');
    expect(get).toEqual({ status: 500, body: 'Your username is incorrect\r\n' });
    expect(soap.status).toBe(500);
    expect(soap.body).toContain('<faultcode>soap:Client</faultcode><faultstring>Server was unable to process request. ---&gt; Your username is incorrect</faultstring>');
  });

  it('answers an account that requires its API key, asked without it, as an unknown username', async () => {
    expect(await ask(t, 'keyed')).toEqual(await ask(t, 'ghost'));
  });

  it('answers an account that requires its API key, asked with a wrong key, as an unknown username', async () => {
    expect(await ask(t, 'keyed', t.basic('keyed', 'not-the-key'))).toEqual(await ask(t, 'ghost', t.basic('ghost', 'not-the-key')));
  });

  it("answers an account that requires its API key, asked with another account's key, as an unknown username", async () => {
    expect(await ask(t, 'keyed', t.basic('off', keys.off ?? ''))).toEqual(await ask(t, 'ghost'));
  });

  it('answers a disabled account, asked without its key, as an unknown username', async () => {
    expect(await ask(t, 'off')).toEqual(await ask(t, 'ghost'));
    expect(await ask(t, 'keyedoff')).toEqual(await ask(t, 'ghost'));
  });

  it('answers every account as an unknown username under REQUIRE_API_KEY when the key is missing', async () => {
    expect(await ask(strict, 'someone')).toEqual(await ask(strict, 'ghost'));
  });

  it('costs nothing in any of these states', async () => {
    for (const name of ['keyed', 'off', 'keyedoff']) expect((await t.services.accounts.show(name)).credits).toBe(5);
    expect((await strict.services.accounts.show('someone')).credits).toBe(5);
  });
});

describe('account state on the XML bindings with the API key', () => {
  it('tells a caller who sent the correct key that the account is disabled', async () => {
    const { get, soap } = await ask(t, 'off', t.basic('off', keys.off ?? ''));
    expect(get).toEqual({ status: 500, body: 'Account off is disabled\r\n' });
    expect(soap.body).toContain('Server was unable to process request. ---&gt; Account off is disabled</faultstring>');
    const both = await ask(t, 'keyedoff', t.basic('keyedoff', keys.keyedoff ?? ''));
    expect(both.get.body).toBe('Account keyedoff is disabled\r\n');
  });

  it('answers an account that requires its key when the correct key is sent', async () => {
    const { get, soap } = await ask(t, 'keyed', t.basic('keyed', keys.keyed ?? ''));
    expect(get.status).toBe(200);
    expect(soap.status).toBe(200);
    const fromStrict = await ask(strict, 'someone', strict.basic('someone', keys.someone ?? ''));
    expect(fromStrict.get.status).toBe(200);
  });
});

describe('account state on the XML bindings with several keys (issue 16)', () => {
  // Each answered lookup here costs a credit; the tests above leave 'keyed' only a few.
  beforeAll(async () => {
    await t.services.accounts.grantCredits({ account: 'keyed', amount: 100 });
  });

  it('takes any live key of the account as its key: a second key answers, and tells a disabled account its state', async () => {
    const second = await t.services.accounts.createKey('keyed', 'second');
    expect((await ask(t, 'keyed', t.basic('keyed', second.apiKey))).get.status).toBe(200);
    const offSecond = await t.services.accounts.createKey('off', 'second');
    expect((await ask(t, 'off', t.basic('off', offSecond.apiKey))).get.body).toBe('Account off is disabled\r\n');
  });

  it('answers a revoked or expired key like no key: as an unknown username', async () => {
    const revoked = await t.services.accounts.createKey('keyed', 'revoked');
    await t.services.accounts.revokeKey('keyed', revoked.key.id);
    expect(await ask(t, 'keyed', t.basic('keyed', revoked.apiKey))).toEqual(await ask(t, 'ghost'));
    const rolled = await t.services.accounts.createKey('keyedoff', 'rolled');
    // A grace period of 0: the old key stops at once.
    await t.services.accounts.rollKey('keyedoff', rolled.key.id, 0);
    expect(await ask(t, 'keyedoff', t.basic('keyedoff', rolled.apiKey))).toEqual(await ask(t, 'ghost'));
  });

  it('takes a rolled key during its grace period', async () => {
    const rolled = await t.services.accounts.createKey('keyed', 'graced');
    const next = await t.services.accounts.rollKey('keyed', rolled.key.id, 3600);
    expect((await ask(t, 'keyed', t.basic('keyed', rolled.apiKey))).get.status).toBe(200);
    expect((await ask(t, 'keyed', t.basic('keyed', next.apiKey))).get.status).toBe(200);
  });
});
