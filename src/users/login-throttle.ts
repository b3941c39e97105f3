import { createHash } from 'node:crypto';

/** One key's count in its running window. */
export interface WindowCount {
  readonly count: number;
  /** Milliseconds until the window ends; the count starts again from zero after it. */
  readonly endsInMs: number;
}

/**
 * Where the admin and console throttles count (issue 16): one count per key, in a window that
 * starts with the key's first count and lasts `windowMs` (a fixed window per key, like
 * LoginThrottle's before they were shared). Three homes, chosen once in createServices:
 * - InProcessThrottleCounters: this process only (the request limit without Redis; the fallback
 *   while Redis does not answer);
 * - StoreThrottleCounters (store-throttle-counters.ts): the store's `login_throttle` table, shared
 *   by every instance on one database (failed logins without Redis);
 * - RedisThrottleCounters (src/redis/redis-throttle-counters.ts): Redis, shared by every instance.
 */
export interface ThrottleCounters {
  /** Adds one to `key`, starting a window of `windowMs` when none is running; answers the new count. */
  add(key: string, windowMs: number): Promise<WindowCount>;
  /** Takes one off `key` in its running window, never below zero; nothing when no window runs. */
  subtract(key: string): Promise<void>;
  /** Forgets `key`. */
  clear(key: string): Promise<void>;
}

/** Keys counted in one process at most; past it, ended windows are dropped first. */
const MAX_KEYS = 100_000;

/** Counts in this process: the request limit without Redis, and the fallback while Redis is down. */
export class InProcessThrottleCounters implements ThrottleCounters {
  private readonly counts = new Map<string, { count: number; endsAt: number }>();

  constructor(private readonly now: () => number) {}

  add(key: string, windowMs: number): Promise<WindowCount> {
    const now = this.now();
    let entry = this.counts.get(key);
    if (!entry || entry.endsAt <= now) {
      if (!entry && this.counts.size >= MAX_KEYS) this.prune(now);
      entry = { count: 0, endsAt: now + windowMs };
      this.counts.set(key, entry);
    }
    entry.count += 1;
    return Promise.resolve({ count: entry.count, endsInMs: entry.endsAt - now });
  }

  subtract(key: string): Promise<void> {
    const entry = this.counts.get(key);
    if (entry && entry.endsAt > this.now() && entry.count > 0) entry.count -= 1;
    return Promise.resolve();
  }

  clear(key: string): Promise<void> {
    this.counts.delete(key);
    return Promise.resolve();
  }

  /** Bounded: a flood of distinct names cannot grow the map without end. */
  private prune(now: number): void {
    for (const [key, entry] of this.counts) if (entry.endsAt <= now) this.counts.delete(key);
    if (this.counts.size >= MAX_KEYS) this.counts.clear();
  }
}

export interface LoginLimits {
  /** Failed logins per user name in a window before further attempts are refused. */
  readonly perUser: number;
  /** Failed logins per client address in a window. */
  readonly perAddress: number;
  readonly windowMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = Object.freeze({ perUser: 5, perAddress: 20, windowMs: 15 * 60_000 });

/** Whole seconds to wait, at least 1. */
const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * Login throttling (issue 16): after too many failed logins for one user name or from one address
 * within the window, further attempts are refused until the window ends, whether the password is
 * right or not. One throttle serves the admin API, the account API and the console, so a door
 * does not reset another's count; the counts live where createServices put them (shared by the
 * instances through Redis or the store).
 *
 * An attempt is counted before its password is checked, and given back when it succeeds: a
 * password check takes tens of milliseconds (scrypt), and counting only after it would let many
 * attempts sent at once all pass the check before the first failure is counted. The address is
 * counted first, so an address already refused adds nothing to the user names it tries (it cannot
 * lock out a user it has no attempts left for).
 */
export class LoginThrottle {
  constructor(
    private readonly counters: ThrottleCounters,
    private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
  ) {}

  /** Counts one attempt; answers the seconds to wait when it is refused, 0 when it may go ahead. */
  async attempt(user: string, address: string): Promise<number> {
    const { windowMs, perAddress, perUser } = this.limits;
    const byAddress = await this.counters.add(addressKey(address), windowMs);
    if (byAddress.count > perAddress) return seconds(byAddress.endsInMs);
    const byUser = await this.counters.add(userKey(user), windowMs);
    return byUser.count > perUser ? seconds(byUser.endsInMs) : 0;
  }

  /** The attempt logged in: the user's failures are forgotten and the address gets its attempt back. */
  async succeeded(user: string, address: string): Promise<void> {
    await Promise.all([this.counters.clear(userKey(user)), this.counters.subtract(addressKey(address))]);
  }
}

const requestKey = (surface: string, caller: string): string => `req:${surface}:${createHash('sha256').update(caller).digest('base64url').slice(0, 22)}`;
const userKey = (user: string): string => `login:u:${user.toLowerCase()}`;
const addressKey = (address: string): string => `login:a:${address}`;

/** The throttles of the admin and account APIs and the console, built once by createServices. */
export interface Throttles {
  readonly login: LoginThrottle;
  readonly requests: RequestLimiter;
}

/**
 * A request limit per caller and minute for the admin and account APIs and the console (per
 * session, token or address). The counts live where createServices put them: Redis when
 * configured, else this process (each instance then allows the limit on its own).
 */
export class RequestLimiter {
  constructor(
    private readonly counters: ThrottleCounters,
    readonly perMinute: number,
  ) {}

  /**
   * Counts one request of `caller` on `surface` (`admin`, `account`, `console`: each has its own
   * budget); answers the seconds to wait when it is over the limit, 0 when it may go ahead. The
   * caller (a session id or a token) is hashed: no secret becomes a key in Redis.
   */
  async take(surface: string, caller: string): Promise<number> {
    const { count, endsInMs } = await this.counters.add(requestKey(surface, caller), 60_000);
    return count > this.perMinute ? seconds(endsInMs) : 0;
  }

  /** Gives back one request taken from `caller` on `surface` (a credential that proved live). */
  giveBack(surface: string, caller: string): Promise<void> {
    return this.counters.subtract(requestKey(surface, caller));
  }
}
