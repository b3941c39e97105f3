import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisConnection, type RedisLog } from '../../src/redis/redis-connection.js';
import { MAX_VALUE_BYTES, RedisSharedCache } from '../../src/redis/shared-cache.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createTestApp } from '../helpers/test-app.js';
import { until } from '../helpers/until.js';
import { closedPort, deleteKeys, rawRedis, REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();
const quiet: RedisLog = { warn: () => undefined, info: () => undefined };

describe.skipIf(!redisUp)('RedisSharedCache', () => {
  let prefix: string;
  let first: RedisConnection;
  let second: RedisConnection;
  let raw: Redis;

  beforeEach(async () => {
    prefix = uniquePrefix();
    first = new RedisConnection({ url: REDIS_TEST_URL, log: quiet, name: 'test-a' });
    second = new RedisConnection({ url: REDIS_TEST_URL, log: quiet, name: 'test-b' });
    raw = rawRedis();
    await Promise.all([RedisConnection.whenReady(first.commands, 2000), RedisConnection.whenReady(second.commands, 2000)]);
  });
  afterEach(async () => {
    await deleteKeys(raw, prefix);
    raw.disconnect();
    await first.close();
    await second.close();
  });

  it('gives every instance what one of them stored, as JSON, under {prefix}cache:{key} with the TTL', async () => {
    const a = new RedisSharedCache(first, prefix, quiet);
    const b = new RedisSharedCache(second, prefix, quiet);
    const answer = { status: 'found', record: { make: 'FORD', year: 2019, tags: ['a', null], ok: true } };
    await a.set('dvla:AB12CDE', answer, 60);
    expect(await b.get('dvla:AB12CDE')).toEqual(answer);
    expect(await raw.get(`${prefix}cache:dvla:AB12CDE`)).toBe(JSON.stringify(answer));
    const ttl = await raw.ttl(`${prefix}cache:dvla:AB12CDE`);
    expect(ttl).toBeGreaterThan(55);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it('tells a miss (undefined) from a stored null, and forgets a deleted key', async () => {
    const cache = new RedisSharedCache(first, prefix, quiet);
    expect(await cache.get('nothing')).toBeUndefined();
    await cache.set('not-found', null, 30);
    expect(await cache.get('not-found')).toBeNull();
    await cache.delete('not-found');
    expect(await cache.get('not-found')).toBeUndefined();
  });

  it('lets an entry expire after its TTL', async () => {
    const cache = new RedisSharedCache(first, prefix, quiet);
    // Redis counts TTLs in real time: read the TTL back rather than race it, then wait for the expiry with no deadline.
    await cache.set('long', { v: 1 }, 30);
    expect(await cache.get('long')).toEqual({ v: 1 });
    const ttl = await raw.ttl(`${prefix}cache:long`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30);
    await cache.set('short', { v: 1 }, 1);
    await until(async () => (await cache.get('short')) === undefined, 100);
  });

  it('does not store undefined or values larger than MAX_VALUE_BYTES, and rejects a TTL that is not a whole number >= 1', async () => {
    const cache = new RedisSharedCache(first, prefix, quiet);
    await cache.set('undefined', undefined, 30);
    await cache.set('huge', 'x'.repeat(MAX_VALUE_BYTES + 1), 30);
    expect(await raw.exists(`${prefix}cache:undefined`, `${prefix}cache:huge`)).toBe(0);
    await expect(cache.set('k', 1, 0)).rejects.toThrow(RangeError);
    await expect(cache.set('k', 1, 1.5)).rejects.toThrow(RangeError);
  });

  it('reads text that is not JSON as a miss', async () => {
    await raw.set(`${prefix}cache:garbled`, '{"cut sho');
    expect(await new RedisSharedCache(first, prefix, quiet).get('garbled')).toBeUndefined();
  });

  it('keeps deployments with different prefixes apart', async () => {
    await new RedisSharedCache(first, prefix, quiet).set('k', 'mine', 30);
    expect(await new RedisSharedCache(second, `${prefix}other:`, quiet).get('k')).toBeUndefined();
  });

  it('is what the services expose as sharedCache when REDIS_URL is set, and absent without it', async () => {
    const withRedis = await createTestApp({ REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: prefix });
    const without = await createTestApp();
    try {
      const cache = withRedis.services.sharedCache;
      expect(cache).toBeDefined();
      await cache?.set('wired', { yes: true }, 30);
      expect(await new RedisSharedCache(first, prefix, quiet).get('wired')).toEqual({ yes: true });
      expect(without.services.sharedCache).toBeUndefined();
    } finally {
      await withRedis.close();
      await without.close();
    }
  });
});

describe('RedisSharedCache while Redis is unreachable', () => {
  it('misses on get and does nothing on set, at once and without throwing, and warns once', async () => {
    const warnings: string[] = [];
    const log: RedisLog = { warn: (message) => warnings.push(message), info: () => undefined };
    const connection = new RedisConnection({ url: `redis://127.0.0.1:${await closedPort()}`, log, name: 'test' });
    try {
      await RedisConnection.whenReady(connection.commands, 2000);
      const cache = new RedisSharedCache(connection, 'x:', log);
      // "At once": settled before the event loop's next turn, so no reply, reconnection or timer
      // was waited for, whatever the machine's speed.
      let settled = false;
      const calls = (async () => {
        await cache.set('k', { v: 1 }, 30);
        expect(await cache.get('k')).toBeUndefined();
        await cache.delete('k');
        settled = true;
      })();
      await nextTurn();
      expect(settled).toBe(true);
      await calls;
      expect(warnings.filter((w) => w.startsWith('The shared cache in Redis failed'))).toHaveLength(1);
    } finally {
      await connection.close();
    }
  });
});
