import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_EXAMPLE_PATH, seedEmptyStore } from '../../src/bootstrap/seed.js';
import { MAX_WORKERS, restartDelay, seedOnce, workerCount } from '../../src/cluster.js';
import { ConfigError } from '../../src/config/config.js';
import { ENGINES, postgresAvailable } from '../helpers/engines.js';
import { freePort, killAll, sharedStore, spawnServer, stopServer, storeState, waitReady, type ServerProcess } from './scale-harness.js';

afterEach(() => {
  killAll();
});

const BANNER = /new store initialised/g;
const KEY = /curl -u 'demo:([A-Za-z0-9_-]{43})'/;

function basic(apiKey: string): string {
  return `Basic ${Buffer.from(`demo:${apiKey}`).toString('base64')}`;
}

/** Worker pids in the order the primary logged them listening. */
function listeningWorkers(output: string): number[] {
  const pids: number[] = [];
  for (const line of output.split('\n')) {
    if (!line.includes('"worker listening"')) continue;
    const { workerPid } = JSON.parse(line) as { workerPid: number };
    pids.push(workerPid);
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, condition: () => boolean, server: ServerProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function demoLookups(base: string, apiKey: string, count: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const res = await fetch(`${base}${DEMO_EXAMPLE_PATH}`, { headers: { authorization: basic(apiKey) } });
      await res.arrayBuffer();
      return res.status;
    }),
  );
}

describe('WORKERS', () => {
  it('accepts whole numbers from 1 to 64 and treats unset as one process', () => {
    expect(workerCount({})).toBe(1);
    expect(workerCount({ WORKERS: ' ' })).toBe(1);
    expect(workerCount({ WORKERS: '1' })).toBe(1);
    expect(workerCount({ WORKERS: '64' })).toBe(MAX_WORKERS);
    for (const bad of ['0', '65', 'two', '1.5', '-2', '2e1']) {
      expect(() => workerCount({ WORKERS: bad }), bad).toThrow(ConfigError);
      expect(() => workerCount({ WORKERS: bad }), bad).toThrow(`WORKERS must be a whole number from 1 to 64 (got "${bad}")`);
    }
  });

  it('backs off restarts from 0.5 s, doubling, to at most 30 s', () => {
    expect([1, 2, 3, 4, 7, 8, 50].map(restartDelay)).toEqual([500, 1000, 2000, 4000, 30_000, 30_000, 30_000]);
  });

  it('refuses to start with a configuration error and exit code 1 on WORKERS=0', async () => {
    const server = spawnServer({ WORKERS: '0' }, await freePort());
    const { code } = await server.exited;
    expect(code).toBe(1);
    expect(server.output()).toMatch(/configuration error: WORKERS must be a whole number from 1 to 64 \(got "0"\)/);
  });
});

describe('cluster mode (WORKERS=2)', () => {
  it('seeds once in the primary, serves from two workers on one port, restarts a worker killed with SIGKILL, and stops every process with exit code 0 on SIGTERM', async () => {
    const store = await sharedStore('sqlite');
    try {
      const server = spawnServer({ ...store.env, WORKERS: '2', SEED_DEMO: 'true', LOG_LEVEL: 'info' }, await freePort());
      await waitReady(server, /vehicle-lookup cluster ready/);
      // The banner (with the key) is printed once the first worker listens.
      await until('the banner', () => KEY.test(server.output()), server);
      expect(server.output().match(BANNER)).toHaveLength(1);
      const apiKey = KEY.exec(server.output())?.[1] ?? '';
      const workers = listeningWorkers(server.output());
      expect(new Set(workers).size).toBe(2);
      expect(workers).not.toContain(server.child.pid);

      expect(await demoLookups(server.base, apiKey, 20)).toEqual(Array.from({ length: 20 }, () => 200));

      const [victim, survivor] = workers as [number, number];
      process.kill(victim, 'SIGKILL');
      await until('a replacement worker', () => listeningWorkers(server.output()).length === 3, server);
      const replacement = listeningWorkers(server.output())[2] ?? 0;
      expect([victim, survivor]).not.toContain(replacement);
      expect(server.output()).toMatch(/a worker died unexpectedly; starting another/);
      expect(await demoLookups(server.base, apiKey, 20)).toEqual(Array.from({ length: 20 }, () => 200));

      expect(await stopServer(server)).toBe(0);
      expect([survivor, replacement].filter(alive)).toEqual([]);

      // One demo account, one initial top-up, and 40 paid lookups.
      const state = await storeState(store, 'demo');
      expect(state.accounts).toBe(1);
      expect(state.entries.filter((e) => e.kind === 'topup').map((e) => e.delta)).toEqual([100]);
      expect(state.balance).toBe(60);
    } finally {
      killAll();
      await store.remove();
    }
  }, 120_000);

  it('gives up with exit code 1 when workers keep failing before they listen and none is serving (the port is taken)', async () => {
    const store = await sharedStore('sqlite');
    const blocker = createServer();
    try {
      const port = await freePort();
      blocker.listen(port, '127.0.0.1');
      await once(blocker, 'listening');
      const server = spawnServer({ ...store.env, WORKERS: '2', LOG_LEVEL: 'info' }, port);
      const { code } = await server.exited;
      expect(code).toBe(1);
      expect(server.output()).toMatch(/EADDRINUSE/);
      expect(server.output()).toMatch(/workers keep failing before they listen and none is serving; giving up/);
    } finally {
      blocker.close();
      killAll();
      await store.remove();
    }
  }, 120_000);

  it('takes its workers down with it when the primary is killed with SIGKILL', async () => {
    const store = await sharedStore('sqlite');
    try {
      const server = spawnServer({ ...store.env, WORKERS: '2', LOG_LEVEL: 'info' }, await freePort());
      await waitReady(server, /vehicle-lookup cluster ready/);
      const workers = listeningWorkers(server.output());
      expect(workers.filter(alive)).toHaveLength(2);
      server.child.kill('SIGKILL');
      await server.exited;
      // Node ends a worker whose IPC channel to the primary closes.
      await until('the workers to exit', () => workers.filter(alive).length === 0, server, 10_000);
    } finally {
      killAll();
      await store.remove();
    }
  }, 120_000);
});

describe.each(ENGINES)('two plain processes started at once on a new %s store', (engine) => {
  it('creates the demo account once, prints its key once, and both start and serve it', async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    const store = await sharedStore(engine);
    try {
      const ports = [await freePort(), await freePort()];
      const servers = ports.map((port) => spawnServer({ ...store.env, SEED_DEMO: 'true' }, port));
      await Promise.all(servers.map((s) => waitReady(s)));
      // The seeding instance prints its banner right after it starts listening.
      await until('the banner', () => servers.some((s) => KEY.test(s.output())), servers[0] as ServerProcess);
      const outputs = servers.map((s) => s.output()).join('\n');
      expect(outputs.match(BANNER)).toHaveLength(1);
      const apiKey = KEY.exec(outputs)?.[1] ?? '';
      for (const server of servers) expect(await demoLookups(server.base, apiKey, 1)).toEqual([200]);
      for (const server of servers) expect(await stopServer(server)).toBe(0);
      const state = await storeState(store, 'demo');
      expect(state.accounts).toBe(1);
      expect(state.entries.filter((e) => e.kind === 'topup')).toHaveLength(1);
      expect(state.balance).toBe(98);
    } finally {
      killAll();
      await store.remove();
    }
  }, 120_000);
});

describe.each(ENGINES)('seeding a new %s store from two instances at once', (engine) => {
  it('creates the demo account exactly once: one instance seeds, the other starts without error or key', async (ctx) => {
    if (engine === 'postgres' && !(await postgresAvailable())) {
      ctx.skip();
      return;
    }
    // Two stores on one database in this process: their queries interleave at every await, so
    // both find the store empty, deterministically.
    const racing = async (seed: (services: Awaited<ReturnType<typeof store.open>>['services']) => Promise<unknown>): Promise<PromiseSettledResult<unknown>[]> => {
      const [a, b] = await Promise.all([store.open(), store.open()]);
      try {
        return await Promise.allSettled([seed(a.services), seed(b.services)]);
      } finally {
        await a.close();
        await b.close();
      }
    };
    const store = await sharedStore(engine);
    try {
      // Without the guard the race is real: one of the two fails (and its server would not start).
      const unguarded = await racing((services) => seedEmptyStore(services));
      expect(unguarded.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    } finally {
      await store.remove();
    }

    const fresh = await sharedStore(engine);
    try {
      const quiet = { info: () => undefined };
      const [a, b] = await Promise.all([fresh.open(), fresh.open()]);
      let results: unknown[];
      try {
        results = await Promise.all([seedOnce(a.services, quiet), seedOnce(b.services, quiet)]);
      } finally {
        await a.close();
        await b.close();
      }
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      const state = await storeState(fresh, 'demo');
      expect(state.accounts).toBe(1);
      expect(state.entries.map((e) => [e.kind, e.delta])).toEqual([['topup', 100]]);
    } finally {
      await fresh.remove();
    }
  }, 60_000);
});
