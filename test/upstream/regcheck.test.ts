import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import type { OperationDeclaration } from '../../src/catalogue/operation.js';
import { readXml, type XmlElement } from '../../src/xml/xml-reader.js';
import { readAnswer } from '../../src/providers/regcheck/regcheck.client.js';
import { codecOf } from '../../src/results/index.js';
import { enginesToTest } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { answerText, BESPOKE_NS, FakeRegcheck, fixtureOf, REG_NS, REGCHECK_FIXTURES, type RegcheckFixture } from '../fakes/fake-regcheck.js';
import { declared } from './harness.js';

/**
 * The original service as the last provider (issue 24), end to end through the app: what the
 * original sent is what every binding serves, answers with data cost their price once, and
 * everything else (not found, a refused username, no credit, an HTML page, a 5xx, a timeout) is
 * free. Each test app has its own store; the fake original counts its calls.
 */

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const USERNAME = 'gateway-op';

let fake: FakeRegcheck;
const apps: TestApp[] = [];

const regcheckEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
  REGCHECK_USERNAME: USERNAME,
  REGCHECK_BASE_URL: fake.baseUrl,
  REGCHECK_TIMEOUT_MS: '3000',
  REGCHECK_BUDGET_MS: '3000',
  REGCHECK_BREAKER_FAILURES: '100',
  ...overrides,
});

interface Client {
  readonly t: TestApp;
  readonly key: string;
  readonly auth: string;
  credits(): Promise<number>;
  ledger(): Promise<Array<{ kind: string; delta: number; freeReason: string | null }>>;
}

async function clientOf(t: TestApp, username: string, credits = 10): Promise<Client> {
  const key = await t.account(username, credits);
  return {
    t,
    key,
    auth: t.basic(username, key),
    credits: async () => (await t.services.accounts.show(username)).credits,
    ledger: async () =>
      (await t.services.accounts.usage(username))
        .filter((r) => !(r.kind === 'topup' && r.query === 'initial credits'))
        .map((r) => ({ kind: r.kind, delta: r.delta, freeReason: r.freeReason })),
  };
}

async function appWith(env: Record<string, string>, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<TestApp> {
  const t = await createTestApp(env, undefined, engine);
  apps.push(t);
  return t;
}

beforeAll(async () => {
  fake = await FakeRegcheck.start({ username: USERNAME, slowMs: 4000 });
});
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  fake.credits = 1000;
});
afterAll(async () => {
  await fake.close();
});

/** The service path of a fixture's operation on our side (the same service as the original's). */
const servicePath = (f: RegcheckFixture): string => (f.service === 'reg' ? '/api/reg.asmx' : '/api/bespokeapi.asmx');
const namespaceOf = (f: RegcheckFixture): string => (f.service === 'reg' ? REG_NS : BESPOKE_NS);

function jsonPath(op: OperationDeclaration, params: ReadonlyArray<readonly [string, string]>): string {
  const values = new Map(params);
  const segments = op.jsonPath.segments.map((s) => encodeURIComponent(values.get(s.parameter) ?? ''));
  while (segments.at(-1) === '') segments.pop();
  return `/api/json.aspx/${op.name}/${segments.join('/')}`;
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function soapBody(f: RegcheckFixture, op: OperationDeclaration): string {
  const params = [...f.params, ...(Catalogue.takesUsername(op) ? [['username', 'carol'] as const] : [])];
  return `<${op.name} xmlns="${namespaceOf(f)}">${params.map(([k, v]) => `<${k}>${escapeXml(v)}</${k}>`).join('')}</${op.name}>`;
}

/** An element as data: name, attributes (no namespace declarations), text where it has no children, children. */
function tree(el: XmlElement): unknown {
  const attributes = el.attributes.filter((a) => a.uri !== 'http://www.w3.org/2000/xmlns/').map((a) => `${a.local}=${a.value}`);
  return el.children.length === 0 ? [el.local, attributes, el.text] : [el.local, attributes, el.children.map(tree)];
}

/** The content of the first element named `local` in a document, as data. */
function contentOf(text: string, local: string): unknown {
  const find = (el: XmlElement): XmlElement | undefined => (el.local === local ? el : el.children.map(find).find((x) => x !== undefined));
  const el = find(readXml(text));
  if (!el) throw new Error(`no ${local} in the answer`);
  return el.children.length === 0 ? el.text : el.children.map(tree);
}

describe('every result type of the original, re-served on the five bindings as it came', () => {
  for (const f of REGCHECK_FIXTURES) {
    it(`${f.operation} (${f.resultType}): GET and POST answer the original's bytes, SOAP 1.1 and 1.2 the same content, JSON its body`, async () => {
      const t = await appWith(regcheckEnv());
      const carol = await clientOf(t, 'carol', 100);
      const op = declared(f.operation);
      const original = answerText(f);
      const params = new URLSearchParams(f.params.map(([k, v]): [string, string] => [k, v]));
      if (Catalogue.takesUsername(op)) params.append('username', 'carol');
      const headers = { authorization: carol.auth };

      const get = await t.app.inject({ url: `${servicePath(f)}/${op.name}?${params.toString()}`, headers });
      expect(get.statusCode, get.body).toBe(200);
      expect(get.body).toBe(original);
      const post = await t.app.inject({ method: 'POST', url: `${servicePath(f)}/${op.name}`, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: params.toString() });
      expect(post.body).toBe(original);

      const envelope = (ns: string): string => `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body>${soapBody(f, op)}</soap:Body></soap:Envelope>`;
      const action = f.service === 'reg' ? `${REG_NS}/${op.name}` : `${BESPOKE_NS}${op.name}`;
      const soap11 = await t.app.inject({ method: 'POST', url: servicePath(f), headers: { ...headers, 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` }, payload: envelope(SOAP11) });
      const soap12 = await t.app.inject({ method: 'POST', url: servicePath(f), headers: { ...headers, 'content-type': `application/soap+xml; charset=utf-8; action="${action}"` }, payload: envelope(SOAP12) });
      for (const soap of [soap11, soap12]) {
        expect(soap.statusCode, soap.body).toBe(200);
        expect(contentOf(soap.body, `${op.name}Result`)).toEqual(contentOf(original, f.resultType));
      }

      const json = await t.app.inject({ url: jsonPath(op, f.params), headers });
      expect(json.statusCode, json.body).toBe(200);
      const record = readAnswer(op, original);
      if (f.resultType === 'Vehicle') {
        // The vehicleJson text byte for byte: on JSON the body, in every XML answer the element's text.
        const vehicleJson = (record as { vehicleJson: string }).vehicleJson;
        expect(json.body).toBe(vehicleJson);
        for (const res of [get, post, soap11, soap12]) expect(contentOf(res.body, 'vehicleJson')).toBe(vehicleJson);
      } else {
        expect(JSON.parse(json.body)).toEqual(codecOf(op.resultType).jsonBody(codecOf(op.resultType).fromRecord(record, { operation: op, baseUrl: '' })));
      }
      // The XML texts of an MOT history (kept as the original wrote them) are not part of its JSON body.
      if (f.resultType === 'UKMOTData') expect(Object.keys(JSON.parse(json.body) as object).sort()).toEqual(['ExtendedInformation', 'Tests', 'taxDate']);
      // Five bindings, one upstream call: the rest came from the shared cache.
      expect(fake.server.requests.filter((r) => r.path === `${servicePath(f)}/${op.name}`)).toHaveLength(1);
    });
  }
});

describe.each(await enginesToTest())('money and the original (%s)', (engine) => {
  it('charges an answer with data once, and asks the original once for several accounts within the cache TTL', async () => {
    const t = await appWith(regcheckEnv(), engine);
    const [alice, bob, carol] = [await clientOf(t, 'alice'), await clientOf(t, 'bob'), await clientOf(t, 'carol')];
    const before = fake.calls('Check');
    for (const c of [alice, bob, carol]) {
      const res = await t.app.inject({ url: '/api/json.aspx/Check/LV04XYZ', headers: { authorization: c.auth } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-credits-charged']).toBe('1');
    }
    expect(fake.calls('Check') - before).toBe(1);
    for (const c of [alice, bob, carol]) {
      expect(await c.credits()).toBe(9);
      expect(await c.ledger()).toEqual([{ kind: 'debit', delta: -1, freeReason: null }]);
    }
  });

  it('makes one upstream call for concurrent identical requests (single flight)', async () => {
    const t = await appWith(regcheckEnv({ REGCHECK_CACHE_TTL_S: '0', REGCHECK_NOT_FOUND_TTL_S: '0' }), engine);
    const clients = [await clientOf(t, 'a1'), await clientOf(t, 'a2'), await clientOf(t, 'a3'), await clientOf(t, 'a4')];
    const before = fake.calls('CheckAustralia');
    fake.server.script({ status: 200, text: answerText(fixtureOf('CheckAustralia')), headers: { 'content-type': 'text/xml; charset=utf-8' }, delayMs: 300 });
    const answers = await Promise.all(clients.map((c) => t.app.inject({ url: '/api/json.aspx/CheckAustralia/ZZT481/NSW', headers: { authorization: c.auth } })));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
    expect(fake.calls('CheckAustralia') - before).toBe(1);
    for (const c of clients) expect(await c.credits()).toBe(9);
    // REGCHECK_CACHE_TTL_S=0 keeps nothing: the next request asks again.
    await t.app.inject({ url: '/api/json.aspx/CheckAustralia/ZZT481/NSW', headers: { authorization: clients[0]?.auth ?? '' } });
    expect(fake.calls('CheckAustralia') - before).toBe(2);
  });

  it('answers "Lookup failed" as a free not-found, cached for the not-found TTL', async () => {
    const t = await appWith(regcheckEnv(), engine);
    const alice = await clientOf(t, 'alice');
    const before = fake.calls('Check');
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ url: '/api/reg.asmx/Check?RegistrationNumber=NOPE01&username=alice' });
      expect(res.statusCode).toBe(500);
      expect(res.body).toMatch(/Lookup failed/);
    }
    expect(fake.calls('Check') - before).toBe(1);
    expect(await alice.credits()).toBe(10);
    expect(await alice.ledger()).toEqual([]);
  });

  it('is free and "temporarily unavailable" when the original refuses the username, has no credit, sends HTML, fails or is slow', async () => {
    const wrong = await appWith(regcheckEnv({ REGCHECK_USERNAME: 'not-the-operator' }), engine);
    const w = await clientOf(wrong, 'alice');
    const refused = await wrong.app.inject({ url: '/api/json.aspx/Check/LV04XYZ', headers: { authorization: w.auth } });
    expect(refused.statusCode).toBe(500);
    expect(refused.body).toMatch(/temporarily unavailable/);
    expect(refused.body).not.toMatch(/not-the-operator/);
    expect(await w.credits()).toBe(10);

    const t = await appWith(regcheckEnv(), engine);
    const alice = await clientOf(t, 'alice');
    // The balance read at start has answered (1000): the original's own "Out of credit" is tested here, not the gateway's gate.
    await t.regcheck?.balance.check();
    fake.credits = 0;
    const empty = await t.app.inject({ url: '/api/json.aspx/Check/LV04XYZ', headers: { authorization: alice.auth } });
    expect(empty.body).toMatch(/temporarily unavailable/);
    // Out of funds takes the original out (issue 32: not asked again on every lookup) until its
    // balance says otherwise: topped up, the balance read brings it back.
    fake.credits = 1000;
    const whileOut = fake.calls('Check');
    const gated = await t.app.inject({ url: '/api/json.aspx/Check/MAINT200', headers: { authorization: alice.auth } });
    expect(gated.body).toMatch(/temporarily unavailable/);
    expect(fake.calls('Check')).toBe(whileOut);
    await t.regcheck?.balance.check();
    for (const plate of ['MAINT200', 'MAINT503', 'ERR500', 'ERR503', 'SLOW1']) {
      const before = fake.calls('Check');
      const res = await t.app.inject({ url: `/api/json.aspx/Check/${plate}`, headers: { authorization: alice.auth } });
      expect(res.statusCode, plate).toBe(500);
      expect(res.body, plate).toMatch(/temporarily unavailable/);
      // Never asked twice for one request: no retry after a 5xx or a timeout.
      expect(fake.calls('Check') - before, plate).toBe(1);
    }
    expect(await alice.credits()).toBe(10);
    expect(await alice.ledger()).toEqual([]);
  });

  it('serves an answer without data (an empty theft report) free, with its free ledger row', async () => {
    const t = await appWith(regcheckEnv(), engine);
    const alice = await clientOf(t, 'alice');
    fake.server.script({ status: 200, text: answerText({ ...fixtureOf('CheckStolen'), content: [] }), headers: { 'content-type': 'text/xml; charset=utf-8' } });
    const res = await t.app.inject({ url: '/api/json.aspx/CheckStolen/WVWZZZ1JZXW000002', headers: { authorization: alice.auth } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('[]');
    expect(await alice.credits()).toBe(10);
    expect(await alice.ledger()).toEqual([{ kind: 'free', delta: 0, freeReason: 'no-result' }]);
  });
});

describe('its place in the chains', () => {
  it('is asked after the store: an imported record answers without an upstream call', async () => {
    const t = await appWith(regcheckEnv());
    const alice = await clientOf(t, 'alice');
    await t.importRecords([{ operation: 'Check', key: { RegistrationNumber: 'LV04XYZ' }, vehicle: { Description: 'OURS' } }]);
    const before = fake.calls();
    const res = await t.app.inject({ url: '/api/json.aspx/Check/LV04XYZ', headers: { authorization: alice.auth } });
    expect(JSON.parse(res.body)).toMatchObject({ Description: 'OURS' });
    expect(fake.calls()).toBe(before);
  });

  it('asks only the operations REGCHECK_OPERATIONS lists', async () => {
    const t = await appWith(regcheckEnv({ REGCHECK_OPERATIONS: 'CheckAustralia' }));
    const alice = await clientOf(t, 'alice');
    const before = fake.calls();
    const res = await t.app.inject({ url: '/api/json.aspx/Check/LV04XYZ', headers: { authorization: alice.auth } });
    expect(res.statusCode).toBe(500);
    expect(fake.calls()).toBe(before);
  });
});

describe('an answer of the original, imported into a store without the original', () => {
  it('answers the same bytes offline on every binding', async () => {
    const online = await appWith(regcheckEnv());
    const alice = await clientOf(online, 'alice');
    const first = await online.app.inject({ url: '/api/json.aspx/CheckAustralia/ZZT481/NSW', headers: { authorization: alice.auth } });
    const get = await online.app.inject({ url: '/api/reg.asmx/CheckAustralia?RegistrationNumber=ZZT481&State=NSW&username=alice' });
    const offline = await appWith({});
    const bob = await clientOf(offline, 'bob');
    await offline.importRecords([{ operation: 'CheckAustralia', key: { RegistrationNumber: 'ZZT481', State: 'NSW' }, vehicle: readAnswer(declared('CheckAustralia'), answerText(fixtureOf('CheckAustralia'))) }]);
    const again = await offline.app.inject({ url: '/api/json.aspx/CheckAustralia/ZZT481/NSW', headers: { authorization: bob.auth } });
    expect(again.body).toBe(first.body);
    const getAgain = await offline.app.inject({ url: '/api/reg.asmx/CheckAustralia?RegistrationNumber=ZZT481&State=NSW&username=bob' });
    expect(getAgain.body).toBe(get.body);
    expect(await bob.credits()).toBe(8);
  });
});
