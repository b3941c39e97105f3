import { InProcessThrottleCounters } from '../users/login-throttle.js';
import { InProcessRateCounters } from '../rate-limit/in-process-rate-counters.js';
import { accountChannel, RedisAccountChangeFeed } from './redis-account-change-feed.js';
import { RedisConnection, type RedisLog } from './redis-connection.js';
import { RedisRateCounters } from './redis-rate-counters.js';
import { RedisThrottleCounters } from './redis-throttle-counters.js';
import { RedisSharedCache } from './shared-cache.js';

export interface RedisSettings {
  /** `REDIS_URL`. */
  readonly url: string;
  /** `REDIS_KEY_PREFIX`: starts every key and channel name, so deployments can share a Redis. */
  readonly keyPrefix: string;
}

export interface RedisOpenOptions {
  readonly log: RedisLog;
  /** `vehicle-lookup` for the server, `vehicle-lookup-cli` for the CLI (CLIENT LIST). */
  readonly name: string;
  /**
   * true (the server): connect at once, wait for it, subscribe to account changes. false (the CLI):
   * only publish, connecting on the first publish, so commands that change no account never touch
   * Redis.
   */
  readonly subscribe: boolean;
  /** Told each time a rate-limited request was counted in-process because Redis did not answer. */
  readonly onRateLimitFallback?: () => void;
  /** Told each time a login attempt or admin API request was counted in-process because Redis did not answer. */
  readonly onThrottleFallback?: () => void;
  /** How long start-up waits for Redis (default STARTUP_WAIT_MS); tests pass a bound they never reach. */
  readonly startupWaitMs?: number;
}

/** What the rest of the service gets from Redis (issue 5). */
export interface RedisServices {
  readonly connection: RedisConnection;
  readonly accountChanges: RedisAccountChangeFeed;
  readonly rateCounters: RedisRateCounters;
  /** The login and admin/console request throttles' counts (issue 16). */
  readonly throttleCounters: RedisThrottleCounters;
  readonly sharedCache: RedisSharedCache;
  close(): Promise<void>;
}

/** How long start-up waits for Redis; an unreachable Redis is reported and start-up goes on. */
const STARTUP_WAIT_MS = 2000;

/**
 * Connects to Redis and waits (at most STARTUP_WAIT_MS) until the connections are ready, so the
 * first requests already share counters and receive account changes. Never fails because Redis is
 * unreachable: everything falls back (in-process counters, storage-bounded account cache, cache
 * misses) and reconnects in the background.
 */
export async function openRedis(settings: RedisSettings, options: RedisOpenOptions): Promise<RedisServices> {
  const connection = new RedisConnection({ url: settings.url, log: options.log, name: options.name, lazy: !options.subscribe });
  const accountChanges = new RedisAccountChangeFeed(connection, accountChannel(settings.keyPrefix), options.log);
  const rateCounters = new RedisRateCounters(connection, settings.keyPrefix, new InProcessRateCounters(), options.log, options.onRateLimitFallback);
  const throttleCounters = new RedisThrottleCounters(connection, settings.keyPrefix, new InProcessThrottleCounters(() => Date.now()), options.log, options.onThrottleFallback);
  const sharedCache = new RedisSharedCache(connection, settings.keyPrefix, options.log);
  const wait = options.startupWaitMs ?? STARTUP_WAIT_MS;
  if (options.subscribe) await Promise.all([RedisConnection.whenReady(connection.commands, wait), accountChanges.start(wait)]);
  return { connection, accountChanges, rateCounters, throttleCounters, sharedCache, close: () => connection.close() };
}
