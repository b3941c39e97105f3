/**
 * Issue 31: two instances on one PostgreSQL database with Redis survive the database's restart,
 * its absence at start and Redis's restart, under steady load, with the money exact. The servers
 * are private (private-servers.ts): the machine's PostgreSQL and Redis are shared and never
 * stopped by a test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../src/services.js';
import { systemClock } from '../../src/shared/clock.js';
import { openStorage } from '../../src/storage/create-database.js';
import { STORE_AWAY } from '../../src/storage/store-unavailable.js';
import { SESSION_COOKIE } from '../../src/http/auth/api-auth.js';
import { SQLITE_ONLY } from '../helpers/engines.js';
import { privatePostgres, privateRedis, privateServersMissing, type PrivatePostgres, type PrivateRedis } from './private-servers.js';
import { carriesData, freePort, INTERFACES, killAll, lookup, prepareAccount, running, spawnServer, stopServer, storeState, waitReady, type Outcome, type ServerProcess, type SharedStore } from './scale-harness.js';

// A SQLite-only run (TEST_ENGINES=sqlite) has no PostgreSQL at all, private or not.
const missing = SQLITE_ONLY ? 'TEST_ENGINES=sqlite' : privateServersMissing();
if (missing !== undefined) {
  if (process.env.CI === 'true' && !SQLITE_ONLY) throw new Error(`test/scale/pg-restart.test.ts needs PostgreSQL 15 and redis-server binaries in CI: ${missing}`);
  console.warn(`\n*** SKIPPED: test/scale/pg-restart.test.ts (a private PostgreSQL and Redis): ${missing} ***\n`);
}

/** Polls every 100 ms, at most `attempts` times; fails naming `what` (and the servers' output). */
async function poll(what: string, condition: () => boolean | Promise<boolean>, attempts: number, servers: readonly ServerProcess[] = []): Promise<void> {
  for (let i = 0; i < attempts; i += 1) {
    if (await condition()) return;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what} after ${attempts} polls\n${servers.map((s) => s.output().slice(-4000)).join('\n----\n')}`);
}

async function readyStatus(server: ServerProcess): Promise<number | 'down'> {
  try {
    const res = await fetch(`${server.base}/readyz`);
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 'down';
  }
}

/** A failure answer the interface gives for "temporarily unavailable" (no data, nothing charged). */
function temporarilyUnavailable(outcome: Outcome): boolean {
  return outcome.status === 500 && outcome.body.includes('temporarily unavailable') && !carriesData(outcome);
}

/**
 * Lookups from `concurrency` callers, interfaces and both servers in turn, until `stop()` or
 * `max` requests; each caller pauses 5 ms between its requests so the two cores stay usable.
 */
function steadyLoad(servers: readonly ServerProcess[], username: string, apiKey: string, prefix: string, concurrency = 4, max = 20_000) {
  const outcomes: Outcome[] = [];
  let next = 0;
  let stopped = false;
  const caller = async (): Promise<void> => {
    while (!stopped && next < max) {
      const i = next++;
      const target = i % servers.length;
      const iface = INTERFACES[Math.floor(i / servers.length) % INTERFACES.length] ?? 'json';
      outcomes.push(await lookup(servers[target]?.base ?? '', target, iface, `${prefix}-${i}`, username, apiKey));
      await sleep(5);
    }
  };
  const done = Promise.all(Array.from({ length: concurrency }, caller));
  return {
    outcomes,
    /** 200s with data from server `target` so far. */
    served: (target: number) => outcomes.filter((o) => o.target === target && carriesData(o)).length,
    async stop(): Promise<Outcome[]> {
      stopped = true;
      await done;
      return outcomes;
    },
  };
}

/** Every answer is data or "temporarily unavailable"; the ledger holds one debit per answer with data, and no other. */
async function expectExactMoney(store: SharedStore, username: string, credits: number, outcomes: readonly Outcome[]): Promise<void> {
  const unexpected = outcomes.filter((o) => !carriesData(o) && !temporarilyUnavailable(o));
  expect(unexpected.map((o) => `${o.interface} ${o.status} ${o.body.slice(0, 200)}`)).toEqual([]);
  expect(outcomes.some((o) => /unexpected/i.test(o.body))).toBe(false);
  const answered = outcomes.filter(carriesData).map((o) => o.requestId);
  const state = await storeState(store, username);
  const debited = state.debits.map((d) => d.requestId);
  expect(new Set(answered).size).toBe(answered.length);
  expect(debited.length).toBe(new Set(debited).size);
  expect([...debited].sort()).toEqual([...answered].sort());
  expect(state.balance).toBe(credits - answered.length);
}

/** A store on the private cluster, for scale-harness's prepareAccount and storeState. */
function privateStore(pg: PrivatePostgres, dataDir: string): SharedStore {
  return {
    engine: 'postgres',
    env: { DATA_DIR: dataDir, DATABASE_URL: pg.url },
    dataDir,
    sqliteFile: undefined,
    async open() {
      const storage = await openStorage({ dataDir, databaseUrl: pg.url, poolSize: 2, startRetry: { waitMs: 30_000 } });
      const services = createServices(storage, { clock: systemClock, requireApiKeyEverywhere: false });
      return {
        services,
        storage,
        close: async () => {
          await services.close();
          await storage.close();
        },
      };
    },
    remove() {
      rmSync(dataDir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

const CREDITS = 1_000_000;

describe.skipIf(missing !== undefined)('two instances on a private PostgreSQL with Redis (issue 31)', () => {
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let store: SharedStore;

  beforeAll(async () => {
    pg = await privatePostgres();
    redis = await privateRedis();
    await redis.start();
    store = privateStore(pg, mkdtempSync(join(tmpdir(), 'vehicle-lookup-pgr-')));
  }, 180_000);

  afterEach(() => {
    killAll();
  });

  afterAll(async () => {
    killAll();
    await pg.remove();
    await redis.remove();
    await store.remove();
  }, 120_000);

  /** Two servers on the private PostgreSQL and Redis; started, not yet waited for. */
  async function spawnPair(extra: Readonly<Record<string, string>> = {}): Promise<ServerProcess[]> {
    const env = { ...store.env, REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'pgr:', DB_POOL_SIZE: '4', DB_START_WAIT_SECONDS: '120', DB_COMMIT_SETTLE_SECONDS: '60', ...extra };
    return [spawnServer(env, await freePort()), spawnServer(env, await freePort())];
  }

  it('the database away at start: each instance says so in one line, retries, and serves once it appears', async () => {
    if (pg.isRunning()) await pg.stop();
    const servers = await spawnPair();
    // Both retry with back-off: the one-line message, no stack trace, still running.
    // At least two attempts each: it retries rather than exits.
    await poll('both instances to report the database unreachable twice', () => servers.every((s) => (s.output().match(/database at postgres:\/\/\S+ is not reachable/g) ?? []).length >= 2), 600, servers);
    for (const server of servers) {
      expect(running(server)).toBe(true);
      expect(server.output()).not.toMatch(/\n\s+at /);
    }
    await pg.start();
    for (const server of servers) await waitReady(server);
    const apiKey = await prepareAccount(store, 'atstart', CREDITS);
    const load = steadyLoad(servers, 'atstart', apiKey, 'atstart');
    await poll('lookups answered by both instances', () => load.served(0) >= 20 && load.served(1) >= 20, 1200, servers);
    const outcomes = await load.stop();
    expect(outcomes.every(carriesData)).toBe(true);
    await expectExactMoney(store, 'atstart', CREDITS, outcomes);
    for (const server of servers) expect(await stopServer(server)).toBe(0);
  }, 300_000);

  it('a start that never reaches the database ends with one clear line after DB_START_WAIT_SECONDS, not a stack trace', async () => {
    const server = spawnServer({ DATA_DIR: store.dataDir, DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`, DB_START_WAIT_SECONDS: '1' }, await freePort());
    const { code } = await server.exited;
    expect(code).toBe(1);
    expect(server.output()).toMatch(/vehicle-lookup failed to start: cannot reach the database at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(\d+ attempts over [\d.]+ s; DB_START_WAIT_SECONDS\)/);
    expect(server.output()).not.toMatch(/\n\s+at /);
  }, 120_000);

  it('PostgreSQL restarted (and stopped, then started) under load: both instances live on, failures are "temporarily unavailable", money exact', async () => {
    // Each test stands alone (vitest -t): the first one leaves the cluster started.
    if (!pg.isRunning()) await pg.start();
    const servers = await spawnPair();
    for (const server of servers) await waitReady(server);
    const apiKey = await prepareAccount(store, 'restart', CREDITS);
    const load = steadyLoad(servers, 'restart', apiKey, 'restart');
    await poll('lookups answered before the restart', () => load.served(0) >= 20 && load.served(1) >= 20, 1200, servers);

    // 1. pg_ctl restart -m fast, as the issue found it.
    await pg.restart();
    const before = [load.served(0), load.served(1)];
    await poll('both instances serving again after the restart', () => load.served(0) >= (before[0] ?? 0) + 20 && load.served(1) >= (before[1] ?? 0) + 20, 1200, servers);

    // 2. Stopped for a while: not ready, lookups "temporarily unavailable"; ready and serving after.
    await pg.stop();
    await poll('/readyz to say not ready on both', async () => (await Promise.all(servers.map(readyStatus))).every((s) => s === 503), 600, servers);
    const away = load.outcomes.length;
    // Every binding answers its own "temporarily unavailable" (one mapping, in the pipeline).
    await poll('lookups failing on every binding while the database is away', () => INTERFACES.every((iface) => load.outcomes.slice(away).some((o) => o.interface === iface && temporarilyUnavailable(o))), 1200, servers);
    // What is not a lookup answers 503 with Retry-After and one message (STORE_AWAY), never an internal error.
    const base = servers[0]?.base ?? '';
    const credits = await fetch(`${base}/ajax/getcredits.aspx?username=restart`);
    expect([credits.status, credits.headers.get('retry-after'), await credits.text()]).toEqual([503, '5', STORE_AWAY.message]);
    const admin = await fetch(`${base}/admin/api/accounts`, { headers: { authorization: 'Bearer vl_op_not_a_token' } });
    expect([admin.status, admin.headers.get('retry-after'), await admin.json()]).toEqual([503, '5', { error: 'unavailable', message: STORE_AWAY.message }]);
    const page = await fetch(`${base}/console/admin`, { headers: { cookie: `${SESSION_COOKIE}=not-a-session` }, redirect: 'manual' });
    expect([page.status, page.headers.get('retry-after')]).toEqual([503, '5']);
    expect(await page.text()).toContain(STORE_AWAY.message);
    await pg.start();
    await poll('/readyz to say ready on both', async () => (await Promise.all(servers.map(readyStatus))).every((s) => s === 200), 600, servers);
    const back = [load.served(0), load.served(1)];
    await poll('both instances serving after the database came back', () => load.served(0) >= (back[0] ?? 0) + 20 && load.served(1) >= (back[1] ?? 0) + 20, 1200, servers);

    const outcomes = await load.stop();
    for (const server of servers) expect(running(server), server.output().slice(-4000)).toBe(true);
    expect(outcomes.filter(temporarilyUnavailable).length).toBeGreaterThanOrEqual(5);
    expect(outcomes.filter((o) => o.status === 'refused' || o.status === 'cut')).toEqual([]);
    await expectExactMoney(store, 'restart', CREDITS, outcomes);
    for (const server of servers) expect(await stopServer(server)).toBe(0);
  }, 300_000);

  it('Redis stopped and started under load: every lookup answered and debited exactly once', async () => {
    // Each test stands alone (vitest -t): the first one leaves the cluster started.
    if (!pg.isRunning()) await pg.start();
    const servers = await spawnPair();
    for (const server of servers) await waitReady(server);
    const apiKey = await prepareAccount(store, 'redis', CREDITS);
    const load = steadyLoad(servers, 'redis', apiKey, 'redis');
    await poll('lookups answered before Redis stops', () => load.served(0) >= 20 && load.served(1) >= 20, 1200, servers);
    await redis.stop();
    const stopped = [load.served(0), load.served(1)];
    await poll('both instances serving without Redis', () => load.served(0) >= (stopped[0] ?? 0) + 20 && load.served(1) >= (stopped[1] ?? 0) + 20, 1200, servers);
    await redis.start();
    const started = [load.served(0), load.served(1)];
    await poll('both instances serving with Redis back', () => load.served(0) >= (started[0] ?? 0) + 20 && load.served(1) >= (started[1] ?? 0) + 20, 1200, servers);
    const outcomes = await load.stop();
    for (const server of servers) expect(running(server)).toBe(true);
    expect(outcomes.filter((o) => !carriesData(o)).map((o) => `${o.status} ${o.body.slice(0, 200)}`)).toEqual([]);
    await expectExactMoney(store, 'redis', CREDITS, outcomes);
    for (const server of servers) expect(await stopServer(server)).toBe(0);
  }, 300_000);
});
