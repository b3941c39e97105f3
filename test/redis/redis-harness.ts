import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import type { Clock } from '../../src/shared/clock.js';
import { SQLITE_ONLY } from '../helpers/engines.js';

/** Redis for tests: the machine's server, overridable with REDIS_TEST_URL. */
export const REDIS_TEST_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

let reachable: Promise<boolean> | undefined;

/**
 * Whether Redis answers; with CI=true an unreachable server fails the run instead. A SQLite-only
 * run (TEST_ENGINES=sqlite, test/helpers/engine-switch.ts) never asks: Redis is off for it.
 */
export function redisAvailable(): Promise<boolean> {
  if (SQLITE_ONLY) return Promise.resolve(false);
  reachable ??= (async () => {
    const client = new Redis(REDIS_TEST_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 3000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return true;
    } catch (error) {
      if (process.env.CI === 'true') throw new Error(`Redis is required in CI but ${REDIS_TEST_URL} is unreachable: ${String(error)}`);
      console.warn(`\n*** SKIPPED: Redis tests, ${REDIS_TEST_URL} is unreachable (${String(error)}) ***\n`);
      return false;
    } finally {
      client.disconnect();
    }
  })();
  return reachable;
}

/** A key prefix of its own for one test, so parallel tests (and stale keys) never meet. */
export function uniquePrefix(): string {
  return `vltest:${randomBytes(5).toString('hex')}:`;
}

/** A plain client for looking at (and publishing to) the test Redis directly. */
export function rawRedis(): Redis {
  const client = new Redis(REDIS_TEST_URL, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  return client;
}

/** Deletes every key under `prefix` (day counters would otherwise live for a day). */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** A TCP port with nothing listening on it: a Redis that is down. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A clock the test moves by hand, so fixed windows start and end where the test says. */
export class ManualClock implements Clock {
  constructor(private ms: number) {}
  now(): Date {
    return new Date(this.ms);
  }
  set(iso: string): void {
    this.ms = Date.parse(iso);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export const VEHICLE = { Description: 'RENAULT CLIO', CarMake: { CurrentTextValue: 'RENAULT' }, CarModel: { CurrentTextValue: 'CLIO' } };
export const FRANCE_RECORD = { operation: 'CheckFrance', key: { RegistrationNumber: 'AB123CD' }, vehicle: VEHICLE };
export const FRANCE_PATH = '/api/json.aspx/CheckFrance/AB123CD';
