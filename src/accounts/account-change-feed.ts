import type { Storage } from '../storage/create-database.js';

/** The message that stands for "every account": drop the whole cache. */
export const ALL_ACCOUNTS = '*';

/**
 * Account changes announced between instances (issue 5; Redis pub/sub in src/redis/). Whoever
 * changes an account (the server's AccountService, the CLI) publishes its username; every
 * instance subscribed drops that account from its AccountCache.
 */
export interface AccountChangeFeed {
  /**
   * Tells every subscribed instance (this one included) that the account changed. Resolves once
   * sent, or once sending failed (reported to the feed's logger): the change itself is committed
   * already, and instances see it anyway when their cache entries expire.
   */
  publish(username: string): Promise<void>;
  /** Registers the handler of received changes: a username, or ALL_ACCOUNTS. */
  onChange(handler: (username: string) => void): void;
  /** True while this instance is subscribed, so changes published elsewhere reach it promptly. */
  readonly live: boolean;
  /**
   * Changes each time the subscription is (re)established. Changes published while it was down
   * were missed, so everything cached before must be dropped.
   */
  readonly generation: number;
}

/**
 * How long an account stays cached on PostgreSQL while the change feed is live. Changes made
 * through AccountService (server or CLI with REDIS_URL) arrive within milliseconds; this bound only
 * matters for changes nobody published (a CLI run without REDIS_URL, SQL typed by hand).
 */
export const LIVE_FEED_MAX_AGE_MS = 30_000;

/**
 * The freshness counter of the account cache (AccountCache drops everything when it changes).
 *
 * A storage counter that moves on every commit (SQLite's data_version) already changes the moment
 * another connection or process commits, so it stays the signal there; the feed only adds prompt
 * per-account drops. A clock-bucket counter (PostgreSQL: no cheap change signal exists) is, while
 * the feed is live, replaced by the feed's generation plus a LIVE_FEED_MAX_AGE_MS bucket counted from when the subscription
 * started; when the feed is down, the one-second bucket is back.
 *
 * Live values are negative so they never equal a storage counter value. `nowMs` is the time the
 * live bucket is counted on (the app's clock, so tests decide when it ends).
 */
export function accountCacheCounter(storage: Pick<Storage, 'changeSignal' | 'changeCounter'>, feed: AccountChangeFeed | undefined, nowMs: () => number = () => performance.now()): () => number {
  if (feed === undefined || storage.changeSignal === 'every-commit') return storage.changeCounter;
  let generation = -1;
  let since = 0;
  return () => {
    if (!feed.live) return storage.changeCounter();
    if (feed.generation !== generation) {
      generation = feed.generation;
      since = nowMs();
    }
    const bucket = Math.floor((nowMs() - since) / LIVE_FEED_MAX_AGE_MS);
    // Buckets wrap after 2^20 (a year of 30 s buckets); consecutive values always differ.
    return -1 - (generation * 2 ** 20 + (bucket % 2 ** 20));
  };
}
