/**
 * Idempotent retries (issue 17 item 3): a repeat of a charged lookup with the same Idempotency-Key,
 * account and query answers the stored result without a second debit, on every binding, on both
 * engines, across two instances of one store, exactly once under concurrency, until the retention
 * runs out. The crash between a debit's COMMIT and its answer is test/scale/idempotency-crash.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import type { Clock } from '../../src/shared/clock.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { SYSTEM_ACTOR } from '../../src/audit/audit-log.js';

const PLATE = 'AB123CD';
const CLIO = { Description: 'RENAULT CLIO', CarMake: { CurrentTextValue: 'RENAULT' }, CarModel: { CurrentTextValue: 'CLIO' } };
const MEGANE = { Description: 'RENAULT MEGANE', CarMake: { CurrentTextValue: 'RENAULT' }, CarModel: { CurrentTextValue: 'MEGANE' } };
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const HOUR_MS = 3_600_000;

const BINDINGS = ['json', 'soap11', 'soap12', 'http-get', 'http-post'] as const;
type Binding = (typeof BINDINGS)[number];

/** A clock the test moves by hand (the retention is measured on it). */
class ManualClock implements Clock {
  constructor(public ms: number) {}
  now(): Date {
    return new Date(this.ms);
  }
  millis(): number {
    return this.ms;
  }
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

describe.each(ENGINES)('idempotent retries on %s', (engine) => {
  let t: TestApp;
  let base: string;
  let clock: ManualClock;
  let apiKey: string;
  const others: BuiltApp[] = [];

  beforeEach(async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    clock = new ManualClock(Date.parse('2026-03-01T10:00:00Z'));
    t = await createTestApp({}, clock, engine);
    await t.importRecords([
      { operation: 'CheckFrance', key: { RegistrationNumber: PLATE }, vehicle: CLIO },
      { operation: 'CheckFrance', key: { RegistrationNumber: 'XY987ZT' }, vehicle: MEGANE },
    ]);
    apiKey = await t.account('alice', 10);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'skip') return;
    for (const other of others.splice(0)) await other.app.close();
    await t.close();
  });

  /** One CheckFrance lookup by alice on `binding`, with `key` as its Idempotency-Key if given. */
  async function lookup(binding: Binding, key: string | undefined, plate = PLATE, at = base): Promise<Answer> {
    const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
    let res: Response;
    const body = (ns: string) =>
      `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body>` +
      `<CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>${plate}</RegistrationNumber><username>alice</username></CheckFrance>` +
      '</soap:Body></soap:Envelope>';
    switch (binding) {
      case 'json':
        res = await fetch(`${at}/api/json.aspx/CheckFrance/${plate}`, { headers: { ...headers, authorization: t.basic('alice', apiKey) } });
        break;
      case 'soap11':
        res = await fetch(`${at}/api/reg.asmx`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/CheckFrance"' },
          body: body(SOAP11),
        });
        break;
      case 'soap12':
        res = await fetch(`${at}/api/reg.asmx`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/soap+xml; charset=utf-8; action="http://regcheck.org.uk/CheckFrance"' },
          body: body(SOAP12),
        });
        break;
      case 'http-get':
        res = await fetch(`${at}/api/reg.asmx/CheckFrance?RegistrationNumber=${plate}&username=alice`, { headers });
        break;
      case 'http-post':
        res = await fetch(`${at}/api/reg.asmx/CheckFrance`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
          body: `RegistrationNumber=${plate}&username=alice`,
        });
        break;
    }
    return { status: res.status, headers: res.headers, body: await res.text() };
  }

  async function balance(): Promise<number> {
    return (await t.services.accounts.show('alice')).credits;
  }

  async function debits() {
    return (await t.services.accounts.usage('alice')).filter((e) => e.kind === 'debit');
  }

  async function storedKeys(): Promise<number> {
    const row = await t.services.storage.db
      .selectFrom('idempotency_keys')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A second app on the same store (the same SQLite file, or the same PostgreSQL database). */
  async function secondInstance(): Promise<string> {
    const config = loadConfig({
      DATA_DIR: t.dataDir,
      LOG_LEVEL: 'silent',
      SEED_DEMO: 'false',
      VIN_DECODER: 'off',
      ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
    });
    const other = await buildApp(config, { clock });
    others.push(other);
    return other.app.listen({ port: 0, host: '127.0.0.1' });
  }

  describe.each(BINDINGS)('on %s', (binding) => {
    it('answers a repeat with the same key from the stored result, marked as a replay, without a second debit', async () => {
      const first = await lookup(binding, 'order-1001');
      expect(first.status).toBe(200);
      expect(first.body).toContain('RENAULT CLIO');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(await balance()).toBe(9);

      const again = await lookup(binding, 'order-1001');
      expect(again.status).toBe(200);
      expect(again.body).toBe(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      if (binding === 'json') {
        expect(first.headers.get('x-credits-charged')).toBe('1');
        expect(again.headers.get('x-credits-charged')).toBe('0');
        expect(again.headers.get('x-credits-remaining')).toBe('9');
      }
      expect(await balance()).toBe(9);
      const rows = await debits();
      expect(rows).toHaveLength(1);
      expect(rows[0]?.requestId).toBe(first.headers.get('x-request-id'));
      expect(rows[0]?.interface).toBe(binding);

      // Without a key, the same lookup is charged as before.
      expect((await lookup(binding, undefined)).status).toBe(200);
      expect(await balance()).toBe(8);
    });

    it('refuses the same key with a different query in the interface form and charges nothing', async () => {
      expect((await lookup(binding, 'order-1002')).status).toBe(200);
      const other = await lookup(binding, 'order-1002', 'XY987ZT');
      expect(other.body).not.toContain('MEGANE');
      expect(other.body).toContain('Idempotency-Key order-1002 was already used for CheckFrance AB123CD');
      if (binding === 'json') {
        expect(other.status).toBe(422);
        expect(other.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      } else if (binding === 'soap11') {
        expect(other.status).toBe(500);
        expect(other.body).toContain('<faultcode>soap:Client</faultcode>');
      } else if (binding === 'soap12') {
        expect(other.status).toBe(500);
        expect(other.body).toContain('<soap:Value>soap:Sender</soap:Value>');
      } else {
        expect(other.status).toBe(500);
        expect(other.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      }
      expect(await balance()).toBe(9);
      expect(await debits()).toHaveLength(1);
    });

    it('refuses a malformed key in the interface form before anything is charged', async () => {
      for (const bad of ['has space', 'a,b', 'x'.repeat(256), 'cl\u00e9']) {
        const answer = await lookup(binding, bad);
        expect(answer.status, bad).toBe(500);
        expect(answer.body).toContain('Idempotency-Key must be 1 to 255 characters');
        expect(answer.body).not.toContain('RENAULT');
      }
      expect(await balance()).toBe(10);
      expect(await storedKeys()).toBe(0);
    });
  });

  it('answers a repeat on another binding with the stored result in that binding form, and the stored data even after the record changed', async () => {
    const first = await lookup('json', 'cross-1');
    expect(first.status).toBe(200);
    await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: PLATE }, vehicle: { ...CLIO, Description: 'RENAULT CLIO V' } }]);
    const soap = await lookup('soap11', 'cross-1');
    expect(soap.status).toBe(200);
    expect(soap.headers.get('idempotent-replayed')).toBe('true');
    expect(soap.body).toContain('<CheckFranceResult>');
    expect(soap.body).toContain('"Description":"RENAULT CLIO"');
    expect(soap.body).not.toContain('CLIO V');
    const json = await lookup('json', 'cross-1');
    expect(json.body).toBe(first.body);
    expect(await balance()).toBe(9);
    // A new lookup sees the new record.
    expect((await lookup('json', 'cross-2')).body).toContain('RENAULT CLIO V');
  });

  it('answers a retry from its record after the account ran out of credit, and refuses a new key then', async () => {
    const first = await lookup('json', 'spent-1');
    expect(first.status).toBe(200);
    await t.services.accounts.removeCredits({ account: 'alice', amount: 9 });
    const again = await lookup('json', 'spent-1');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toBe(first.body);
    const soap = await lookup('soap11', 'spent-1');
    expect(soap.status).toBe(200);
    expect(soap.headers.get('idempotent-replayed')).toBe('true');
    expect((await lookup('json', 'spent-2')).status).toBe(500);
    expect(await balance()).toBe(0);
    expect(await storedKeys()).toBe(1);
  });

  it("answers a retry from its record after its API key's cap was spent, and refuses a new key then", async () => {
    const { apiKey: capped } = await t.services.accounts.createKey('alice', 'capped', { cap: { credits: 1, period: 'day' } });
    const get = (key: string) =>
      fetch(`${base}/api/json.aspx/CheckFrance/${PLATE}`, { headers: { authorization: t.basic('alice', capped), 'idempotency-key': key } });
    const first = await get('cap-1');
    expect(first.status).toBe(200);
    const body = await first.text();
    const again = await get('cap-1');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(body);
    const refused = await get('cap-2');
    expect(refused.status).toBe(429);
    expect(await balance()).toBe(9);
  });

  it('refuses a key reused for another cached vehicle, charging nothing, and still answers its own retry', async () => {
    // Both vehicles in the record cache first: the conflicting lookup needs no provider.
    expect((await lookup('json', undefined, 'XY987ZT')).status).toBe(200);
    const first = await lookup('json', 'cached-1');
    expect(first.status).toBe(200);
    expect(await balance()).toBe(8);
    const other = await lookup('json', 'cached-1', 'XY987ZT');
    expect(other.status).toBe(422);
    expect(other.body).toContain('cached-1');
    const soap = await lookup('soap11', 'cached-1', 'XY987ZT');
    expect(soap.status).toBe(500);
    expect(soap.body).toContain('already used');
    expect(await balance()).toBe(8);
    expect((await debits()).length).toBe(2);
    expect((await lookup('json', 'cached-1')).body).toBe(first.body);
    expect(await balance()).toBe(8);
  });

  it("stores a cached record's answer once for every key that paid for it, and a changed record's anew", async () => {
    const storedAnswers = async (): Promise<number> =>
      Number((await t.services.storage.db.selectFrom('idempotency_results').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow()).n);
    const firsts = [];
    for (const key of ['share-1', 'share-2', 'share-3']) firsts.push(await lookup('json', key));
    expect(firsts.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(await storedKeys()).toBe(3);
    expect(await storedAnswers()).toBe(1);
    await t.importRecords([{ operation: 'CheckFrance', key: { RegistrationNumber: PLATE }, vehicle: { ...CLIO, Description: 'RENAULT CLIO V' } }]);
    const changed = await lookup('json', 'share-4');
    expect(changed.body).toContain('RENAULT CLIO V');
    expect(await storedAnswers()).toBe(2);
    // Each key is answered with what it paid for: the three the old record, the fourth the new one.
    for (const [i, key] of ['share-1', 'share-2', 'share-3'].entries()) {
      const again = await lookup('json', key);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toBe(firsts[i]?.body);
      expect(again.body).not.toContain('CLIO V');
    }
    expect((await lookup('json', 'share-4')).body).toBe(changed.body);
    expect(await balance()).toBe(6);
  });

  /**
   * Identical lookups started in one turn of the event loop (inject: no socket between them), so
   * every one passes the replay stage before any debit commits: the race is real on SQLite too.
   */
  async function raceOn(apps: readonly BuiltApp[], key: string, count: number) {
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) => {
        const app = (apps[i % apps.length] as BuiltApp).app;
        return i % 2 === 0
          ? app.inject({ method: 'GET', url: `/api/json.aspx/CheckFrance/${PLATE}`, headers: { authorization: t.basic('alice', apiKey), 'idempotency-key': key } })
          : app.inject({ method: 'GET', url: `/api/reg.asmx/CheckFrance?RegistrationNumber=${PLATE}&username=alice`, headers: { 'idempotency-key': key } });
      }),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array.from({ length: count }, () => 200));
    expect(answers.every((a) => a.body.includes('RENAULT CLIO'))).toBe(true);
    return answers.filter((a) => a.headers['idempotent-replayed'] === undefined).length;
  }

  it('debits once when identical requests with the same key race', async () => {
    expect(await raceOn([t], 'race-1', 12)).toBe(1);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => lookup(BINDINGS[i % BINDINGS.length] as Binding, 'race-1')));
    expect(answers.every((a) => a.status === 200 && a.headers.get('idempotent-replayed') === 'true')).toBe(true);
    expect(await balance()).toBe(9);
    expect(await debits()).toHaveLength(1);
    expect(await storedKeys()).toBe(1);
  });

  it('shares keys between two instances of one store, and debits once when they race', async () => {
    const second = await secondInstance();
    expect((await lookup('json', 'two-1')).status).toBe(200);
    const there = await lookup('http-get', 'two-1', PLATE, second);
    expect(there.status).toBe(200);
    expect(there.headers.get('idempotent-replayed')).toBe('true');
    expect(await balance()).toBe(9);

    expect(await raceOn([t, ...others], 'two-2', 10)).toBe(1);
    expect(await balance()).toBe(8);
    expect(await debits()).toHaveLength(2);
  });

  it('charges again once the retention has passed, and purges expired keys on write', async () => {
    expect((await lookup('json', 'old-1')).status).toBe(200);
    expect((await lookup('json', 'old-2')).status).toBe(200);
    clock.ms += 24 * HOUR_MS - 1;
    expect((await lookup('json', 'old-1')).headers.get('idempotent-replayed')).toBe('true');
    expect(await balance()).toBe(8);
    clock.ms += 1;
    const expired = await lookup('json', 'old-1');
    expect(expired.status).toBe(200);
    expect(expired.headers.get('idempotent-replayed')).toBeNull();
    expect(expired.headers.get('x-credits-charged')).toBe('1');
    expect(await balance()).toBe(7);
    // old-1 was replaced by the new claim; old-2 (expired) is purged by a keyed write, at most
    // once a minute per process (the retry above, itself a keyed write, purged a moment ago).
    expect(await storedKeys()).toBe(2);
    clock.ms += 60_000;
    expect((await lookup('json', 'old-3')).status).toBe(200);
    expect(await storedKeys()).toBe(2);
    // The same key on another query is free to use once its record expired.
    clock.ms += 24 * HOUR_MS;
    expect((await lookup('json', 'old-1', 'XY987ZT')).body).toContain('MEGANE');
  });

  it('keeps nothing for a free lookup or an unpaid one, so a retry after a top-up is charged', async () => {
    await t.services.testPlates.add('CheckFrance', 'XY987ZT', SYSTEM_ACTOR);
    const free = await fetch(`${base}/api/json.aspx/CheckFrance/XY987ZT`, { headers: { authorization: t.basic('alice', apiKey), 'idempotency-key': 'free-1' } });
    expect(free.status).toBe(200);
    expect(free.headers.get('x-credits-charged')).toBe('0');
    expect(await storedKeys()).toBe(0);

    const poorKey = await t.account('poor', 0);
    const refused = await fetch(`${base}/api/json.aspx/CheckFrance/${PLATE}`, { headers: { authorization: t.basic('poor', poorKey), 'idempotency-key': 'poor-1' } });
    expect(refused.status).toBe(500);
    expect(await refused.text()).toMatch(/^Out of credit/);
    await t.services.accounts.grantCredits({ account: 'poor', amount: 1, note: 'top-up' });
    const paid = await fetch(`${base}/api/json.aspx/CheckFrance/${PLATE}`, { headers: { authorization: t.basic('poor', poorKey), 'idempotency-key': 'poor-1' } });
    expect(paid.status).toBe(200);
    expect(paid.headers.get('x-credits-charged')).toBe('1');
    // Keys are per account: alice may use poor's key for her own lookup.
    expect((await lookup('json', 'poor-1')).headers.get('idempotent-replayed')).toBeNull();
  });

  it('answers with a request id of its own, unique, and records it in the ledger instead of the client X-Request-Id', async () => {
    const answers = await Promise.all(
      [1, 2, 3].map(() => fetch(`${base}/api/json.aspx/CheckFrance/${PLATE}`, { headers: { authorization: t.basic('alice', apiKey), 'x-request-id': 'same-id' } })),
    );
    const ids = answers.map((a) => a.headers.get('x-request-id') ?? '');
    expect(ids.every((id) => /^[0-9a-f-]{36}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(3);
    expect(new Set((await debits()).map((d) => d.requestId))).toEqual(new Set(ids));
  });
});
