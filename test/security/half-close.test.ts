/**
 * Issue 31: a client that sends its request and then ends its side of the connection
 * (`shutdown(SHUT_WR)`, as nc, some HTTP/1.0 clients and proxies do) was charged and got nothing
 * on PostgreSQL: Node's server ended the socket at the client's FIN while the debit waited on the
 * network, and the same happened on either engine to any answer that came from an upstream. HTTP
 * lets a client half-close; the answer is owed. Each lookup here is written on a raw socket and
 * half-closed at once, on the five bindings, one by one and 30 at once, answered by the local
 * store and by an upstream fake that answers only after the server has seen the client's FIN:
 * every one must be answered whole and charged exactly once, under its own request id.
 */
import type { Socket } from 'node:net';
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
import { exchange, type WireResponse } from './raw-http.js';
import { BINDINGS, LEDGER_INTERFACE, lookupRequest, type Binding, type Lookup } from './lookup-requests.js';

const USER = 'halfclose';
const CREDITS = 10_000;

/** Answered by the local store (the sample data). */
const LOCAL: Lookup = { op: 'CheckFrance', params: { RegistrationNumber: 'FK482TR' }, json: 'CheckFrance/FK482TR' };
/** Answered by DVLA's fake, never cached (DVLA_CACHE_TTL_S=0): every lookup waits on the network. */
const UPSTREAM: Lookup = { op: 'Check', params: { RegistrationNumber: 'AA19AAA' }, json: 'Check/AA19AAA' };

interface World {
  readonly t: TestApp;
  readonly port: number;
  readonly auth: string;
  readonly dvla: FakeDvla;
  /** Connections on which the server has seen the client's end (FIN). */
  ended(): number;
}

async function world(engine: TestEngine): Promise<World> {
  const dvla = await startDvla();
  const env = fakeEnv({ dvla }, { DVLA_CACHE_TTL_S: '0', DVLA_NOT_FOUND_TTL_S: '0', DVLA_BREAKER_FAILURES: '1000' });
  // services.ts reads the providers' settings from process.env at build time.
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  let t: TestApp;
  try {
    t = await createTestApp(await engineEnv(engine), undefined, engine);
  } finally {
    vi.unstubAllEnvs();
  }
  await t.importRecords(sampleLines());
  const auth = t.basic(USER, await t.account(USER, CREDITS));
  let ended = 0;
  t.app.server.on('connection', (socket: Socket) => {
    socket.once('end', () => {
      ended += 1;
    });
  });
  const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  return { t, port, auth, dvla, ended: () => ended };
}

/** The account's ledger rows of lookups, by kind, as request ids. */
async function ledgerIds(t: TestApp): Promise<{ debits: string[]; reversals: string[] }> {
  const rows = await t.services.accounts.usage(USER);
  return {
    debits: rows.filter((r) => r.kind === 'debit').map((r) => r.requestId ?? ''),
    reversals: rows.filter((r) => r.kind === 'reversal').map((r) => r.requestId ?? ''),
  };
}

/**
 * Sends `count` half-closed lookups on `bindings` (round robin) at once. For the upstream, the
 * fake holds its first answer until the server has seen every client's end (FIN): lookups of one
 * plate share one upstream call in flight (UpstreamSource), so all of them are answered after
 * the FIN, as on a slow upstream; a lookup that asks after the release is answered at once, after
 * its FIN too.
 */
async function halfClosed(w: World, lookup: Lookup, bindings: readonly Binding[], count: number): Promise<Array<{ binding: Binding; response: WireResponse | undefined; all: WireResponse[] }>> {
  const upstream = lookup === UPSTREAM;
  let release: () => void = () => undefined;
  const gate = new Promise<FakeResponse>((resolve) => {
    release = () => {
      resolve({ status: 200, json: dvlaVehicles().AA19AAA });
    };
  });
  if (upstream) w.dvla.server.script({ until: gate });
  const calls = w.dvla.calls;
  const ended = w.ended();
  const sent = Array.from({ length: count }, (_, i) => {
    const binding = bindings[i % bindings.length] as Binding;
    const bytes = lookupRequest(binding, lookup, { username: USER, auth: w.auth });
    return exchange(w.port, bytes, { halfClose: true, timeoutMs: 60_000 }).then(({ responses }) => ({ binding, response: responses[0], all: responses }));
  });
  if (upstream) {
    await until(() => w.dvla.calls > calls && w.ended() - ended >= count);
    release();
  }
  return Promise.all(sent);
}

/** Every answer whole, 200, once per connection; every one debited once, none reversed; the balance down by as many. */
async function expectAnsweredAndChargedOnce(w: World, answers: Awaited<ReturnType<typeof halfClosed>>, before: { debits: string[]; reversals: string[]; credits: number }): Promise<void> {
  for (const { binding, response, all } of answers) {
    expect(all, `${binding}: one answer`).toHaveLength(1);
    expect(response?.statusCode, `${binding}: ${response?.body.slice(0, 200) ?? 'nothing'}`).toBe(200);
    expect(response?.complete).toBe(true);
  }
  const after = await ledgerIds(w.t);
  const debits = after.debits.filter((id) => !before.debits.includes(id));
  const delivered = answers.map((a) => a.response?.headers['x-request-id'] ?? '');
  expect([...debits].sort()).toEqual([...delivered].sort());
  expect(after.reversals).toEqual(before.reversals);
  const rows = await w.t.services.accounts.usage(USER);
  for (const { binding, response } of answers) {
    expect(rows.find((r) => r.requestId === response?.headers['x-request-id'])?.interface).toBe(LEDGER_INTERFACE[binding]);
  }
  expect((await w.t.services.accounts.show(USER)).credits).toBe(before.credits - answers.length);
}

async function snapshot(w: World): Promise<{ debits: string[]; reversals: string[]; credits: number }> {
  return { ...(await ledgerIds(w.t)), credits: (await w.t.services.accounts.show(USER)).credits };
}

describe.each(await enginesToTest())('half-closed lookups on %s', (engine) => {
  let w: World;
  beforeAll(async () => {
    w = await world(engine);
  });
  afterAll(async () => {
    await w.t.close();
    await w.dvla.close();
  });

  describe.each([
    ['the local store', LOCAL],
    ['an upstream that answers after the client ended its side', UPSTREAM],
  ] as const)('answered by %s', (_source, lookup) => {
    it.each(BINDINGS)('%s: one lookup is answered whole and charged once', async (binding) => {
      const before = await snapshot(w);
      await expectAnsweredAndChargedOnce(w, await halfClosed(w, lookup, [binding], 1), before);
    });

    it('30 at once over the five bindings are each answered whole and charged once', async () => {
      const before = await snapshot(w);
      await expectAnsweredAndChargedOnce(w, await halfClosed(w, lookup, BINDINGS, 30), before);
    });
  });
});
