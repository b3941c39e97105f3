import { randomBytes } from 'node:crypto';
import { OutageLog, type RedisConnection, type RedisLog } from './redis-connection.js';

/**
 * The answer of `SharedCache.claim`: this instance holds the key's lock (and must release it when
 * its answer is stored, or at once when it has none), another instance holds it (wait for its
 * answer in the cache), or Redis did not answer (go on alone, as without Redis).
 */
export type FlightClaim = { readonly role: 'leader'; readonly release: () => Promise<void> } | { readonly role: 'follower' } | { readonly role: 'alone' };

/**
 * A cache shared by every instance, for answers that are expensive to get again (upstream
 * answers, in front of the upstream_cache table). Values are JSON: what `set` stores is what
 * `JSON.stringify` makes of it, and `get` returns `JSON.parse` of that, unchecked; callers validate
 * what they read, as they would any stored data.
 *
 * It never throws and never waits long: Redis down or slow is a miss on `get` and a no-op on `set`
 * (logged once per outage), so the caller goes on to its next source.
 */
export interface SharedCache {
  /** The value stored under `key`, or undefined when there is none (or Redis did not answer). */
  get(key: string): Promise<unknown>;
  /** Stores `value` under `key` for `ttlSeconds` (a whole number >= 1). `undefined` is not stored. */
  set(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** Removes `key` (a no-op when absent). */
  delete(key: string): Promise<void>;
  /**
   * Takes the single-flight lock of `key` for `leaseMs` (a whole number >= 1) if no instance holds
   * it: one instance asks an upstream while the others wait for its answer to appear under the
   * same key (src/providers/upstream/shared-flight.ts). The lease ends the lock of an instance
   * that died holding it; `release` ends it early and only ever removes this claim's own lock.
   */
  claim(key: string, leaseMs: number): Promise<FlightClaim>;
}

/** Deletes the lock only when it is still this claim's (its token), so a late release never frees another's. */
const RELEASE_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** Values larger than this (as JSON text) are not stored: the cache is for answers, not blobs. */
export const MAX_VALUE_BYTES = 512 * 1024;

/**
 * SharedCache in Redis: keys `{REDIS_KEY_PREFIX}cache:{key}`, SET ... EX for the TTL; locks
 * `{REDIS_KEY_PREFIX}flight:{key}`, SET ... NX PX with a random token, deleted by a script that
 * checks the token.
 */
export class RedisSharedCache implements SharedCache {
  private readonly outage: OutageLog;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keyPrefix: string,
    log: RedisLog,
  ) {
    this.outage = new OutageLog(log, 'The shared cache in Redis', 'lookups skip it');
  }

  async get(key: string): Promise<unknown> {
    const text = await this.attempt((client) => client.get(this.key(key)));
    if (text === undefined || text === null) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // Not ours, or cut short: treat as a miss and let the next set replace it.
      return undefined;
    }
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) throw new RangeError(`ttlSeconds must be a whole number >= 1 (got ${ttlSeconds})`);
    const text = JSON.stringify(value) as string | undefined;
    if (text === undefined || Buffer.byteLength(text) > MAX_VALUE_BYTES) return;
    await this.attempt((client) => client.set(this.key(key), text, 'EX', ttlSeconds));
  }

  async delete(key: string): Promise<void> {
    await this.attempt((client) => client.del(this.key(key)));
  }

  async claim(key: string, leaseMs: number): Promise<FlightClaim> {
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new RangeError(`leaseMs must be a whole number >= 1 (got ${leaseMs})`);
    const lock = `${this.keyPrefix}flight:${key}`;
    const token = randomBytes(12).toString('hex');
    const taken = await this.attempt((client) => client.set(lock, token, 'PX', leaseMs, 'NX'));
    if (taken === 'OK') {
      return {
        role: 'leader',
        release: async () => {
          await this.attempt((client) => client.eval(RELEASE_SCRIPT, 1, lock, token));
        },
      };
    }
    return taken === null ? { role: 'follower' } : { role: 'alone' };
  }

  private key(key: string): string {
    return `${this.keyPrefix}cache:${key}`;
  }

  private async attempt<T>(command: (client: RedisConnection['commands']) => Promise<T>): Promise<T | undefined> {
    const client = this.connection.commands;
    if (client.status !== 'ready') {
      this.outage.failed(new Error(`Redis connection is ${client.status}`));
      return undefined;
    }
    try {
      const result = await command(client);
      this.outage.succeeded();
      return result;
    } catch (error) {
      this.outage.failed(error);
      return undefined;
    }
  }
}
