import type { Redis } from 'ioredis';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UpstreamSettings } from '../../src/config/upstream-settings.js';
import { UpstreamCacheRepository } from '../../src/providers/upstream/upstream-cache.repository.js';
import { UpstreamMonitor, type UpstreamEvent } from '../../src/providers/upstream/upstream-monitor.js';
import { UpstreamSource, type FetchOutcome, type UpstreamAnswer } from '../../src/providers/upstream/upstream-source.js';
import { RedisConnection, type RedisLog } from '../../src/redis/redis-connection.js';
import { RedisSharedCache } from '../../src/redis/shared-cache.js';
import type { WaitClock } from '../../src/shared/wait-clock.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { tempDir } from '../helpers/test-app.js';
import { until } from '../helpers/until.js';
import { ManualClock } from '../upstream/harness.js';
import { closedPort, deleteKeys, rawRedis, REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();
const quiet: RedisLog = { warn: () => undefined, info: () => undefined };
const SETTINGS: UpstreamSettings = { name: 'paidfake', baseUrl: 'http://127.0.0.1:9', timeoutMs: 1000, budgetMs: 5000, cacheTtlS: 3600, notFoundTtlS: 600, breakerFailures: 5, breakerOpenMs: 60_000 };

/**
 * A wait clock whose time moves only when the test says: a waiting instance never reaches its
 * lease by the machine's slowness. Its pauses end at the event loop's next turn, and it counts the
 * pauses begun, so the test knows an instance is waiting.
 */
class TestWaitClock implements WaitClock {
  ms = 0;
  pauses = 0;
  now(): number {
    return this.ms;
  }
  async sleep(): Promise<void> {
    this.pauses += 1;
    await nextTurn();
  }
}

/** The upstream every instance asks: it counts calls and holds each answer until the test releases it. */
class HeldUpstream {
  calls = 0;
  private pending: { resolve: (outcome: FetchOutcome) => void; reject: (error: Error) => void }[] = [];
  fetch = (): Promise<FetchOutcome> => {
    this.calls += 1;
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  };
  answer(outcome: FetchOutcome): void {
    this.next().resolve(outcome);
  }
  fail(): void {
    this.next().reject(new Error('upstream down'));
  }
  private next(): { resolve: (outcome: FetchOutcome) => void; reject: (error: Error) => void } {
    const held = this.pending.shift();
    if (!held) throw new Error('no call is waiting for an answer');
    return held;
  }
}

/** One app instance's upstream state: its own store, monitor and in-process flights; only Redis is shared. */
interface Instance {
  readonly source: UpstreamSource;
  readonly events: UpstreamEvent[];
  readonly wait: TestWaitClock;
  readonly shared: RedisSharedCache;
}

describe('single flight across instances', () => {
  let connections: RedisConnection[];
  let stores: Storage[];
  let dirs: { remove: () => void }[];
  let prefix: string;

  beforeEach(() => {
    connections = [];
    stores = [];
    dirs = [];
    prefix = uniquePrefix();
  });
  afterEach(async () => {
    for (const c of connections) await c.close();
    for (const s of stores) await s.close();
    for (const d of dirs) d.remove();
  });

  async function instance(redisUrl: string, settings: UpstreamSettings = SETTINGS): Promise<Instance> {
    const connection = new RedisConnection({ url: redisUrl, log: quiet, name: `flight-${connections.length}` });
    connections.push(connection);
    await RedisConnection.whenReady(connection.commands, 2000);
    const dir = tempDir();
    dirs.push(dir);
    const storage = await openStorage({ dataDir: dir.path });
    stores.push(storage);
    const monitor = new UpstreamMonitor();
    const events: UpstreamEvent[] = [];
    monitor.subscribe((event) => events.push(event));
    const wait = new TestWaitClock();
    const shared = new RedisSharedCache(connection, prefix, quiet);
    const context = { cache: new UpstreamCacheRepository(storage.db), clock: new ManualClock(), monitor, shared, waitClock: wait };
    return { source: new UpstreamSource(settings, context), events, wait, shared };
  }

  const lookups = (i: Instance, upstream: HeldUpstream, n: number): Promise<UpstreamAnswer>[] => Array.from({ length: n }, () => i.source.lookup('AB12CDE', upstream.fetch));
  const vias = (i: Instance): string[] => i.events.flatMap((e) => (e.type === 'answer' ? [e.via] : []));

  describe.skipIf(!redisUp)('on one Redis', () => {
    let raw: Redis;
    beforeEach(() => {
      raw = rawRedis();
    });
    afterEach(async () => {
      await deleteKeys(raw, prefix);
      raw.disconnect();
    });

    it('makes one upstream call for concurrent identical lookups on two instances, and serves the waiting instance from the cache', async () => {
      const upstream = new HeldUpstream();
      const [a, b] = [await instance(REDIS_TEST_URL), await instance(REDIS_TEST_URL)];
      const first = lookups(a, upstream, 3);
      await until(() => upstream.calls === 1);
      const second = lookups(b, upstream, 3);
      await until(() => b.wait.pauses > 0);
      expect(await raw.exists(`${prefix}flight:upstream:paidfake:AB12CDE`)).toBe(1);
      upstream.answer({ status: 'found', payload: { make: 'FORD' }, cost: 0.5 });
      const answers = await Promise.all([...first, ...second]);
      expect(upstream.calls).toBe(1);
      expect(answers.slice(0, 3)).toEqual(Array(3).fill({ status: 'found', payload: { make: 'FORD' }, via: 'upstream' }));
      expect(answers.slice(3)).toEqual(Array(3).fill({ status: 'found', payload: { make: 'FORD' }, via: 'cache' }));
      // The money: one call reported (with its cost) by the instance that made it; the other
      // instance's answer is a cache answer, which the upstream spend never counts as a call.
      expect(vias(a)).toEqual(['upstream']);
      expect(vias(b)).toEqual(['cache']);
      expect(await raw.exists(`${prefix}flight:upstream:paidfake:AB12CDE`)).toBe(0);
    });

    it('lets the next waiting instance ask when the one asking fails, one call at a time, and serves the third its answer', async () => {
      const upstream = new HeldUpstream();
      const [a, b, c] = [await instance(REDIS_TEST_URL), await instance(REDIS_TEST_URL), await instance(REDIS_TEST_URL)];
      const fromA = a.source.lookup('AB12CDE', upstream.fetch);
      await until(() => upstream.calls === 1);
      const fromB = b.source.lookup('AB12CDE', upstream.fetch);
      const fromC = c.source.lookup('AB12CDE', upstream.fetch);
      await until(() => b.wait.pauses > 0 && c.wait.pauses > 0);
      upstream.fail();
      expect(await fromA).toEqual({ status: 'unavailable', reason: 'paidfake: Error: upstream down' });
      // A failure releases the lock at once: one waiting instance takes it and asks; the other waits on.
      await until(() => upstream.calls === 2);
      upstream.answer({ status: 'found', payload: { make: 'FORD' } });
      const answers = [await fromB, await fromC];
      expect(upstream.calls).toBe(2);
      expect(answers.map((x) => (x.status === 'found' ? x.via : x.status)).sort()).toEqual(['cache', 'upstream']);
    });

    it('asks on its own when the instance holding the lock has given no answer for a whole lease', async () => {
      const upstream = new HeldUpstream();
      const [a, b] = [await instance(REDIS_TEST_URL), await instance(REDIS_TEST_URL)];
      const fromA = a.source.lookup('AB12CDE', upstream.fetch);
      await until(() => upstream.calls === 1);
      const fromB = b.source.lookup('AB12CDE', upstream.fetch);
      await until(() => b.wait.pauses > 0);
      b.wait.ms += SETTINGS.budgetMs;
      await until(() => upstream.calls === 2);
      upstream.answer({ status: 'found', payload: { make: 'FORD' } });
      upstream.answer({ status: 'found', payload: { make: 'FORD' } });
      expect([await fromA, await fromB]).toEqual([
        { status: 'found', payload: { make: 'FORD' }, via: 'upstream' },
        { status: 'found', payload: { make: 'FORD' }, via: 'upstream' },
      ]);
    });

    it('gives the lock to one claimant at a time, and a late release never frees a lock another instance took since', async () => {
      const [a, b] = [await instance(REDIS_TEST_URL), await instance(REDIS_TEST_URL)];
      const first = await a.shared.claim('k', 60_000);
      expect(first.role).toBe('leader');
      expect((await b.shared.claim('k', 60_000)).role).toBe('follower');
      expect(await raw.pttl(`${prefix}flight:k`)).toBeGreaterThan(0);
      // The first lease ends (as if it expired) and the second instance takes the lock.
      await raw.del(`${prefix}flight:k`);
      const second = await b.shared.claim('k', 60_000);
      expect(second.role).toBe('leader');
      if (first.role === 'leader') await first.release();
      expect(await raw.exists(`${prefix}flight:k`)).toBe(1);
      if (second.role === 'leader') await second.release();
      expect(await raw.exists(`${prefix}flight:k`)).toBe(0);
    });

    it('never holds back a provider whose answers are not kept (CACHE_TTL_S=0): every instance asks', async () => {
      const upstream = new HeldUpstream();
      const uncached = { ...SETTINGS, cacheTtlS: 0, notFoundTtlS: 0 };
      const [a, b] = [await instance(REDIS_TEST_URL, uncached), await instance(REDIS_TEST_URL, uncached)];
      const all = [...lookups(a, upstream, 2), ...lookups(b, upstream, 2)];
      await until(() => upstream.calls === 2);
      upstream.answer({ status: 'found', payload: { make: 'FORD' } });
      upstream.answer({ status: 'found', payload: { make: 'FORD' } });
      expect((await Promise.all(all)).every((x) => x.status === 'found' && x.via === 'upstream')).toBe(true);
      expect(await raw.keys(`${prefix}flight:*`)).toEqual([]);
    });
  });

  it('behaves as without Redis while Redis is unreachable: each instance calls once, nothing throws', async () => {
    const upstream = new HeldUpstream();
    const down = `redis://127.0.0.1:${await closedPort()}`;
    const [a, b] = [await instance(down), await instance(down)];
    const all = [...lookups(a, upstream, 3), ...lookups(b, upstream, 3)];
    await until(() => upstream.calls === 2);
    upstream.answer({ status: 'found', payload: { make: 'FORD' } });
    upstream.answer({ status: 'found', payload: { make: 'FORD' } });
    expect((await Promise.all(all)).every((x) => x.status === 'found' && x.via === 'upstream')).toBe(true);
    expect(upstream.calls).toBe(2);
    expect(a.wait.pauses + b.wait.pauses).toBe(0);
  });
});
