/**
 * Issue 17 "Proof": a seeded, bounded fuzz over all five bindings (SOAP 1.1, SOAP 1.2, HTTP GET,
 * HTTP POST, JSON) that reconciles every debit in the ledger with an answer the client received.
 * Each connection carries one to three requests, valid or mutated (bytes flipped, dropped,
 * inserted, truncated; headers duplicated; bodies chunked or cut short; garbage pipelined after
 * them), written on a raw loopback socket and half-closed as `nc -q1` does. Every response read
 * back whole with status 200 counts as delivered under its `X-Request-Id`; every debit row must
 * match one, and the balance must equal the credits minus the debits. A debit given back (a
 * `reversal` row of its request id: its answer could not be written, issue 31) counts as none.
 *
 * It runs on SQLite (one instance) and on PostgreSQL with Redis as a deployment runs it: two
 * instances on one database, the connections shared between them (issue 31: there the debit
 * waits on the network, and 2,257 of 2,428 debits of 4,000 half-closed connections had no
 * delivered answer before the server answered half-closed requests).
 *
 * FUZZ_SEED=n reruns one seed; FUZZ_CASES=n changes the number of connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest } from '../helpers/engines.js';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { exchange } from './raw-http.js';
import { BINDINGS, lookupRequest, type Binding } from './lookup-requests.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const CASES = Number(process.env.FUZZ_CASES ?? 2500);
const CONCURRENCY = 12;
const USER = 'fuzzer';
const CREDITS = 1_000_000;

/** mulberry32: a small seeded generator, so a failing seed replays exactly. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lookups that succeed (and are charged) on every binding, plus some that fail and cost nothing. */
const QUERIES = [
  { op: 'CheckFrance', params: { RegistrationNumber: 'FK482TR' }, json: 'CheckFrance/FK482TR' },
  { op: 'CheckUSA', params: { RegistrationNumber: '7KDJ294', State: 'CA' }, json: 'CheckUSA/7KDJ294/CA' },
  { op: 'UKMOT', params: { RegistrationNumber: 'KX19YRD' }, json: 'UKMOT/KX19YRD' },
  { op: 'VinCheck', params: { Vin: '1HGCV1F32LA048217' }, json: 'VinCheck/1HGCV1F32LA048217' },
  { op: 'CheckFrance', params: { RegistrationNumber: 'ZZ999ZZ' }, json: 'CheckFrance/ZZ999ZZ' },
] as const;

function request(binding: Binding, query: (typeof QUERIES)[number], id: string, auth: string): string {
  return lookupRequest(binding, query, { username: USER, auth, headers: `X-Request-Id: ${id}\r\n` });
}

const GARBAGE = ['GARBAGE\r\n\r\n', '\x00\x01\x02\r\n', 'GET / HTTP/9.9\r\n\r\n', 'zz\r\n', ' HTTP/1.1\r\n\r\n', 'POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n'];

/** One random change to the bytes of a request; kinds chosen to reach the parser's error paths. */
function mutate(text: string, random: () => number): string {
  const at = Math.floor(random() * text.length);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  switch (Math.floor(random() * 9)) {
    case 0:
      return text.slice(0, at) + String.fromCharCode(Math.floor(random() * 256)) + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 10));
    case 2:
      return text.slice(0, at) + pick(['\r\n', '\n', '\r', '\x00', ':', ' ', '%', '\r\n\r\n', '"']) + text.slice(at);
    case 3:
      return text.slice(0, at);
    case 4:
      return text.replace('\r\n', `\r\n${pick(['Transfer-Encoding: chunked', 'Transfer-Encoding: foo', 'Content-Length: 5', 'Content-Length: abc', 'Host: 999.1.1.1', 'Expect: 100-continue'])}\r\n`);
    case 5:
      return text.replace(/Content-Length: (\d+)/, (_m, n: string) => `Content-Length: ${Number(n) + pick([-5, -1, 1, 7, 1000])}`);
    case 6:
      return text.replace('HTTP/1.1', pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 x', 'http/1.1']));
    case 7:
      return text.replace('X-Request-Id: ', pick(['X-Request-Id: bad id ', 'X-Request-Id:', 'X-Request-Id: ']));
    default:
      return text + pick(GARBAGE);
  }
}

describe.each(await enginesToTest())('on %s', (engine) => {
  /** The instances serving the connections (two on PostgreSQL, sharing its database and Redis); the first holds the store. */
  let instances: TestApp[] = [];
  let ports: number[] = [];
  let t: TestApp;
  let auth: string;

  beforeAll(async () => {
    // Short timeouts, so a request cut short is answered (and its connection freed) quickly.
    const env = await engineEnv(engine, { REQUEST_TIMEOUT_MS: '2000', HEADERS_TIMEOUT_MS: '2000' });
    t = await createTestApp(env, undefined, engine);
    instances = [t];
    if (engine === 'postgres') instances.push(await createTestApp({ ...env, DATABASE_URL: t.config.databaseUrl ?? '' }, undefined, engine));
    await t.importRecords(sampleLines());
    auth = t.basic(USER, await t.account(USER, CREDITS));
    ports = await Promise.all(instances.map(async (i) => Number(new URL(await i.app.listen({ port: 0, host: '127.0.0.1' })).port)));
  });
  afterAll(async () => {
    // The second instance first: the first one's close drops the shared database.
    for (const instance of [...instances].reverse()) await instance.close();
  });

  describe(`debit reconciliation fuzz (seed ${SEED}, ${CASES} connections)`, () => {
    it('finds a delivered answer for every debit on all five bindings', async () => {
      const random = generator(SEED);
      const connections: string[] = [];
      for (let c = 0; c < CASES; c++) {
        const count = 1 + Math.floor(random() * 3);
        let bytes = '';
        for (let r = 0; r < count; r++) {
          const binding = BINDINGS[Math.floor(random() * BINDINGS.length)] as Binding;
          const query = QUERIES[Math.floor(random() * QUERIES.length)] as (typeof QUERIES)[number];
          let text = request(binding, query, `fz-${c}-${r}`, auth);
          if (random() < 0.6) {
            const mutations = 1 + Math.floor(random() * 3);
            for (let m = 0; m < mutations; m++) text = mutate(text, random);
          }
          bytes += text;
        }
        connections.push(bytes);
      }

      /** Complete 200 answers, by request id: what the clients actually received. */
      const delivered = new Map<string, number>();
      /** What each connection got back, to show a failing case. */
      const received = new Map<number, string>();
      let answered = 0;
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < connections.length) {
          const index = next;
          const bytes = connections[index] ?? '';
          next += 1;
          const { responses } = await exchange(ports[index % ports.length] ?? 0, Buffer.from(bytes, 'latin1'), { halfClose: true, timeoutMs: 10_000 });
          received.set(index, JSON.stringify(responses.map((r) => [r.statusCode, r.complete, r.headers['x-request-id'], r.body.slice(0, 60)])));
          for (const response of responses) {
            if (!response.complete || response.statusCode !== 200) continue;
            const id = response.headers['x-request-id'] ?? '';
            delivered.set(id, (delivered.get(id) ?? 0) + 1);
            answered += 1;
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));

      // Reversals are written once their connection closed: every connection has, but a reversal's
      // transaction may still be in flight.
      for (const instance of instances) await instance.services.pipeline.settled();
      const rows = await t.services.accounts.usage(USER);
      const reversed = rows.filter((row) => row.kind === 'reversal').map((row) => row.requestId ?? '');
      const debits = rows.filter((row) => row.kind === 'debit' && !reversed.includes(row.requestId ?? ''));
      const undelivered: string[] = [];
      const owed = new Map(delivered);
      for (const row of debits) {
        const id = row.requestId ?? '';
        const left = owed.get(id) ?? 0;
        if (left === 0) undelivered.push(`${id} (${row.interface} ${row.operation})`);
        else owed.set(id, left - 1);
      }
      const shown = undelivered.slice(0, 3).map((id) => {
        const index = Number(/^fz-(\d+)-/.exec(id)?.[1] ?? NaN);
        return Number.isInteger(index) ? `${id}\nsent ${JSON.stringify(connections[index])}\nreceived ${received.get(index) ?? ''}` : id;
      });
      console.log(`${engine} fuzz (seed ${SEED}, ${CASES} connections, ${instances.length} instance(s)): ${rows.filter((r) => r.kind === 'debit').length} debits, ${reversed.length} reversed, ${answered} answers delivered, ${undelivered.length} debits without one`);
      expect(undelivered, `seed ${SEED}: debits without a delivered answer:\n${shown.join('\n')}`).toEqual([]);
      // The run exercised what it claims: many charged answers on every binding.
      expect(debits.length).toBeGreaterThan(CASES / 2);
      expect(new Set(debits.map((row) => row.interface))).toEqual(new Set(['soap11', 'soap12', 'http-get', 'http-post', 'json']));
      expect(answered).toBeGreaterThanOrEqual(debits.length);
      expect((await t.services.accounts.show(USER)).credits).toBe(CREDITS - debits.length);
    }, 120_000);
  });
});
