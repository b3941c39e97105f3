/**
 * Issue 31, the money rule: no credit is kept for an answer the client could not receive. A
 * lookup whose connection is gone before its debit is not debited (the debit is refused for a
 * dead connection); a debit whose answer could not be written to the connection after its COMMIT
 * is given back in the same ledger, by a `reversal` row with the debit's request id, and its
 * Idempotency-Key is released so a retry pays for the answer it gets. On SQLite and on PostgreSQL
 * with Redis, over real sockets.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FakeDvla } from '../fakes/fake-dvla.js';
import { dvlaVehicles } from '../fakes/fake-dvla.js';
import type { FakeResponse } from '../fakes/fake-http-server.js';
import { engineEnv } from '../helpers/engine-env.js';
import { enginesToTest, type TestEngine } from '../helpers/engines.js';
import { sampleLines } from '../helpers/sample-data.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { until } from '../helpers/until.js';
import { fakeEnv, startDvla } from '../upstream/harness.js';
import { LedgerQueries, ledgerCsv, ledgerKinds } from '../../src/accounts/ledger-queries.js';
import { exchange } from './raw-http.js';
import { lookupRequest, type Lookup } from './lookup-requests.js';

const USER = 'undelivered';
const CREDITS = 100;
const LOCAL: Lookup = { op: 'CheckFrance', params: { RegistrationNumber: 'FK482TR' }, json: 'CheckFrance/FK482TR' };
const UPSTREAM: Lookup = { op: 'Check', params: { RegistrationNumber: 'AA19AAA' }, json: 'Check/AA19AAA' };
/** A request carrying this header has its connection destroyed as its answer is about to be written (after the debit's COMMIT). */
const CUT = 'x-test-cut-before-answer';

async function build(engine: TestEngine, dvla: FakeDvla): Promise<TestApp> {
  const env = fakeEnv({ dvla }, { DVLA_CACHE_TTL_S: '0', DVLA_NOT_FOUND_TTL_S: '0', DVLA_BREAKER_FAILURES: '1000' });
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  try {
    return await createTestApp(await engineEnv(engine), undefined, engine, {
      // The connection dies between the COMMIT and the answer's write, as when the client resets
      // it at that moment: onSend runs after the handler has the paid outcome, before any byte is written.
      beforeRoutes: (app) => {
        app.addHook('onSend', (request, _reply, payload, done) => {
          if (request.headers[CUT] !== undefined) request.raw.socket.destroy();
          done(null, payload);
        });
      },
    });
  } finally {
    vi.unstubAllEnvs();
  }
}

describe.each(await enginesToTest())('answers that never reach the client, on %s', (engine) => {
  let t: TestApp;
  let dvla: FakeDvla;
  let port: number;
  let auth: string;

  beforeAll(async () => {
    dvla = await startDvla();
    t = await build(engine, dvla);
    await t.importRecords(sampleLines());
    auth = t.basic(USER, await t.account(USER, CREDITS));
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  afterAll(async () => {
    await t.close();
    await dvla.close();
  });

  const credits = async (): Promise<number> => (await t.services.accounts.show(USER)).credits;
  const rowsOf = async (requestId: string) => (await t.services.accounts.usage(USER)).filter((r) => r.requestId === requestId);
  const metric = async (pattern: RegExp): Promise<number> => Number(pattern.exec(await t.metrics.registry.metrics())?.[1] ?? 0);

  /** Sends a lookup whose connection is cut after the debit; returns the request id the debit recorded. */
  async function cutAfterCommit(headers = ''): Promise<string> {
    const before = new Set((await t.services.accounts.usage(USER)).map((r) => r.id));
    const { responses } = await exchange(port, lookupRequest('json', LOCAL, { username: USER, auth, headers: `${CUT}: 1\r\n${headers}` }), { timeoutMs: 10_000 });
    expect(responses).toEqual([]);
    let debit: string | undefined;
    await until(async () => {
      const fresh = (await t.services.accounts.usage(USER)).filter((r) => !before.has(r.id));
      debit = fresh.find((r) => r.kind === 'debit')?.requestId ?? undefined;
      return debit !== undefined && fresh.some((r) => r.kind === 'reversal' && r.requestId === debit);
    });
    await t.services.pipeline.settled();
    return debit ?? '';
  }

  it('gives back a committed debit whose answer could not be written, with a reversal row of the same request id', async () => {
    const start = await credits();
    const reversedBefore = await metric(/vehicle_lookup_debit_reversals_total\{interface="json",outcome="reversed"\} (\d+)/);
    const id = await cutAfterCommit();
    const rows = await rowsOf(id);
    expect(rows.map((r) => [r.kind, r.delta, r.operation, r.interface, r.query, r.source])).toEqual([
      ['debit', -1, 'CheckFrance', 'json', 'FK482TR', 'store'],
      // The reversal repeats the debit's facts (LookupRowDetails), its source included.
      ['reversal', 1, 'CheckFrance', 'json', 'FK482TR', 'store'],
    ]);
    expect(rows[1]?.balanceAfter).toBe(start);
    expect(await credits()).toBe(start);
    expect(await metric(/vehicle_lookup_debit_reversals_total\{interface="json",outcome="reversed"\} (\d+)/)).toBe(reversedBefore + 1);
  });

  it('shows the reversal in the ledger reads and CSV with its reason, and counts no lookup for it in usage', async () => {
    const id = await cutAfterCommit();
    const ledger = new LedgerQueries(t.services.storage.db);
    const accountId = (await t.services.accounts.show(USER)).id;
    const charged = await ledger.rows(accountId, { limit: 100, kinds: ledgerKinds('charged', undefined) });
    const reversal = charged.find((r) => r.kind === 'reversal' && r.requestId === id);
    expect(reversal).toMatchObject({ reason: 'reversed: answer not delivered', delta: 1, query: 'FK482TR', operation: 'CheckFrance', note: null });
    expect(ledgerCsv(charged)).toContain(`,reversed: answer not delivered,1,`);
    // type=charged adds up to what the lookups really cost: the reversed debit nets to nothing.
    const all = await t.services.accounts.usage(USER);
    const net = all.filter((r) => r.kind === 'debit' || r.kind === 'reversal').reduce((sum, r) => sum + r.delta, 0);
    expect(charged.reduce((sum, r) => sum + r.delta, 0)).toBe(net);
    const day = new Date().toISOString().slice(0, 10);
    const usage = await ledger.usage(accountId, `${day}T00:00:00.000Z`, `${day}T23:59:59.999Z`);
    const france = usage.find((u) => u.operation === 'CheckFrance');
    const debits = all.filter((r) => r.kind === 'debit' && r.operation === 'CheckFrance').length;
    const reversals = all.filter((r) => r.kind === 'reversal' && r.operation === 'CheckFrance').length;
    expect(reversals).toBeGreaterThan(0);
    expect(france?.lookups).toBe(debits - reversals);
    expect(france?.credits).toBe(debits - reversals);
  });

  it('releases the Idempotency-Key of a reversed debit: the retry is looked up and charged, not replayed free', async () => {
    const key = `retry-${engine}-1`;
    const start = await credits();
    await cutAfterCommit(`Idempotency-Key: ${key}\r\n`);
    expect(await credits()).toBe(start);
    const { responses } = await exchange(port, lookupRequest('json', LOCAL, { username: USER, auth, headers: `Idempotency-Key: ${key}\r\nConnection: close\r\n` }), { halfClose: true });
    expect(responses[0]?.statusCode).toBe(200);
    expect(responses[0]?.headers['idempotent-replayed']).toBeUndefined();
    expect(responses[0]?.headers['x-credits-charged']).toBe('1');
    expect(await credits()).toBe(start - 1);
    // And that paid answer is now the key's: a second retry is its free replay.
    const again = await exchange(port, lookupRequest('json', LOCAL, { username: USER, auth, headers: `Idempotency-Key: ${key}\r\nConnection: close\r\n` }), { halfClose: true });
    expect(again.responses[0]?.headers['idempotent-replayed']).toBe('true');
    expect(await credits()).toBe(start - 1);
  });

  it('does not debit a lookup whose client reset its connection while the upstream was answering', async () => {
    const start = await credits();
    const rowsBefore = (await t.services.accounts.usage(USER)).length;
    const gone = async (): Promise<number> => metric(/vehicle_lookup_lookups_total\{operation="Check",interface="http-get",outcome="client_gone"\} (\d+)/);
    const goneBefore = await gone();
    let release: () => void = () => undefined;
    dvla.server.script({ until: new Promise<FakeResponse>((resolve) => { release = () => { resolve({ status: 200, json: dvlaVehicles().AA19AAA }); }; }) });
    const calls = dvla.calls;
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(lookupRequest('get', UPSTREAM, { username: USER, auth }));
    await until(() => dvla.calls > calls);
    socket.resetAndDestroy();
    await until(async () => new Promise<boolean>((resolve) => t.app.server.getConnections((_e, n) => { resolve(n === 0); })));
    release();
    await until(async () => (await gone()) > goneBefore);
    expect(await credits()).toBe(start);
    expect((await t.services.accounts.usage(USER)).length).toBe(rowsBefore);
  });
});
