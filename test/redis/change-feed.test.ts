import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accountChannel, RedisAccountChangeFeed } from '../../src/redis/redis-account-change-feed.js';
import { RedisConnection, type RedisLog } from '../../src/redis/redis-connection.js';
import { until } from '../helpers/until.js';
import { rawRedis, REDIS_TEST_URL, redisAvailable, uniquePrefix } from './redis-harness.js';

const redisUp = await redisAvailable();
const quiet: RedisLog = { warn: () => undefined, info: () => undefined };

describe.skipIf(!redisUp)('RedisAccountChangeFeed', () => {
  let name: string;
  let connection: RedisConnection;
  let feed: RedisAccountChangeFeed;
  let channel: string;
  let raw: Redis;
  let heard: string[];

  beforeEach(() => {
    name = `vltest-${randomBytes(4).toString('hex')}`;
    channel = accountChannel(uniquePrefix());
    connection = new RedisConnection({ url: REDIS_TEST_URL, log: quiet, name });
    feed = new RedisAccountChangeFeed(connection, channel, quiet);
    heard = [];
    feed.onChange((username) => heard.push(username));
    raw = rawRedis();
  });
  afterEach(async () => {
    raw.disconnect();
    await connection.close();
  });

  it('is live with generation 1 once started, and hands every message on the channel to its handler', async () => {
    expect(feed.live).toBe(false);
    expect(await feed.start(2000)).toBe(true);
    expect(feed.live).toBe(true);
    expect(feed.generation).toBe(1);
    await raw.publish(channel, 'acme');
    await raw.publish(`${channel}-other`, 'nobody');
    await feed.publish('beta');
    await until(() => Promise.resolve(heard.length >= 2));
    expect(heard).toEqual(['acme', 'beta']);
  });

  it('goes not-live when its connection drops, then subscribes again with a new generation and hears changes again', async () => {
    await feed.start(2000);
    const clients = (await raw.client('LIST')) as string;
    const line = clients.split('\n').find((l) => l.includes(` name=${name}-subscriber `));
    const id = line ? /(?:^|\s)id=(\d+)/.exec(line)?.[1] : undefined;
    expect(id, 'the subscriber connection is in CLIENT LIST under its name').toBeDefined();
    await raw.client('KILL', 'ID', id ?? '');
    // Wait for the new subscription, not for the not-live moment in between: polling could miss it.
    await until(() => Promise.resolve(feed.live && feed.generation === 2));
    await raw.publish(channel, 'after');
    await until(() => Promise.resolve(heard.includes('after')));
  });
});
