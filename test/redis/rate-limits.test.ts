import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rateLimitKeys } from '../../src/redis/redis-rate-counters.js';
import { openRedis } from '../../src/redis/redis-services.js';
import { createTestApp, tempDir, type TestApp } from '../helpers/test-app.js';
import { until } from '../helpers/until.js';
import { closedPort, deleteKeys, FRANCE_PATH, FRANCE_RECORD, ManualClock, rawRedis, REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const envelope = (version: string, username: string): string =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${version}"><soap:Body>` +
  `<CheckFrance xmlns="http://regcheck.org.uk"><RegistrationNumber>AB123CD</RegistrationNumber><username>${username}</username></CheckFrance>` +
  '</soap:Body></soap:Envelope>';

/**
 * Two instances on one SQLite file, as two processes on one host would run; with `redis`, sharing
 * Redis under a prefix of their own. Both read the same hand-moved clock, so every request of a
 * test falls in the windows the test chose.
 */
interface Pair {
  readonly a: TestApp;
  readonly b: TestApp;
  readonly clock: ManualClock;
  readonly prefix: string;
  readonly key: string;
  json(app: TestApp): Promise<{ status: number; body: string; retryAfter: string | undefined }>;
  credits(): Promise<number>;
  close(): Promise<void>;
}

async function pair(env: Record<string, string>, limits: { perSecond?: number; perDay?: number }, at = '2026-11-22T10:00:00.250Z'): Promise<Pair> {
  const dir = tempDir();
  const prefix = uniquePrefix();
  const clock = new ManualClock(Date.parse(at));
  const shared = { DATABASE_URL: join(dir.path, 'shared.sqlite'), REDIS_KEY_PREFIX: prefix, ...env };
  const a = await createTestApp(shared, clock);
  const b = await createTestApp(shared, clock);
  await a.importRecords([FRANCE_RECORD]);
  // The first lookup of an instance starts its workers (seconds on a busy machine); the counted
  // requests must follow each other closely, as Redis expires counter keys in real time.
  const warm = await a.account('warm-up', 2);
  await a.services.accounts.setRateLimits('warm-up', { perSecond: 0, perDay: 0 });
  for (const app of [a, b]) await app.app.inject({ url: FRANCE_PATH, headers: { authorization: app.basic('warm-up', warm) } });
  const key = await a.account('acme', 100);
  await a.services.accounts.setRateLimits('acme', limits);
  return {
    a,
    b,
    clock,
    prefix,
    key,
    async json(app) {
      const res = await app.app.inject({ url: FRANCE_PATH, headers: { authorization: app.basic('acme', key) } });
      const retryAfter = res.headers['retry-after'];
      return { status: res.statusCode, body: res.body, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined };
    },
    async credits() {
      return (await a.services.accounts.show('acme')).credits;
    },
    async close() {
      await a.close();
      await b.close();
      dir.remove();
    },
  };
}

describe.skipIf(!redisUp)('rate limits shared through Redis by two instances', () => {
  let p: Pair;
  let redis: Redis;

  beforeEach(() => {
    redis = rawRedis();
  });
  afterEach(async () => {
    await p.close();
    await deleteKeys(redis, p.prefix);
    redis.disconnect();
  });

  it('allows N requests per second across both instances, answers 429 with Retry-After: 1 beyond, and allows again in the next second', async () => {
    p = await pair({ REDIS_URL: REDIS_TEST_URL }, { perSecond: 3 });
    expect((await p.json(p.a)).status).toBe(200);
    expect((await p.json(p.b)).status).toBe(200);
    expect((await p.json(p.a)).status).toBe(200);
    const refused = await p.json(p.b);
    expect(refused).toEqual({
      status: 429,
      body: 'Rate limit exceeded: account acme may make 3 requests per second; retry after 1 s',
      retryAfter: '1',
    });
    expect((await p.json(p.a)).status).toBe(429);
    p.clock.advance(1000);
    expect((await p.json(p.b)).status).toBe(200);
  });

  it('counts in Redis with one fixed-window key per second and per UTC day', async () => {
    p = await pair({ REDIS_URL: REDIS_TEST_URL }, { perSecond: 5, perDay: 100 });
    await p.json(p.a);
    await p.json(p.b);
    const keys = rateLimitKeys(p.prefix, 2, p.clock.now());
    expect(keys).toEqual({ second: `${p.prefix}rl:{2}:s:1795341600`, day: `${p.prefix}rl:{2}:d:2026-11-22` });
    expect(await redis.get(keys.second)).toBe('2');
    expect(await redis.get(keys.day)).toBe('2');
    // Each key expires shortly after its window: a counter never outlives its use by much.
    expect(await redis.pttl(keys.second)).toBeGreaterThan(0);
    expect(await redis.pttl(keys.second)).toBeLessThanOrEqual(5750);
    expect(await redis.ttl(keys.day)).toBeGreaterThan(13 * 3600);
    expect(await redis.ttl(keys.day)).toBeLessThanOrEqual(15 * 3600);
  });

  it('allows N requests per UTC day across both instances, with Retry-After counting the seconds to midnight UTC', async () => {
    p = await pair({ REDIS_URL: REDIS_TEST_URL }, { perDay: 3 }, '2026-11-22T23:59:29.500Z');
    for (const app of [p.a, p.b, p.a]) {
      expect((await p.json(app)).status).toBe(200);
      p.clock.advance(2000);
    }
    const refused = await p.json(p.b);
    expect(refused.status).toBe(429);
    // 23:59:35.500 -> 00:00:00 is 24.5 s, rounded up.
    expect(refused.retryAfter).toBe('25');
    expect(refused.body).toBe('Rate limit exceeded: account acme may make 3 requests per day (UTC); retry after 25 s');
    p.clock.set('2026-11-23T00:00:00.000Z');
    expect((await p.json(p.b)).status).toBe(200);
  });

  it('charges nothing for a refused request: no debit, no ledger row', async () => {
    p = await pair({ REDIS_URL: REDIS_TEST_URL }, { perSecond: 2 });
    const statuses = [];
    for (const app of [p.a, p.b, p.a, p.b, p.a]) statuses.push((await p.json(app)).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    expect(await p.credits()).toBe(98);
    const debits = (await p.a.services.accounts.usage('acme')).filter((row) => row.kind === 'debit');
    expect(debits).toHaveLength(2);
  });

  it('does not let a burst beyond the per-second limit use up the day', async () => {
    p = await pair({ REDIS_URL: REDIS_TEST_URL }, { perSecond: 1, perDay: 2 });
    expect((await p.json(p.a)).status).toBe(200);
    expect((await p.json(p.b)).status).toBe(429);
    expect((await p.json(p.a)).status).toBe(429);
    p.clock.advance(1000);
    // Two refused requests did not count: the day still has its second request.
    expect((await p.json(p.b)).status).toBe(200);
    p.clock.advance(1000);
    const refused = await p.json(p.a);
    expect(refused.status).toBe(429);
    expect(refused.body).toContain('per day (UTC)');
  });

  it('answers the XML bindings with a Client fault (HTTP 500) and GET/POST with 500 plain text, naming the wait', async () => {
    p = await pair({ REDIS_URL: REDIS_TEST_URL }, { perSecond: 1 });
    expect((await p.json(p.a)).status).toBe(200);

    const soap11 = await p.b.app.inject({
      method: 'POST',
      url: '/api/reg.asmx',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/CheckFrance"' },
      payload: envelope(SOAP11, 'acme'),
    });
    expect(soap11.statusCode).toBe(500);
    expect(soap11.headers['content-type']).toMatch(/^text\/xml/);
    expect(soap11.headers['retry-after']).toBe('1');
    expect(soap11.body).toContain('<faultcode>soap:Client</faultcode>');
    expect(soap11.body).toContain(
      '<faultstring>Server was unable to process request. ---&gt; Rate limit exceeded: account acme may make 1 request per second; retry after 1 s</faultstring>',
    );

    const soap12 = await p.a.app.inject({
      method: 'POST',
      url: '/api/reg.asmx',
      headers: { 'content-type': 'application/soap+xml; charset=utf-8; action="http://regcheck.org.uk/CheckFrance"' },
      payload: envelope(SOAP12, 'acme'),
    });
    expect(soap12.statusCode).toBe(500);
    expect(soap12.body).toContain('<soap:Value>soap:Sender</soap:Value>');
    expect(soap12.body).toContain('Rate limit exceeded: account acme may make 1 request per second; retry after 1 s');

    const get = await p.b.app.inject({ url: '/api/reg.asmx/CheckFrance?RegistrationNumber=AB123CD&username=acme' });
    expect(get.statusCode).toBe(500);
    expect(get.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(get.body).toBe('Rate limit exceeded: account acme may make 1 request per second; retry after 1 s\r\n');

    const post = await p.a.app.inject({
      method: 'POST',
      url: '/api/reg.asmx/CheckFrance',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'RegistrationNumber=AB123CD&username=acme',
    });
    expect(post.statusCode).toBe(500);
    expect(post.body).toBe('Rate limit exceeded: account acme may make 1 request per second; retry after 1 s\r\n');

    expect(await p.credits()).toBe(99);
  });

  it('counts refusals in vehicle_lookup_rate_limited_total by window and interface', async () => {
    p = await pair({ REDIS_URL: REDIS_TEST_URL }, { perSecond: 1 });
    await p.json(p.a);
    await p.json(p.a);
    await p.json(p.a);
    const metrics = (await p.a.app.inject({ url: '/metrics' })).body;
    expect(metrics).toContain('vehicle_lookup_rate_limited_total{window="second",interface="json"} 2');
    expect(metrics).toContain('vehicle_lookup_lookups_total{operation="CheckFrance",interface="json",outcome="rate_limited"} 2');
  });

  it('applies RATE_LIMIT_PER_SECOND to accounts without their own limit, and not to an account set to --off', async () => {
    p = await pair({ REDIS_URL: REDIS_TEST_URL, RATE_LIMIT_PER_SECOND: '1' }, {});
    expect((await p.json(p.a)).status).toBe(200);
    expect((await p.json(p.b)).status).toBe(429);
    await p.a.services.accounts.setRateLimits('acme', { perSecond: 0, perDay: 0 });
    expect((await p.json(p.a)).status).toBe(200);
    // B hears of the change within milliseconds, not synchronously.
    await until(async () => (await p.json(p.b)).status === 200);
    expect((await p.json(p.b)).status).toBe(200);
  });
});

describe('rate limits without Redis', () => {
  let p: Pair;
  afterEach(async () => p.close());

  it('counts per instance: each instance allows the limit on its own', async () => {
    p = await pair({}, { perSecond: 2 });
    const onA = [await p.json(p.a), await p.json(p.a), await p.json(p.a)].map((r) => r.status);
    const onB = [await p.json(p.b), await p.json(p.b), await p.json(p.b)].map((r) => r.status);
    expect(onA).toEqual([200, 200, 429]);
    expect(onB).toEqual([200, 200, 429]);
    const refused = await p.json(p.a);
    expect(refused.retryAfter).toBe('1');
    p.clock.advance(1000);
    expect((await p.json(p.a)).status).toBe(200);
    expect(await p.credits()).toBe(95);
  });

  it('limits nobody by default', async () => {
    p = await pair({}, {});
    for (let i = 0; i < 20; i++) expect((await p.json(i % 2 === 0 ? p.a : p.b)).status).toBe(200);
  });
});

describe('start-up while Redis is unreachable', () => {
  it('starts without waiting for Redis: start-up goes on at the first failed connection, not at the end of its wait', async () => {
    // A wait no test outlasts: start-up resolving at all proves it did not wait for the bound.
    const redis = await openRedis(
      { url: `redis://127.0.0.1:${await closedPort()}`, keyPrefix: uniquePrefix() },
      { name: 'test', subscribe: true, log: { warn: () => undefined, info: () => undefined }, startupWaitMs: 24 * 3600_000 },
    );
    try {
      expect(redis.connection.ready).toBe(false);
      expect(redis.accountChanges.live).toBe(false);
    } finally {
      await redis.close();
    }
  });
});

describe('rate limits while Redis is unreachable', () => {
  let p: Pair;
  afterEach(async () => p.close());

  it('serves paid traffic and counts per instance (fail open), and says so in a metric', async () => {
    p = await pair({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` }, { perSecond: 2 });
    expect([await p.json(p.a), await p.json(p.a), await p.json(p.a)].map((r) => r.status)).toEqual([200, 200, 429]);
    // B has counters of its own while Redis is away.
    expect((await p.json(p.b)).status).toBe(200);
    expect(await p.credits()).toBe(97);
    const metrics = (await p.a.app.inject({ url: '/metrics' })).body;
    expect(metrics).toContain('vehicle_lookup_rate_limit_fallbacks_total 3');
  });

  it('still changes accounts, on this instance at once', async () => {
    p = await pair({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` }, {});
    await p.a.services.accounts.setDisabled('acme', true);
    expect((await p.json(p.a)).status).toBe(500);
  });
});
