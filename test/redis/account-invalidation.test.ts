import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accountChannel } from '../../src/redis/redis-account-change-feed.js';
import { cli } from '../cli/cli-harness.js';
import { freshPostgresDatabase, postgresAvailable } from '../helpers/engines.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { until } from '../helpers/until.js';
import { deleteKeys, FRANCE_PATH, FRANCE_RECORD, ManualClock, rawRedis, REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();
const postgresUp = await postgresAvailable();

/**
 * Two instances on one PostgreSQL database, as in a scale-out: there the account cache has no
 * change signal from the store (only a clock bucket), so only the Redis feed tells B about A's
 * changes promptly. Both read a clock that stands still, so while the feed is live B's cached
 * account never expires on its own: a wait for B to see a change (no deadline, until.ts) ends
 * only through the feed, however slow the machine.
 */
describe.skipIf(!redisUp || !postgresUp)('account changes across two instances (PostgreSQL + Redis)', () => {
  let a: TestApp;
  let b: TestApp;
  let env: Record<string, string>;
  let dropDatabase: () => Promise<void>;
  let redis: Redis;
  let key: string;

  const lookupOnB = async (apiKey = key): Promise<number> =>
    (await b.app.inject({ url: FRANCE_PATH, headers: { authorization: b.basic('acme', apiKey) } })).statusCode;

  beforeEach(async () => {
    const database = await freshPostgresDatabase();
    dropDatabase = database.drop;
    env = { DATABASE_URL: database.url, REDIS_URL: REDIS_TEST_URL, REDIS_KEY_PREFIX: uniquePrefix() };
    const clock = new ManualClock(Date.now());
    a = await createTestApp(env, clock);
    b = await createTestApp(env, clock);
    redis = rawRedis();
    await a.importRecords([FRANCE_RECORD]);
    key = await a.account('acme', 100);
    // B has the account cached from here on.
    expect(await lookupOnB()).toBe(200);
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await deleteKeys(redis, env.REDIS_KEY_PREFIX ?? '');
    redis.disconnect();
    await dropDatabase();
  });

  it('refuses on instance B, told through the feed, after instance A disables the account', async () => {
    await a.services.accounts.setDisabled('acme', true);
    await until(async () => (await lookupOnB()) === 500);
    const refused = await b.app.inject({ url: FRANCE_PATH, headers: { authorization: b.basic('acme', key) } });
    expect(refused.body).toBe('Account acme is disabled');

    await a.services.accounts.setDisabled('acme', false);
    await until(async () => (await lookupOnB()) === 200);
  });

  it('stops accepting the old key on B, told through the feed, after A rotates it, and accepts the new one', async () => {
    const fresh = await a.services.accounts.rotateKey('acme');
    await until(async () => (await lookupOnB(key)) === 401);
    expect(await lookupOnB(fresh)).toBe(200);
  });

  it('announces every kind of account change on the channel: disable, enable, key, credits, API-key requirement, limits', async () => {
    const listener = rawRedis();
    const heard: string[] = [];
    listener.on('message', (_channel: string, message: string) => heard.push(message));
    await listener.subscribe(accountChannel(env.REDIS_KEY_PREFIX ?? ''));
    try {
      const accounts = a.services.accounts;
      await accounts.setDisabled('acme', true);
      await accounts.setDisabled('acme', false);
      await accounts.rotateKey('acme');
      await accounts.grantCredits({ account: 'acme', amount: 5 });
      await accounts.setRequireApiKey('acme', true);
      await accounts.setRateLimits('acme', { perSecond: 3 });
      await until(() => Promise.resolve(heard.length >= 6));
      expect(heard).toEqual(['acme', 'acme', 'acme', 'acme', 'acme', 'acme']);
    } finally {
      listener.disconnect();
    }
  });

  it('keeps the account cached past the one-second storage bound while the feed is live, and drops it the moment a change is announced', async () => {
    // A change nobody announces (SQL by hand): B keeps its cached copy...
    await sql`update accounts set disabled = 1 where username = 'acme'`.execute(a.services.storage.db);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await lookupOnB()).toBe(200);
    // ...until the change is announced, as an operator can by hand.
    await redis.publish(accountChannel(env.REDIS_KEY_PREFIX ?? ''), 'acme');
    await until(async () => (await lookupOnB()) === 500);
  });

  it("drops every cached account on '*'", async () => {
    await sql`update accounts set disabled = 1 where username = 'acme'`.execute(a.services.storage.db);
    await redis.publish(accountChannel(env.REDIS_KEY_PREFIX ?? ''), '*');
    await until(async () => (await lookupOnB()) === 500);
  });

  it('announces changes made with the CLI (a process of its own) when REDIS_URL is set', async () => {
    const run = await cli(env, ['accounts', 'disable', 'acme']);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    await until(async () => (await lookupOnB()) === 500);
  });

  it('applies rate limits set on A to requests on B at once', async () => {
    await a.services.accounts.setRateLimits('acme', { perDay: 1 });
    // The per-day counter starts with the limit: one more lookup passes, the next is refused.
    await until(async () => (await lookupOnB()) === 429);
  });
});

describe.skipIf(!redisUp)('the CLI and an unreachable Redis', () => {
  it('still makes the change, and warns that other instances see it only when their cache expires', async () => {
    const t = await createTestApp();
    try {
      await t.account('acme', 1);
      const run = await cli({ DATA_DIR: t.dataDir, LOG_LEVEL: 'silent', REDIS_URL: 'redis://127.0.0.1:1' }, ['accounts', 'disable', 'acme']);
      expect(run.code).toBe(0);
      expect(run.out).toBe('Account acme disabled.');
      expect(run.err).toMatch(/warning: could not announce the change of account acme on Redis/);
      expect((await t.services.accounts.show('acme')).disabled).toBe(true);
    } finally {
      await t.close();
    }
  });
});
