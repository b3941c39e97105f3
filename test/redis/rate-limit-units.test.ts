import { describe, expect, it } from 'vitest';
import { accountCacheCounter, type AccountChangeFeed } from '../../src/accounts/account-change-feed.js';
import { InProcessRateCounters } from '../../src/rate-limit/in-process-rate-counters.js';
import { effectiveLimits, RateLimiter, windowsAt, type EffectiveLimits, type RateCounters } from '../../src/rate-limit/rate-limiter.js';
import { RedisConnection, type RedisLog } from '../../src/redis/redis-connection.js';
import { RedisRateCounters } from '../../src/redis/redis-rate-counters.js';
import { closedPort } from './redis-harness.js';

const at = (iso: string): Date => new Date(iso);

describe('fixed windows', () => {
  it('names the second and the UTC day a moment falls in, and how long each has left', () => {
    const w = windowsAt(at('2026-11-22T23:59:59.250Z'));
    expect(w.second).toBe(Date.parse('2026-11-22T23:59:59Z') / 1000);
    expect(w.day).toBe(Date.parse('2026-11-22T00:00:00Z') / 86_400_000);
    expect(w.secondEndsInMs).toBe(750);
    expect(w.dayEndsInMs).toBe(750);
  });
});

describe('effectiveLimits', () => {
  it('takes the account value first, the server default for null, and reads 0 as no limit', () => {
    const defaults = { perSecond: 5, perDay: 1000 };
    expect(effectiveLimits({ perSecond: null, perDay: null }, defaults)).toEqual({ perSecond: 5, perDay: 1000 });
    expect(effectiveLimits({ perSecond: 2, perDay: 0 }, defaults)).toEqual({ perSecond: 2, perDay: null });
    expect(effectiveLimits({ perSecond: null, perDay: null }, { perSecond: null, perDay: null })).toEqual({ perSecond: null, perDay: null });
  });
});

describe('RateLimiter', () => {
  it('does not touch the counters for an account without limits', () => {
    let hits = 0;
    const counters: RateCounters = {
      hit: () => {
        hits += 1;
        return { allowed: true };
      },
    };
    const limiter = new RateLimiter(counters, { now: () => new Date() });
    expect(limiter.check({ id: 1, rateLimits: { perSecond: null, perDay: 0 } })).toEqual({ allowed: true });
    expect(hits).toBe(0);
    expect(limiter.check({ id: 1, rateLimits: { perSecond: 3, perDay: null } })).toEqual({ allowed: true });
    expect(hits).toBe(1);
  });
});

describe('InProcessRateCounters', () => {
  const limits: EffectiveLimits = { perSecond: 2, perDay: 3 };

  it('refuses the request beyond the per-second limit with Retry-After 1, and starts again in the next second', () => {
    const counters = new InProcessRateCounters();
    const now = at('2026-11-22T10:00:00.100Z');
    expect(counters.hit(7, limits, now).allowed).toBe(true);
    expect(counters.hit(7, limits, now).allowed).toBe(true);
    expect(counters.hit(7, limits, now)).toEqual({ allowed: false, window: 'second', limit: 2, retryAfterSeconds: 1 });
    // Another account has counters of its own.
    expect(counters.hit(8, limits, now).allowed).toBe(true);
    expect(counters.hit(7, limits, at('2026-11-22T10:00:01.000Z')).allowed).toBe(true);
  });

  it('refuses beyond the day until midnight UTC; refused requests count in neither window', () => {
    const counters = new InProcessRateCounters();
    expect(counters.hit(7, limits, at('2026-11-22T10:00:00Z')).allowed).toBe(true);
    expect(counters.hit(7, limits, at('2026-11-22T10:00:00Z')).allowed).toBe(true);
    expect(counters.hit(7, limits, at('2026-11-22T10:00:00Z')).allowed).toBe(false);
    expect(counters.hit(7, limits, at('2026-11-22T10:00:01Z')).allowed).toBe(true);
    expect(counters.hit(7, limits, at('2026-11-22T23:00:00.5Z'))).toEqual({ allowed: false, window: 'day', limit: 3, retryAfterSeconds: 3600 });
    expect(counters.hit(7, limits, at('2026-11-23T00:00:00Z')).allowed).toBe(true);
  });
});

describe('accountCacheCounter', () => {
  const feed = (live: boolean, generation: number): AccountChangeFeed => ({
    publish: () => Promise.resolve(),
    onChange: () => undefined,
    live,
    generation,
  });
  let storageValue = 0;
  const storage = (changeSignal: 'every-commit' | 'clock') => ({ changeSignal, changeCounter: () => storageValue });

  it("keeps a counter that moves on every commit (SQLite's data_version) as the signal, feed or not", () => {
    const counter = accountCacheCounter(storage('every-commit'), feed(true, 1));
    storageValue = 41;
    expect(counter()).toBe(41);
    storageValue = 42;
    expect(counter()).toBe(42);
  });

  it("replaces a clock-bucket counter (PostgreSQL's) while the feed is live, and changes with the feed's generation", () => {
    const state = { live: true, generation: 1 };
    const live: AccountChangeFeed = { publish: () => Promise.resolve(), onChange: () => undefined, get live() { return state.live; }, get generation() { return state.generation; } };
    const counter = accountCacheCounter(storage('clock'), live);
    storageValue = 7;
    const first = counter();
    expect(first).toBeLessThan(0);
    storageValue = 8;
    expect(counter()).toBe(first);
    state.generation = 2;
    const second = counter();
    expect(second).not.toBe(first);
    expect(second).toBeLessThan(0);
    state.live = false;
    expect(counter()).toBe(8);
  });
});

describe('RedisRateCounters while Redis is unreachable', () => {
  it('counts in-process, tells about every fallback, and warns once for the whole outage', async () => {
    const warnings: string[] = [];
    const log: RedisLog = { warn: (message) => warnings.push(message), info: () => undefined };
    const connection = new RedisConnection({ url: `redis://127.0.0.1:${await closedPort()}`, log, name: 'test' });
    let fallbacks = 0;
    const counters = new RedisRateCounters(connection, 'x:', new InProcessRateCounters(), log, () => (fallbacks += 1));
    try {
      await RedisConnection.whenReady(connection.commands, 2000);
      const now = at('2026-11-22T10:00:00Z');
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push((await counters.hit(1, { perSecond: 3, perDay: null }, now)).allowed);
      expect(decisions).toEqual([true, true, true, false]);
      expect(fallbacks).toBe(4);
      expect(warnings.filter((w) => w.startsWith('Shared rate-limit counters in Redis failed'))).toHaveLength(1);
      expect(warnings.join('\n')).toContain('rate limits are counted per instance until it is back');
    } finally {
      await connection.close();
    }
  });
});
